package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// MaskedFill is tensor.Tensor.MaskedFill, recorded: x's gradient is the
// gradient with zeros where the mask filled; the mask has none.
func (x *Value) MaskedFill(mask *Value, value float64) *Value {
	f := &Function{
		Name:       "MaskedFill",
		SaveInputs: true,
		Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
			return in[0].MaskedFill(in[1], value), nil
		},
		Backward: func(c *Context, g *Value) []*Value {
			return []*Value{g.MaskedFill(c.Input(1), 0), nil}
		},
	}
	return f.Apply(x, mask)
}

// MaskedSelect is tensor.Tensor.MaskedSelect, recorded: the gradient goes
// back to the selected positions (summed over any axes x was broadcast
// along), zero elsewhere. Like the tensor op it reads the mask back once,
// in the forward pass; the backward pass reads nothing.
func (x *Value) MaskedSelect(mask *Value) *Value {
	const op = "MaskedSelect"
	ts := live(op, x, mask)
	xs, ms := ts[0].Shape(), ts[1].Shape()
	f := &Function{
		Name: op,
		Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
			// The selected flat positions (one read of the mask, as in
			// tensor: MaskedSelect of the positions themselves), then one
			// gather; the positions stay for the backward scatter.
			shape := broadcastShape(xs, ms)
			n := 1
			for _, d := range shape {
				n *= d
			}
			all := tensor.Arange(in[0].Device(), tensor.Int32, 0, float64(n), 1)
			grid := all.Reshape(shape...)
			pos := grid.MaskedSelect(in[1])
			x := in[0].BroadcastTo(shape...)
			flat := x.Reshape(-1)
			out := flat.IndexSelect(0, pos)
			for _, t := range []*tensor.Tensor{all, grid, x, flat} {
				t.Release()
			}
			return out, []*tensor.Tensor{pos}
		},
		Backward: func(c *Context, g *Value) []*Value {
			if !c.NeedsGrad(0) {
				return []*Value{nil, nil}
			}
			shape := broadcastShape(xs, ms)
			n := 1
			for _, d := range shape {
				n *= d
			}
			zeros := c.Constant(tensor.Full(g.Device(), g.DType(), 0, n))
			flat := zeros.ScatterAdd(0, c.Saved(0), g)
			return []*Value{sumTo(flat.Reshape(shape...), xs), nil}
		},
	}
	return f.Apply(x, mask)
}

// broadcastShape is the NumPy broadcast of two shapes that are known to
// broadcast (the forward op checked them).
func broadcastShape(a, b []int) []int {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		out[i] = da
		if da == 1 {
			out[i] = db
		}
	}
	return slices.Clip(out)
}
