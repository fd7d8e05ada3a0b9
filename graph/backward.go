package graph

import (
	"errors"
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// Option changes how Backward and Grad run.
type Option uint8

const (
	// RetainGraph keeps the graph and its saved tensors after the pass,
	// so that another pass can go through it. By default a pass frees
	// them as it goes, and memory returns to the pool.
	RetainGraph Option = 1 << iota
	// CreateGraph records the backward pass itself, so that the
	// gradients it returns can be differentiated again (higher-order
	// gradients, Hessian-vector products). It implies RetainGraph.
	CreateGraph
	// AllowUnused makes Grad return nil, instead of an error, for an
	// input that no output depends on.
	AllowUnused
)

// Errors Backward and Grad return, for errors.Is.
var (
	// ErrNoGradient: the output does not depend on anything that
	// requires a gradient, or only through a non-differentiable op.
	ErrNoGradient = errors.New("no gradient")
	// ErrGraphFreed: a previous pass freed the graph; pass RetainGraph
	// to the first one to go through it twice.
	ErrGraphFreed = errors.New("graph already freed by a backward pass (use RetainGraph to go through it twice)")
)

// Backward computes the gradient of loss, a single-element value, with
// respect to every leaf that requires a gradient, and adds it to the
// leaf's Grad (and to the Grad of every value marked RetainGrad). Every
// kernel it issues runs on the device that holds the data; nothing is read
// back to the host.
//
// Unless RetainGraph or CreateGraph is given, the graph's saved tensors are
// released as the pass goes, and a second pass through the same graph
// returns ErrGraphFreed.
//
// A leaf's gradient is added to its Grad as soon as it is final (the last
// node consuming it has run), and its OnGradReady hooks fire then, on
// this goroutine.
func Backward(loss *Value, opts ...Option) error {
	const op = "Backward"
	if err := tensor.Catch(func() { loss.checkLive(op) }); err != nil {
		return err
	}
	if loss.t.Len() != 1 {
		return fmt.Errorf("graph.%s: loss %v has %d elements; Backward needs a single-element loss (use Grad with a seed for a vector-Jacobian product)",
			op, loss.t.Shape(), loss.t.Len())
	}
	var seed *Value
	if err := tensor.Catch(func() { seed = Constant(tensor.OnesLike(loss.t)) }); err != nil {
		return err
	}
	defer seed.Release()
	_, err := run(op, []*Value{loss}, []*Value{seed}, nil, options(opts))
	return err
}

// Backward is the package function Backward with x as the loss.
func (x *Value) Backward(opts ...Option) error { return Backward(x, opts...) }

// Grad returns the gradients of outputs with respect to inputs, weighted
// by seeds (one per output, of the output's shape, dtype and device): for
// each input, Σₖ seedsₖ·∂outputsₖ/∂input, the vector-Jacobian product. It
// does not touch any value's Grad. seeds may be nil when every output has
// a single element (each seed is then 1).
//
// With CreateGraph the results are recorded values whose own gradients
// Backward or Grad can take again. An input that no output depends on is
// an error unless AllowUnused is given, in which case its gradient is nil.
// The caller owns the results.
func Grad(outputs, inputs, seeds []*Value, opts ...Option) ([]*Value, error) {
	const op = "Grad"
	o := options(opts)
	var owned []*Value
	defer func() {
		for _, s := range owned {
			s.Release()
		}
	}()
	err := tensor.Catch(func() {
		// Nil is an absent operand to an op, but never to Grad.
		for _, y := range outputs {
			y.checkLive(op)
		}
		for _, x := range inputs {
			x.checkLive(op)
		}
		if len(outputs) == 0 {
			misuse(op, "no outputs")
		}
		if seeds == nil {
			for _, y := range outputs {
				if y.t.Len() != 1 {
					misuse(op, "output %v has %d elements: give a seed", y.t.Shape(), y.t.Len())
				}
				s := Constant(tensor.OnesLike(y.t))
				owned = append(owned, s)
				seeds = append(seeds, s)
			}
		}
		if len(seeds) != len(outputs) {
			misuse(op, "%d seeds for %d outputs", len(seeds), len(outputs))
		}
		for k, s := range seeds {
			y := outputs[k]
			s.checkLive(op)
			if !slices.Equal(s.t.Shape(), y.t.Shape()) || s.t.DType() != y.t.DType() || s.t.Device() != y.t.Device() {
				misuse(op, "seed %d is %v, output is %v: they must match in shape, dtype and device", k, s.t.String(), y.t.String())
			}
		}
		for i, x := range inputs {
			if x.v == nil {
				misuse(op, "input %d (%v) does not require a gradient", i, x.t.String())
			}
		}
	})
	if err != nil {
		return nil, err
	}
	targets := make([]*vertex, len(inputs))
	for i, x := range inputs {
		targets[i] = x.v
	}
	got, err := run(op, outputs, seeds, targets, o)
	if err != nil {
		return nil, err
	}
	if o&AllowUnused == 0 {
		for i, g := range got {
			if g == nil {
				for _, g := range got {
					g.Release()
				}
				return nil, fmt.Errorf("graph.%s: input %d (%v) is not reachable from the outputs (use AllowUnused): %w", op, i, inputs[i].String(), ErrNoGradient)
			}
		}
	}
	return got, nil
}

func options(opts []Option) Option {
	var o Option
	for _, x := range opts {
		o |= x
	}
	if o&CreateGraph != 0 {
		o |= RetainGraph
	}
	return o
}

// run is the backward pass: it visits the nodes reachable from roots in
// reverse topological order, runs each rule on its result's accumulated
// gradient and accumulates what the rule returns into the inputs'. With
// targets it returns their gradients; without, it adds the gradients of
// leaves and retained values to their Grad.
func run(op string, roots, seeds []*Value, targets []*vertex, o Option) (result []*Value, err error) {
	for _, y := range roots {
		if y.v == nil {
			if y.nondiff != "" {
				return nil, fmt.Errorf("graph.%s: %v was computed through %s, which is not differentiable: %w", op, y.t.String(), y.nondiff, ErrNoGradient)
			}
			return nil, fmt.Errorf("graph.%s: %v does not depend on any value that requires a gradient: %w", op, y.t.String(), ErrNoGradient)
		}
	}
	order, err := topoOrder(op, roots)
	if err != nil {
		return nil, err
	}

	create := o&CreateGraph != 0
	acc := map[*vertex]*Value{}
	defer func() {
		for _, g := range acc {
			g.Release()
		}
	}()
	// Seeds are the caller's: the pass works on references of its own.
	for k, y := range roots {
		var s *Value
		if cerr := tensor.Catch(func() {
			s = &Value{t: alias(seeds[k].t)}
			if create {
				s.v = seeds[k].v
				if s.v != nil {
					s.v.ref()
				}
			}
		}); cerr != nil {
			return nil, cerr
		}
		accumulate(acc, y.v, s)
	}

	wanted := map[*vertex][]int{} // an input may be asked for twice
	for i, v := range targets {
		wanted[v] = append(wanted[v], i)
	}
	if targets != nil {
		result = make([]*Value, len(targets))
	}
	defer func() {
		if err != nil {
			for _, g := range result {
				g.Release()
			}
			result = nil
		}
	}()
	// take hands over v's complete gradient to its target slot or its
	// Grad; v keeps a copy in acc only if the pass still needs it.
	take := func(v *vertex) error {
		g := acc[v]
		if g == nil {
			return nil
		}
		if slots, ok := wanted[v]; ok {
			return tensor.Catch(func() {
				for _, i := range slots {
					if create {
						result[i] = g.Reshape(g.t.Shape()...)
					} else {
						result[i] = g.Detach()
					}
				}
			})
		}
		if targets != nil {
			return nil
		}
		v.mu.Lock()
		keep := v.node == nil || v.retain
		v.mu.Unlock()
		if keep {
			return tensor.Catch(func() { v.addGrad(g, create) })
		}
		return nil
	}

	// A leaf's gradient is final once every node of the pass that
	// consumes it has run: pending counts them, so that the leaf is
	// handed over (and its OnGradReady hooks fire, in Backward) as early
	// as possible instead of after the whole pass.
	pending := map[*vertex]int{}
	for _, n := range order {
		forLeaves(n, func(v *vertex) { pending[v]++ })
	}
	hooks := targets == nil
	var hookErr error
	// finish hands over leaf v's final gradient and fires its hooks.
	finish := func(v *vertex) error {
		if err := take(v); err != nil {
			return err
		}
		had := acc[v] != nil
		acc[v].Release()
		delete(acc, v)
		if had && hooks && hookErr == nil && v.hasHooks() {
			if err := v.fireHooks(); err != nil {
				hookErr = fmt.Errorf("graph.%s: gradient-ready hook: %w", op, err)
			}
		}
		return nil
	}

	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if err := take(n.outV); err != nil {
			return nil, err
		}
		g := acc[n.outV]
		delete(acc, n.outV)
		if g == nil {
			// No gradient reaches this node (its consumers' rules gave
			// none to it).
			if o&RetainGraph == 0 {
				n.releaseSaved()
			}
		} else {
			if err := apply(op, n, g, create, acc); err != nil {
				return nil, err
			}
			if o&RetainGraph == 0 {
				n.releaseSaved()
			}
		}
		var ferr error
		forLeaves(n, func(v *vertex) {
			pending[v]--
			if pending[v] == 0 && ferr == nil {
				ferr = finish(v)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	// What remains in acc are the gradients of leaves among the roots.
	for v := range acc {
		if err := finish(v); err != nil {
			return nil, err
		}
	}
	if hookErr != nil {
		return nil, hookErr
	}
	return result, nil
}

// forLeaves calls f once for each distinct leaf among n's inputs (a node
// may take one leaf twice, as x·x).
func forLeaves(n *node, f func(v *vertex)) {
	for i, in := range n.inputs {
		if in == nil || in.node != nil || slices.Contains(n.inputs[:i], in) {
			continue
		}
		f(in)
	}
}

// apply runs n's rule on g (which it consumes) and accumulates the
// gradients it returns into acc.
func apply(op string, n *node, g *Value, create bool, acc map[*vertex]*Value) (err error) {
	// The rule's temporaries live in a scope of their own: the engine
	// releases them all at once and keeps only the gradients returned.
	a := NewScope()
	a.add(g)
	c := &ctx{n: n, arena: a, create: create}
	var gs []*Value
	err = tensor.Catch(func() { gs = n.rule.vjp(c, g) })
	if err == nil && len(gs) != len(n.inputs) {
		err = fmt.Errorf("graph.%s: the rule for %s returned %d gradients for %d inputs", op, n.op, len(gs), len(n.inputs))
	}
	if err != nil {
		a.releaseExcept(nil)
		return fmt.Errorf("graph.%s: differentiating %s: %w", op, n.op, err)
	}
	kept := make([]*Value, 0, len(gs))
	for i, gi := range gs {
		if gi == nil || n.inputs[i] == nil {
			gs[i] = nil
			continue
		}
		// A rule may return one value for several inputs (Add's g, g), or
		// a saved value itself: each input gets a reference of its own.
		if gi.borrowed || slices.Contains(kept, gi) {
			gi = gi.Reshape(gi.t.Shape()...)
			gs[i] = gi
		}
		kept = append(kept, gi)
	}
	a.releaseExcept(kept)
	for i, gi := range gs {
		if gi == nil {
			continue
		}
		if !slices.Equal(gi.t.Shape(), n.shapes[i]) || gi.t.DType() != n.dtypes[i] {
			err = fmt.Errorf("graph.%s: the rule for %s gave input %d a gradient %v; want shape %v, dtype %v",
				op, n.op, i, gi.t.String(), n.shapes[i], n.dtypes[i])
		}
		if err != nil {
			gi.Release()
			continue
		}
		if cerr := tensor.Catch(func() { accumulate(acc, n.inputs[i], gi) }); cerr != nil {
			err = cerr
		}
	}
	return err
}

// accumulate adds g (which it consumes) to v's gradient in acc.
func accumulate(acc map[*vertex]*Value, v *vertex, g *Value) {
	prev := acc[v]
	if prev == nil {
		acc[v] = g
		return
	}
	acc[v] = Add(prev, g)
	prev.Release()
	g.Release()
}

// addGrad adds g to v's accumulated Grad. The sum is a new value: a caller
// holding the previous Grad keeps what it had.
func (v *vertex) addGrad(g *Value, create bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	mine := g.Detach()
	if create {
		mine.Release()
		mine = g.Reshape(g.t.Shape()...)
	}
	if v.grad == nil {
		v.grad = mine
		return
	}
	sum := Add(v.grad, mine)
	v.grad.Release()
	mine.Release()
	v.grad = sum
}

// topoOrder lists the nodes reachable from roots, each after every node
// that computes one of its inputs.
func topoOrder(op string, roots []*Value) ([]*node, error) {
	var order []*node
	seen := map[*node]bool{}
	type frame struct {
		n    *node
		next int
	}
	var stack []frame
	for _, y := range roots {
		if n := y.v.node; n != nil && !seen[n] {
			seen[n] = true
			stack = append(stack, frame{n: n})
		}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.n.isFreed() {
				return nil, fmt.Errorf("graph.%s: through %s: %w", op, top.n.op, ErrGraphFreed)
			}
			if top.next < len(top.n.inputs) {
				in := top.n.inputs[top.next]
				top.next++
				if in != nil && in.node != nil && !seen[in.node] {
					seen[in.node] = true
					stack = append(stack, frame{n: in.node})
				}
				continue
			}
			order = append(order, top.n)
			stack = stack[:len(stack)-1]
		}
	}
	return order, nil
}
