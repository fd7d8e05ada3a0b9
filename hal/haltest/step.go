package haltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// tracked is a value of an update's formula computed in float64 together
// with a first-order bound on how far the same formula evaluated in a
// lower precision may be from it (see stepTol).
type tracked struct{ v, e float64 }

// stepEval evaluates the update formulas with error bounds for one dtype
// and arithmetic.
type stepEval struct {
	u                         float64 // unit roundoff of the dtype computed in
	arithRel, divRel, sqrtRel float64 // each operation's error relative to its result, in units of u
}

// newStepEval is the evaluator for dt on arithmetic ar: stepTol's counts,
// or ar's where those are larger (WGSL's either-neighbour +, −, × and
// 4.5-ulp √).
func newStepEval(ar Arithmetic, dt hal.DType) stepEval {
	return stepEval{
		u:        unitRoundoff(dt),
		arithRel: max(stepTol.Arith, ar.primRel(primRound, dt)),
		divRel:   max(stepTol.DivSqrt, ar.primRel(primDiv, dt)),
		sqrtRel:  max(stepTol.DivSqrt, ar.primRel(primSqrt, dt)),
	}
}

func (c stepEval) exact(x float64) tracked { return tracked{x, 0} }

// scalar is a hyperparameter the kernel rounds to its dtype first.
func (c stepEval) scalar(x float64) tracked { return tracked{x, c.u * math.Abs(x)} }

func (c stepEval) round(x tracked, rel float64) tracked {
	x.e += rel * c.u * math.Abs(x.v)
	return x
}

func (c stepEval) add(a, b tracked) tracked {
	return c.round(tracked{a.v + b.v, a.e + b.e}, c.arithRel)
}

func (c stepEval) mul(a, b tracked) tracked {
	return c.round(tracked{a.v * b.v, math.Abs(a.v)*b.e + math.Abs(b.v)*a.e + a.e*b.e}, c.arithRel)
}

// fma is a·b + c, bounded as a rounded product and a rounded sum, so that
// a device may fuse it or not.
func (c stepEval) fma(a, b, d tracked) tracked { return c.add(c.mul(a, b), d) }

func (c stepEval) div(a, b tracked) tracked {
	q := a.v / b.v
	e := math.Inf(1)
	if m := math.Abs(b.v) - b.e; m > 0 {
		e = (a.e + math.Abs(q)*b.e) / m
	}
	return c.round(tracked{q, e}, c.divRel)
}

// sqrt bounds the error it inherits by the exact spread of √ over [v−e,
// v+e], which stays finite where the derivative does not (v = 0).
func (c stepEval) sqrt(a tracked) tracked {
	r := math.Sqrt(a.v)
	e := math.Max(math.Sqrt(a.v+a.e)-r, r-math.Sqrt(math.Max(a.v-a.e, 0)))
	return c.round(tracked{r, e}, c.sqrtRel)
}

// stepBound counts, in units of u, the error each operation of an update
// may add relative to its result.
type stepBound struct {
	// Arith: +, − and × round correctly (IEEE 754); under WGSL to either
	// neighbour, 2u (newStepEval).
	Arith float64
	// DivSqrt: WGSL allows 2.5 ulp for x/y; IEEE's half an ulp is held to
	// the same. √ inherits 1.0/inverseSqrt(x) under WGSL, 4.5 ulp
	// (newStepEval); an ulp is up to 2u.
	DivSqrt float64
	// Slack multiplies the whole bound, for its second-order terms and
	// a float32 fused multiply-add emulated in float64 (rounded twice).
	Slack float64
}

// stepTol bounds Step. The reference evaluates the update's formula in
// float64 and carries, alongside every intermediate, the first-order
// error bound of evaluating the same formula in the kernel's dtype:
// every hyperparameter is rounded to the dtype once, every operation
// adds its rounding relative to its result, and errors propagate through
// each operation exactly as their derivatives say (|a|·e_b + |b|·e_a for
// a product, the spread of √ over the input's interval, …). That bound is
// the tolerance, so it follows the data: a momentum buffer whose two
// terms cancel may be wrong by u times the terms, not the result; a tiny
// Adam denominator magnifies its numerator's error as it must. A kernel
// that skips a term, swaps β₁ for 1 − β₁, or applies weight decay twice is
// off by orders of magnitude more.
var stepTol = stepBound{Arith: 1, DivSqrt: 5, Slack: 2}

// StepReference computes Step(op, param, grad, state, scale, a) in float64
// and returns the updated param followed by the updated state, with each
// element's allowed error when the kernel computes in dt (hal.Float32,
// hal.Float64, hal.Float16) on any device: the bound is WGSL's, which
// contains IEEE's. scale is nil for none, else one element. Packages
// above hal test their own Step against it.
func StepReference(op hal.Optimizer, a hal.StepArgs, dt hal.DType, param, grad []float64, state [][]float64, scale []float64) (want, tol [][]float64) {
	return stepReference(WGSL, op, a, dt, param, grad, state, scale)
}

// stepReference is StepReference on arithmetic ar.
func stepReference(ar Arithmetic, op hal.Optimizer, a hal.StepArgs, dt hal.DType, param, grad []float64, state [][]float64, scale []float64) (want, tol [][]float64) {
	c := newStepEval(ar, dt)
	n := len(param)
	want, tol = make([][]float64, 1+len(state)), make([][]float64, 1+len(state))
	for k := range want {
		want[k], tol[k] = make([]float64, n), make([]float64, n)
	}
	out := make([]tracked, 1+len(state))
	for i := range n {
		for k := range out {
			if k == 0 {
				out[k] = c.exact(param[i])
			} else {
				out[k] = c.exact(state[k-1][i])
			}
		}
		stepOne(c, op, a, out, grad[i], scale)
		for k, x := range out {
			want[k][i], tol[k][i] = x.v, stepTol.Slack*x.e
		}
	}
	return want, tol
}

// stepOne updates one element: x[0] is the param, x[1:] the state.
func stepOne(c stepEval, op hal.Optimizer, a hal.StepArgs, x []tracked, grad float64, scale []float64) {
	p := x[0]
	g := c.exact(grad)
	if scale != nil {
		g = c.mul(g, c.exact(scale[0]))
	}
	coupled := func(g tracked) tracked {
		if a.WeightDecay != 0 {
			return c.fma(p, c.scalar(a.WeightDecay), g)
		}
		return g
	}
	negLR, eps := c.scalar(-a.LR), c.scalar(a.Eps)
	switch op {
	case hal.SGD:
		g = coupled(g)
		if a.Momentum != 0 {
			mom := c.scalar(a.Momentum)
			b := g
			if !a.FirstStep {
				b = c.fma(g, c.scalar(1-a.Dampening), c.mul(x[1], mom))
			}
			x[1] = b
			if a.Nesterov {
				g = c.fma(b, mom, g)
			} else {
				g = b
			}
		}
		x[0] = c.fma(g, negLR, p)
	case hal.Adam:
		if a.Decoupled {
			if a.WeightDecay != 0 {
				p = c.mul(p, c.scalar(1-a.LR*a.WeightDecay))
			}
		} else {
			g = coupled(g)
		}
		m := c.fma(g, c.scalar(1-a.Beta1), c.mul(x[1], c.scalar(a.Beta1)))
		v := c.add(c.mul(x[2], c.scalar(a.Beta2)), c.mul(c.mul(c.scalar(1-a.Beta2), g), g))
		x[1], x[2] = m, v
		denom := c.add(c.div(c.sqrt(v), c.scalar(math.Sqrt(a.BiasCorrection2))), eps)
		x[0] = c.add(p, c.div(c.mul(c.scalar(-(a.LR/a.BiasCorrection1)), m), denom))
	case hal.RMSProp:
		g = coupled(g)
		alpha, one := c.scalar(a.Alpha), c.scalar(1-a.Alpha)
		v := c.add(c.mul(x[1], alpha), c.mul(c.mul(one, g), g))
		x[1] = v
		var avg tracked
		if a.Centered {
			k := len(x) - 1
			ga := c.fma(g, one, c.mul(x[k], alpha))
			x[k] = ga
			avg = c.sqrt(c.add(v, c.mul(tracked{-ga.v, ga.e}, ga)))
		} else {
			avg = c.sqrt(v)
		}
		avg = c.add(avg, eps)
		if a.Momentum != 0 {
			b := c.add(c.mul(x[2], c.scalar(a.Momentum)), c.div(g, avg))
			x[2] = b
			x[0] = c.fma(b, negLR, p)
		} else {
			x[0] = c.add(p, c.div(c.mul(negLR, g), avg))
		}
	case hal.Adagrad:
		g = coupled(g)
		sum := c.add(x[1], c.mul(g, g))
		x[1] = sum
		x[0] = c.add(p, c.div(c.mul(negLR, g), c.add(c.sqrt(sum), eps)))
	}
}

// stepCase is one configuration of an update.
type stepCase struct {
	name   string
	args   hal.StepArgs
	scaled bool
}

// stepCases are the option combinations each update is tried with.
func stepCases(op hal.Optimizer) []stepCase {
	switch op {
	case hal.SGD:
		base := hal.StepArgs{LR: 0.1}
		mom := hal.StepArgs{LR: 0.05, Momentum: 0.9}
		return []stepCase{
			{"plain", base, false},
			{"weight-decay/scaled", with(base, func(a *hal.StepArgs) { a.WeightDecay = 0.01 }), true},
			{"momentum", mom, false},
			{"momentum/first-step", with(mom, func(a *hal.StepArgs) { a.FirstStep = true }), true},
			{"momentum/dampening", with(mom, func(a *hal.StepArgs) { a.Dampening = 0.3 }), false},
			{"nesterov/weight-decay/scaled", with(mom, func(a *hal.StepArgs) { a.Nesterov, a.WeightDecay = true, 1e-2 }), true},
		}
	case hal.Adam:
		// Step 3's bias corrections.
		base := hal.StepArgs{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
			BiasCorrection1: 1 - math.Pow(0.9, 3), BiasCorrection2: 1 - math.Pow(0.999, 3)}
		return []stepCase{
			{"plain", base, false},
			{"weight-decay/scaled", with(base, func(a *hal.StepArgs) { a.WeightDecay = 0.1 }), true},
			{"decoupled", with(base, func(a *hal.StepArgs) { a.WeightDecay, a.Decoupled = 0.01, true }), false},
			{"decoupled/first-step/scaled", with(base, func(a *hal.StepArgs) {
				a.WeightDecay, a.Decoupled, a.BiasCorrection1, a.BiasCorrection2 = 0.01, true, 0.1, 0.001
			}), true},
		}
	case hal.RMSProp:
		base := hal.StepArgs{LR: 1e-2, Alpha: 0.99, Eps: 1e-8}
		return []stepCase{
			{"plain", base, false},
			{"weight-decay/scaled", with(base, func(a *hal.StepArgs) { a.WeightDecay = 0.01 }), true},
			{"momentum", with(base, func(a *hal.StepArgs) { a.Momentum = 0.9 }), false},
			{"centered/scaled", with(base, func(a *hal.StepArgs) { a.Centered = true }), true},
			{"centered/momentum/weight-decay", with(base, func(a *hal.StepArgs) { a.Centered, a.Momentum, a.WeightDecay = true, 0.5, 0.1 }), false},
		}
	case hal.Adagrad:
		base := hal.StepArgs{LR: 1e-2, Eps: 1e-10}
		return []stepCase{
			{"plain", base, false},
			{"weight-decay/scaled", with(base, func(a *hal.StepArgs) { a.WeightDecay, a.LR = 0.01, 1e-2/(1+2*0.1) }), true},
		}
	}
	return nil
}

func with(a hal.StepArgs, f func(*hal.StepArgs)) hal.StepArgs {
	f(&a)
	return a
}

// stepSizes straddle a workgroup and a CPU worker's share.
var stepSizes = []int{1, 7, 1000, 1025}

// stepState draws op's state under a: running averages of squares are
// positive, and RMSProp's centered square average exceeds twice the
// squared mean, so that √(v − a²) is well conditioned (it stays so after
// the update: v − a² is a convex combination of non-negative terms).
func stepState(op hal.Optimizer, a hal.StepArgs, n int, rng *rand.Rand, dt hal.DType) [][]float64 {
	signed := func() []float64 { return randomValues(n, logUniform(-8, 1, true), rng, dt) }
	positive := func() []float64 { return randomValues(n, logUniform(-12, 1, false), rng, dt) }
	switch op {
	case hal.SGD:
		if a.Momentum != 0 {
			return [][]float64{signed()}
		}
		return nil
	case hal.Adam:
		return [][]float64{signed(), positive()}
	case hal.RMSProp:
		st := [][]float64{positive()}
		if a.Momentum != 0 {
			st = append(st, signed())
		}
		if a.Centered {
			mean := signed()
			for i, m := range mean {
				st[0][i] = roundTo(dt, 2*m*m+st[0][i])
			}
			st = append(st, mean)
		}
		return st
	case hal.Adagrad:
		return [][]float64{positive()}
	}
	return nil
}

// testStep checks op in dt, a dtype the device declares for it, against
// the float64 reference. A float16 update is held to the formula's bound
// in float16 (u = 2⁻¹¹ per operation), which contains the way the CPU and
// WebGPU backends compute it: in float32, each result rounded once to
// float16 on store. Where a device does not declare float16 (WebGPU
// without shader-f16), testKernels probes for ErrUnsupported instead.
func testStep(t *testing.T, s *suite, op hal.Optimizer, dt hal.DType) {
	for _, sc := range stepCases(op) {
		for si, n := range stepSizes {
			t.Run(fmt.Sprintf("%s/n=%d", sc.name, n), func(t *testing.T) {
				rng := newRand(t.Name())
				// Odd sizes put the param and state at an offset into a
				// larger buffer; the kernel must write nothing else.
				l := contiguous
				if si%2 == 1 {
					l = withOffset(3)
				}
				param := s.operand(t, dt, []int{n}, l, bind(uniformIn(-2, 2), rng, dt))
				grad := s.operand(t, dt, []int{n}, contiguous, bind(logUniform(-10, 2, true), rng, dt))
				stateVals := stepState(op, sc.args, n, rng, dt)
				state := make([]operand, len(stateVals))
				views := make([]hal.View, len(stateVals))
				for k, v := range stateVals {
					state[k] = s.fromValues(t, dt, []int{n}, l, v, rng)
					views[k] = state[k].View
				}
				var scale []float64
				var scaleView hal.View
				if sc.scaled {
					o := s.operand(t, dt, []int{1}, withOffset(si), bind(uniformIn(0.05, 1), rng, dt))
					scale, scaleView = o.values(), o.View
				}
				want, tol := stepReference(s.arith, op, sc.args, dt, param.values(), grad.values(), stateVals, scale)
				require.NoError(t, s.dev.Step(op, param.View, grad.View, views, scaleView, sc.args))
				gv := grad.values()
				in := func(i int) string { return fmt.Sprintf("grad %g", gv[i]) }
				checkWithin(t, s.arith, dt, s.result(t, param), want[0], tol[0], in)
				for k, o := range state {
					checkWithin(t, s.arith, dt, s.result(t, o), want[k+1], tol[k+1], in)
				}
				// grad and scale are read only.
				assert.Equal(t, gv, download(t, s.dev, grad.Buf, dt, n), "grad changed")
			})
		}
	}
	t.Run("misuse", func(t *testing.T) { testStepMisuse(t, s, op, dt) })
}

// testStepMisuse checks that calls breaking Step's contract fail with
// ErrInvalid naming the update, and leave the param untouched.
func testStepMisuse(t *testing.T, s *suite, op hal.Optimizer, dt hal.DType) {
	a := stepCases(op)[0].args
	switch op {
	case hal.SGD:
		a.Momentum = 0.9 // one state view, so that there is one to get wrong
	case hal.RMSProp:
		a.Momentum, a.Centered = 0.9, true
	}
	nState := op.States(a)
	z := func(shape ...int) hal.View { return s.zeros(t, dt, shape...) }
	states := func(shape ...int) []hal.View {
		out := make([]hal.View, nState)
		for k := range out {
			out[k] = z(shape...)
		}
		return out
	}
	p4, g4 := z(4), z(4)
	transposed := z(2, 3)
	transposed.Shape, transposed.Strides = []int{3, 2}, []int{1, 3}
	other := hal.Float64
	if dt == hal.Float64 {
		other = hal.Float32
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"grad-shape", func() error { return s.dev.Step(op, p4, z(5), states(4), hal.View{}, a) }},
		{"state-shape", func() error { return s.dev.Step(op, p4, g4, states(2, 2), hal.View{}, a) }},
		{"state-count-low", func() error { return s.dev.Step(op, p4, g4, states(4)[1:], hal.View{}, a) }},
		{"state-count-high", func() error { return s.dev.Step(op, p4, g4, append(states(4), z(4)), hal.View{}, a) }},
		{"grad-dtype", func() error { return s.dev.Step(op, p4, s.zeros(t, other, 4), states(4), hal.View{}, a) }},
		{"scale-dtype", func() error { return s.dev.Step(op, p4, g4, states(4), s.zeros(t, other, 1), a) }},
		{"scale-elements", func() error { return s.dev.Step(op, p4, g4, states(4), z(2), a) }},
		{"param-strided", func() error {
			return s.dev.Step(op, transposed, z(3, 2), states(3, 2), hal.View{}, a)
		}},
		{"alias-param-grad", func() error { return s.dev.Step(op, p4, p4, states(4), hal.View{}, a) }},
		{"alias-param-state", func() error {
			st := states(4)
			st[len(st)-1] = p4
			return s.dev.Step(op, p4, g4, st, hal.View{}, a)
		}},
		{"alias-scale-state", func() error {
			st := states(1)
			one := z(1)
			return s.dev.Step(op, one, z(1), st, st[0], a)
		}},
		{"unknown-optimizer", func() error { return s.dev.Step(hal.Optimizer(200), p4, g4, nil, hal.View{}, a) }},
	}
	if nState >= 2 {
		cases = append(cases, struct {
			name string
			call func() error
		}{"alias-state-state", func() error {
			st := states(4)
			st[1] = st[0]
			return s.dev.Step(op, p4, g4, st, hal.View{}, a)
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			require.Error(t, err)
			if c.name == "unknown-optimizer" {
				assert.True(t, errors.Is(err, hal.ErrInvalid) || errors.Is(err, hal.ErrUnsupported), "%v", err)
				return
			}
			assert.ErrorIs(t, err, hal.ErrInvalid)
			assert.Contains(t, err.Error(), op.String(), "the message names the update")
		})
	}
	require.NoError(t, s.dev.Sync())
	assert.Equal(t, []float64{0, 0, 0, 0}, download(t, s.dev, p4.Buf, dt, 4), "a refused call wrote the param")
}

// stepProbe is a valid small call of op in dt, for the dtypes a device did
// not declare.
func stepProbe(t *testing.T, s *suite, op hal.Optimizer, dt hal.DType) error {
	a := stepCases(op)[0].args
	st := make([]hal.View, op.States(a))
	for k := range st {
		st[k] = s.zeros(t, dt, 4)
	}
	return s.dev.Step(op, s.zeros(t, dt, 4), s.zeros(t, dt, 4), st, hal.View{}, a)
}
