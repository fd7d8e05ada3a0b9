package graph

import "slices"

// vjpSum broadcasts g back over the reduced axes.
func vjpSum(c *ctx, g *Value) []*Value {
	a := attrs[sumAttrs](c)
	shape := c.shape(0)
	if !a.keepDim {
		g = g.Reshape(keptShape(shape, a.dims)...)
	}
	return grads(g.Expand(shape...))
}

// keptShape is shape with the reduced dims kept as size 1 (every axis for
// no dims), the shape keepDim gives.
func keptShape(shape, dims []int) []int {
	out := slices.Clone(shape)
	if len(dims) == 0 {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	for _, d := range dims {
		if d < 0 {
			d += len(shape)
		}
		out[d] = 1
	}
	return out
}

func vjpReshape(c *ctx, g *Value) []*Value {
	return grads(g.Reshape(c.shape(0)...))
}

func vjpExpand(c *ctx, g *Value) []*Value { return grads(c.sumTo(g, 0)) }
