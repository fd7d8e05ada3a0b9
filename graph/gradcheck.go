package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/webtensor/webtensor/tensor"
)

// GradCheckOptions tune GradCheck; the zero value is the defaults.
type GradCheckOptions struct {
	// Step is the finite-difference step h (default 1e-6): the truncation
	// error of central differences is O(h²), the rounding error about
	// 1e-16·|f|/h.
	Step float64
	// Atol and Rtol bound |analytic − numeric| ≤ Atol + Rtol·|numeric|
	// (defaults 1e-6 and 1e-5).
	Atol, Rtol float64
	// SecondOrder also checks the gradient of the gradient, taken with
	// CreateGraph, against finite differences of the first-order
	// gradient: Backward functions written with this package's
	// operations are differentiable again.
	SecondOrder bool
	// Seed draws the random weights that reduce a non-scalar output to a
	// scalar (and the second order's weights on the gradients).
	Seed uint64
}

// GradCheck compares the gradients the graph computes for f with central
// finite differences, in float64, as torch.autograd.gradcheck: for random
// weights w it differentiates L = Σ w·f(inputs) with respect to every input
// that requires a gradient and compares each element of the gradient with
// (L(x+h) − L(x−h)) / 2h. Inputs made by Param are checked; the others
// (Constant: targets, indices) are passed through. Checked inputs must be
// float64 tensors (the CPU holds them), and f's output float64 too.
//
// f receives fresh values on every call (GradCheck calls it 2n+1 times for
// n checked elements, and more with SecondOrder), which it must not
// release; the caller's inputs are only read. The error names the input,
// the element and both values of the first mismatch; misuse inside f
// (a panic with a *tensor.Error) is returned as an error too.
func GradCheck(f func(inputs []*Value) *Value, inputs []*Value, o GradCheckOptions) (err error) {
	if o.Step == 0 {
		o.Step = 1e-6
	}
	if o.Atol == 0 {
		o.Atol = 1e-6
	}
	if o.Rtol == 0 {
		o.Rtol = 1e-5
	}
	if cerr := tensor.Catch(func() { err = gradCheck(f, inputs, o) }); cerr != nil {
		return cerr
	}
	return err
}

// checker holds GradCheck's inputs on the host: the checked ones as
// float64s, which the finite differences perturb.
type checker struct {
	f       func([]*Value) *Value
	inputs  []*Value
	data    [][]float64 // nil for an input passed through
	checked []int       // indices of the checked inputs
	o       GradCheckOptions
}

func gradCheck(f func([]*Value) *Value, inputs []*Value, o GradCheckOptions) error {
	const op = "GradCheck"
	c := &checker{f: f, inputs: inputs, data: make([][]float64, len(inputs)), o: o}
	for i, x := range inputs {
		if x == nil {
			continue
		}
		x.checkLive(op)
		if !x.RequiresGrad() {
			continue
		}
		if x.DType() != tensor.Float64 {
			return fmt.Errorf("graph.%s: input %d %v has dtype %v; finite differences need float64", op, i, x.t, x.DType())
		}
		d, err := x.Float64s()
		if err != nil {
			return fmt.Errorf("graph.%s: reading input %d: %w", op, i, err)
		}
		c.data[i] = d
		c.checked = append(c.checked, i)
	}
	if len(c.checked) == 0 {
		return fmt.Errorf("graph.%s: no input requires a gradient (make the ones to check with Param)", op)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	n, err := c.outputLen()
	if err != nil {
		return err
	}
	seed := make([]float64, n)
	for i := range seed {
		seed[i] = rng.Float64()*2 - 1
	}
	analytic, err := c.vjp(seed, nil)
	if err != nil {
		return err
	}
	if err := c.compare("", analytic, func() (float64, error) { return c.loss(seed) }); err != nil {
		return err
	}
	if !o.SecondOrder {
		return nil
	}
	seed2 := make([][]float64, len(c.checked))
	for k, i := range c.checked {
		seed2[k] = make([]float64, len(c.data[i]))
		for j := range seed2[k] {
			seed2[k][j] = rng.Float64()*2 - 1
		}
	}
	hessian, err := c.vjp(seed, seed2)
	if err != nil {
		return err
	}
	return c.compare("second order: ", hessian, func() (float64, error) {
		g, err := c.vjp(seed, nil)
		if err != nil {
			return 0, err
		}
		total := 0.0
		for k := range g {
			total += dot64(seed2[k], g[k])
		}
		return total, nil
	})
}

// compare perturbs each checked element by ±Step, evaluates at both
// points and compares the central difference with analytic.
func (c *checker) compare(what string, analytic [][]float64, eval func() (float64, error)) error {
	h := c.o.Step
	for k, i := range c.checked {
		d := c.data[i]
		for j := range d {
			x := d[j]
			d[j] = x + h
			up, err := eval()
			d[j] = x - h
			var down float64
			if err == nil {
				down, err = eval()
			}
			d[j] = x
			if err != nil {
				return err
			}
			numeric := (up - down) / (2 * h)
			a := analytic[k][j]
			if diff := math.Abs(a - numeric); !(diff <= c.o.Atol+c.o.Rtol*math.Abs(numeric)) {
				return fmt.Errorf("graph.GradCheck: %sinput %d, element %d %v: analytic gradient %.10g, finite differences %.10g (|Δ| = %.3g > %.3g)",
					what, i, j, unravel(j, c.inputs[i].t.Shape()), a, numeric, diff, c.o.Atol+c.o.Rtol*math.Abs(numeric))
			}
		}
	}
	return nil
}

// build makes f's arguments from the host data: checked inputs as fresh
// leaves (Param when grad), the others as views of the caller's values.
func (c *checker) build(grad bool) []*Value {
	in := make([]*Value, len(c.inputs))
	for i, x := range c.inputs {
		switch {
		case x == nil:
		case c.data[i] != nil:
			t := tensor.FromFloat64(x.Device(), c.data[i], x.t.Shape()...)
			if grad {
				in[i] = Param(t)
			} else {
				in[i] = Constant(t)
			}
		default:
			in[i] = x.Detach()
		}
	}
	return in
}

// call runs f on in and checks its output.
func (c *checker) call(in []*Value) (*Value, error) {
	y := c.f(in)
	if y == nil {
		return nil, fmt.Errorf("graph.GradCheck: f returned nil")
	}
	if y.DType() != tensor.Float64 {
		y.Release()
		return nil, fmt.Errorf("graph.GradCheck: f returned %v; finite differences need float64", y.t)
	}
	return y, nil
}

func (c *checker) outputLen() (int, error) {
	s := NewScope(NoGrad)
	defer s.Close()
	y, err := c.call(inScopeOf(s, c.build(false)))
	if err != nil {
		return 0, err
	}
	defer y.Release()
	return y.Len(), nil
}

// loss evaluates Σ seed·f at the current data, recording nothing.
func (c *checker) loss(seed []float64) (float64, error) {
	s := NewScope(NoGrad)
	defer s.Close()
	y, err := c.call(inScopeOf(s, c.build(false)))
	if err != nil {
		return 0, err
	}
	defer y.Release()
	out, err := y.Float64s()
	if err != nil {
		return 0, err
	}
	return dot64(seed, out), nil
}

// vjp returns the gradient of Σ seed·f with respect to each checked input
// at the current data; with seed2 it returns instead the gradient of
// Σ seed2·(that gradient), taken through CreateGraph.
func (c *checker) vjp(seed []float64, seed2 [][]float64) ([][]float64, error) {
	s := NewScope()
	defer s.Close()
	// The fresh leaves are members: f's intermediates join the scope and
	// are released with them, whether or not f releases them.
	in := inScopeOf(s, c.build(true))
	targets := make([]*Value, len(c.checked))
	for k, i := range c.checked {
		targets[k] = in[i]
	}
	y, err := c.call(in)
	if err != nil {
		return nil, err
	}
	defer y.Release() // a member unless f ignored every input
	w := s.Use(Constant(tensor.FromFloat64(y.Device(), seed, y.t.Shape()...)))
	opt := AllowUnused
	if seed2 != nil {
		opt |= CreateGraph
	}
	gs, err := Grad([]*Value{y}, targets, []*Value{w}, opt)
	if err != nil {
		return nil, fmt.Errorf("graph.GradCheck: %w", err)
	}
	for _, g := range gs {
		if g != nil {
			s.Use(g)
		}
	}
	if seed2 != nil {
		// G = Σₖ seed2ₖ·gₖ, differentiated again.
		var total *Value
		for k, g := range gs {
			if g == nil || !g.RequiresGrad() {
				continue // a gradient independent of the inputs
			}
			term := Mul(g, s.Use(Constant(tensor.FromFloat64(g.Device(), seed2[k], g.t.Shape()...)))).Sum(nil, false)
			if total == nil {
				total = term
			} else {
				total = Add(total, term)
			}
		}
		if total == nil {
			gs = make([]*Value, len(targets))
		} else if gs, err = Grad([]*Value{total}, targets, nil, AllowUnused); err != nil {
			return nil, fmt.Errorf("graph.GradCheck: second order: %w", err)
		}
		for _, g := range gs {
			if g != nil {
				s.Use(g)
			}
		}
	}
	res := make([][]float64, len(targets))
	for k, g := range gs {
		if g == nil {
			res[k] = make([]float64, len(c.data[c.checked[k]]))
			continue
		}
		if res[k], err = g.Float64s(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// inScopeOf puts each value of vs in s.
func inScopeOf(s *Scope, vs []*Value) []*Value {
	for _, v := range vs {
		if v != nil {
			s.Use(v)
		}
	}
	return vs
}

func dot64(a, b []float64) float64 {
	total := 0.0
	for i := range a {
		total += a[i] * b[i]
	}
	return total
}

// unravel is flat element j of shape as a multi-index.
func unravel(j int, shape []int) []int {
	idx := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			idx[a] = j % shape[a]
			j /= shape[a]
		}
	}
	return idx
}
