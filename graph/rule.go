package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// rule differentiates one primitive operation: given the gradient g of
// its result, vjp returns the gradient of each input (the vector-Jacobian
// product), or nil for an input that needs none. Rules compute with this
// package's operations, so that with CreateGraph their own work is
// recorded and can be differentiated again.
type rule struct {
	saves      []int // the inputs vjp reads; allInputs for every one
	saveOutput bool  // whether vjp reads the result
	vjp        func(c *ctx, g *Value) []*Value
}

// allInputs in rule.saves saves every input (Concat's variadic list).
const allInputs = -1

func (r *rule) savesInput(i, n int) bool {
	return slices.Contains(r.saves, i) || slices.Contains(r.saves, allInputs)
}

// ctx is what a rule sees of its node during one backward pass.
type ctx struct {
	n      *node
	arena  *Scope // the rule's temporaries, released once it has run
	create bool   // CreateGraph: saved values keep their vertices
}

// in returns saved input i as a value. With CreateGraph it carries the
// input's vertex, so that the gradient the rule computes from it is
// itself differentiable with respect to that input.
func (c *ctx) in(i int) *Value {
	t := c.n.saved[i]
	if t == nil {
		panic("graph: rule for " + c.n.op + " reads an input it does not save")
	}
	return c.borrow(t, c.n.inputs[i])
}

// out returns the saved result of the node as a value.
func (c *ctx) out() *Value {
	if c.n.out == nil {
		panic("graph: rule for " + c.n.op + " reads a result it does not save")
	}
	return c.borrow(c.n.out, c.n.outV)
}

// extra returns the i-th extra tensor the forward pass saved, as a value
// that needs no gradient.
func (c *ctx) extra(i int) *Value { return c.borrow(c.n.extra[i], nil) }

func (c *ctx) borrow(t *tensor.Tensor, v *vertex) *Value {
	x := &Value{t: t, borrowed: true}
	x.scope.Store(c.arena)
	if c.create {
		x.v = v
	}
	return x
}

// needs reports whether input i wants a gradient; rules skip the others.
func (c *ctx) needs(i int) bool { return c.n.inputs[i] != nil }

// shape returns input i's shape (known whether or not it was saved).
func (c *ctx) shape(i int) []int { return slices.Clone(c.n.shapes[i]) }

// dtype returns input i's dtype.
func (c *ctx) dtype(i int) tensor.DType { return c.n.dtypes[i] }

// constant adopts t, a tensor the rule made, as a temporary that needs no
// gradient.
func (c *ctx) constant(t *tensor.Tensor) *Value {
	x := &Value{t: t}
	c.arena.add(x)
	return x
}

// sumTo undoes broadcasting: it sums g over the axes along which input i
// was broadcast to g's shape, giving a gradient of input i's shape.
func (c *ctx) sumTo(g *Value, i int) *Value { return sumTo(g, c.n.shapes[i]) }

// attrs returns a node's parameters as the type its op recorded.
func attrs[T any](c *ctx) T { return c.n.attrs.(T) }

// sumTo sums g down to shape, the shape of an operand that broadcast to
// g's shape (NumPy rules: missing leading axes and axes of size 1).
func sumTo(g *Value, shape []int) *Value {
	gs := g.t.Shape()
	if slices.Equal(gs, shape) {
		return g
	}
	lead := len(gs) - len(shape)
	var dims []int
	for i := range gs {
		if i < lead || (shape[i-lead] == 1 && gs[i] != 1) {
			dims = append(dims, i)
		}
	}
	s := g
	if len(dims) > 0 {
		s = g.Sum(dims, true)
	}
	if slices.Equal(s.t.Shape(), shape) {
		return s
	}
	return s.Reshape(shape...)
}

// grads builds a rule's result: one gradient per input, in order.
func grads(gs ...*Value) []*Value { return gs }
