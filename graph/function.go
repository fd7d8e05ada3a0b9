package graph

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// Function is a differentiable operation with a hand-written gradient, as
// PyTorch's torch.autograd.Function: Forward computes the result from the
// inputs' tensors with any tensor operations, and Backward maps the
// gradient of the result to the gradients of the inputs. Apply records it
// like a built-in operation, so it composes with everything else, and
// scopes and no-grad apply to it as to any operation.
//
// Backward computes with this package's operations on the values its
// context gives (Input, Output, Saved) and on grad, so with CreateGraph its
// own work is recorded and the gradient can be differentiated again, as a
// built-in rule's. Values it makes from tensors of its own must go through
// Context.Constant; every value it computes is released once it returns,
// but for the gradients it returns.
type Function struct {
	// Name names the operation in graphs and errors.
	Name string
	// SaveInputs keeps the inputs for Backward (Context.Input); SaveOutput
	// keeps the result (Context.Output). Saving costs memory until the
	// backward pass frees the graph: save only what Backward reads.
	SaveInputs, SaveOutput bool
	// Forward computes the result from the inputs' tensors (nil for a nil
	// input), which it must not release, and returns it with any tensors
	// Backward needs beyond the inputs and result (a mask, an index),
	// which the graph then owns. Both are new references, not the inputs
	// themselves.
	Forward func(inputs []*tensor.Tensor) (result *tensor.Tensor, saved []*tensor.Tensor)
	// Backward returns one gradient per input, each of its input's shape
	// and dtype, or nil for an input that needs none (Context.NeedsGrad
	// says which do).
	Backward func(c *Context, grad *Value) []*Value
}

// Context is what a Function's Backward sees of its recorded call.
type Context struct {
	c  *ctx
	fn *Function
}

// Input returns input i as the forward pass saw it (the Function needs
// SaveInputs). With CreateGraph it carries input i's place in the graph,
// so that a gradient computed from it is differentiable again.
func (c *Context) Input(i int) *Value {
	c.checkIndex("Input", i)
	if !c.fn.SaveInputs {
		misuse(c.fn.Name, "Backward reads input %d, but the Function does not set SaveInputs", i)
	}
	if c.c.n.saved[i] == nil {
		misuse(c.fn.Name, "input %d was nil", i)
	}
	return c.c.in(i)
}

// Output returns the result of the forward pass (the Function needs
// SaveOutput).
func (c *Context) Output() *Value {
	if !c.fn.SaveOutput {
		misuse(c.fn.Name, "Backward reads the result, but the Function does not set SaveOutput")
	}
	return c.c.out()
}

// Saved returns the i-th tensor Forward saved, as a value that needs no
// gradient.
func (c *Context) Saved(i int) *Value {
	if i < 0 || i >= len(c.c.n.extra) {
		misuse(c.fn.Name, "saved tensor %d of %d", i, len(c.c.n.extra))
	}
	return c.c.extra(i)
}

// NeedsGrad reports whether input i wants a gradient; Backward may return
// nil for the others and skip their work.
func (c *Context) NeedsGrad(i int) bool { c.checkIndex("NeedsGrad", i); return c.c.needs(i) }

// Shape returns input i's shape, saved or not.
func (c *Context) Shape(i int) []int { c.checkIndex("Shape", i); return c.c.shape(i) }

// DType returns input i's dtype.
func (c *Context) DType(i int) tensor.DType { c.checkIndex("DType", i); return c.c.dtype(i) }

// Constant adopts t, a tensor Backward made, as a value that needs no
// gradient and is released with Backward's other temporaries.
func (c *Context) Constant(t *tensor.Tensor) *Value {
	checkTensor(c.fn.Name, t)
	return c.c.constant(t)
}

func (c *Context) checkIndex(what string, i int) {
	if i < 0 || i >= len(c.c.n.inputs) {
		misuse(c.fn.Name, "%s(%d): the Function has %d inputs", what, i, len(c.c.n.inputs))
	}
}

// Apply runs f on inputs and records it when an input requires a gradient
// (and none is under no-grad). Nil inputs are absent optional operands.
func (f *Function) Apply(inputs ...*Value) *Value {
	op := f.Name
	if op == "" {
		op = "Function"
	}
	if f.Forward == nil || f.Backward == nil {
		misuse(op, "a Function needs both Forward and Backward")
	}
	ts := live(op, inputs...)
	out, saved := f.Forward(slices.Clone(ts))
	if out == nil {
		releaseTensors(saved)
		misuse(op, "Forward returned no result")
	}
	// The result and saved tensors must be references of their own: the
	// graph releases them, and the caller still owns the inputs.
	own := func(t *tensor.Tensor) *tensor.Tensor {
		if t != nil && slices.Contains(ts, t) {
			return alias(t)
		}
		return t
	}
	out = own(out)
	for i, t := range saved {
		saved[i] = own(t)
	}
	if !wantsGrad(inputs...) {
		releaseTensors(saved)
		return recordRule(op, nil, out, inputs, nil)
	}
	r := &rule{saveOutput: f.SaveOutput, vjp: f.vjp}
	if f.SaveInputs {
		r.saves = []int{allInputs}
	}
	return recordRule(op, r, out, inputs, nil, saved...)
}

// vjp runs Backward and checks what it returns, so that a wrong count,
// shape or dtype is an error naming the Function rather than a failure
// deeper in the engine.
func (f *Function) vjp(c *ctx, g *Value) []*Value {
	gs := f.Backward(&Context{c: c, fn: f}, g)
	n := c.n
	if len(gs) != len(n.inputs) {
		misuse(f.Name, "Backward returned %d gradients for %d inputs", len(gs), len(n.inputs))
	}
	for i, gi := range gs {
		if gi == nil {
			continue
		}
		gi.checkLive(f.Name)
		if !slices.Equal(gi.t.Shape(), n.shapes[i]) || gi.t.DType() != n.dtypes[i] {
			misuse(f.Name, "Backward returned for input %d a gradient of shape %v, dtype %v; the input has shape %v, dtype %v",
				i, gi.t.Shape(), gi.t.DType(), n.shapes[i], n.dtypes[i])
		}
		// A value Backward did not compute (one it captured) stays its
		// owner's: the engine takes a reference of its own.
		if s := gi.scope.Load(); s != c.arena && !gi.borrowed {
			gs[i] = gi.Reshape(gi.t.Shape()...)
			if gs[i].scope.Load() != c.arena {
				c.arena.add(gs[i])
			}
		}
	}
	return gs
}

// String names the Function.
func (f *Function) String() string { return fmt.Sprintf("graph.Function(%s)", f.Name) }
