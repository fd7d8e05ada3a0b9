package graph

import "github.com/webtensor/webtensor/tensor"

// Flip is tensor.Tensor.Flip, recorded; its gradient is the gradient
// flipped back.
func (x *Value) Flip(dims ...int) *Value {
	f := &Function{
		Name:     "Flip",
		Forward:  func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) { return in[0].Flip(dims...), nil },
		Backward: func(_ *Context, g *Value) []*Value { return []*Value{g.Flip(dims...)} },
	}
	return f.Apply(x)
}

// Roll is tensor.Tensor.Roll, recorded; its gradient is the gradient
// rolled back by −shifts.
func (x *Value) Roll(shifts []int, dims ...int) *Value {
	f := &Function{
		Name:    "Roll",
		Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) { return in[0].Roll(shifts, dims...), nil },
		Backward: func(_ *Context, g *Value) []*Value {
			back := make([]int, len(shifts))
			for i, s := range shifts {
				back[i] = -s
			}
			return []*Value{g.Roll(back, dims...)}
		},
	}
	return f.Apply(x)
}

// Tril is tensor.Tensor.Tril, recorded; its gradient is the gradient's
// lower triangle.
func (x *Value) Tril(diagonal int) *Value {
	f := &Function{
		Name:     "Tril",
		Forward:  func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) { return in[0].Tril(diagonal), nil },
		Backward: func(_ *Context, g *Value) []*Value { return []*Value{g.Tril(diagonal)} },
	}
	return f.Apply(x)
}

// Triu is tensor.Tensor.Triu, recorded; its gradient is the gradient's
// upper triangle.
func (x *Value) Triu(diagonal int) *Value {
	f := &Function{
		Name:     "Triu",
		Forward:  func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) { return in[0].Triu(diagonal), nil },
		Backward: func(_ *Context, g *Value) []*Value { return []*Value{g.Triu(diagonal)} },
	}
	return f.Apply(x)
}
