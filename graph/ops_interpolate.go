package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// interpolateAttrs are Interpolate's options and its input's shape.
type interpolateAttrs struct {
	opts  tensor.InterpolateOptions
	shape []int // Interpolate's input shape
}

// Interpolate is tensor.Interpolate, recorded. Its gradient is
// tensor.InterpolateBackward (the taps transposed, gathered per input
// position), itself recorded, and the gradient of that is Interpolate
// again: both are linear, each the other's adjoint, so every order of
// derivative exists.
func Interpolate(x *Value, o tensor.InterpolateOptions) *Value {
	const op = "Interpolate"
	t := live(op, x)[0]
	out := tensor.Interpolate(t, o)
	return unary(op, x, out, interpolateAttrs{opts: o, shape: slices.Clone(t.Shape())})
}

// InterpolateBackward is tensor.InterpolateBackward, recorded: the
// gradient of Interpolate with respect to an input of shape inputShape,
// given grad. Its own gradient is Interpolate.
func InterpolateBackward(grad *Value, inputShape []int, o tensor.InterpolateOptions) *Value {
	return interpolateBackward(grad, interpolateAttrs{opts: o, shape: slices.Clone(inputShape)})
}

// interpolateBackward is tensor.InterpolateBackward, recorded.
func interpolateBackward(g *Value, a interpolateAttrs) *Value {
	const op = "InterpolateBackward"
	t := live(op, g)[0]
	return unary(op, g, tensor.InterpolateBackward(t, a.shape, a.opts), a)
}

func vjpInterpolate(c *ctx, g *Value) []*Value {
	return grads(interpolateBackward(g, attrs[interpolateAttrs](c)))
}

func vjpInterpolateBackward(c *ctx, g *Value) []*Value {
	return grads(Interpolate(g, attrs[interpolateAttrs](c).opts))
}
