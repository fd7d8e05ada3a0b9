package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Conv1dOptions configures Conv1d with PyTorch's names; zero values are
// PyTorch's defaults (stride 1, padding 0, dilation 1, groups 1).
// Padding is zeros only (padding_mode="zeros"); PyTorch's string
// paddings "same" and "valid" are not offered ("valid" is Padding 0).
type Conv1dOptions struct {
	Stride, Padding, Dilation, Groups int
}

// Conv1d is a 1-D convolution over [N, Cin, L] (or unbatched [Cin, L])
// inputs, as torch.nn.Conv1d. It runs as Conv2d over a height axis of 1,
// so it has Conv2d's kernels and gradients on every backend.
type Conv1d struct {
	Weight  *graph.Value // [Cout, Cin/Groups, K], as PyTorch's state dict
	Bias    *graph.Value // [Cout], or nil
	Options Conv1dOptions
	mode
}

// NewConv1d returns a Conv1d layer initialized as PyTorch's: weight and
// bias uniform in ±1/√fan_in, fan_in = Cin/Groups·K.
func NewConv1d(dev *tensor.Device, cin, cout, kernel int, o Conv1dOptions, bias bool, gen *tensor.Generator) *Conv1d {
	if o.Stride < 0 || o.Padding < 0 || o.Dilation < 0 || o.Groups < 0 {
		misuse("NewConv1d", "options %+v must not be negative", o)
	}
	g := checkConvChannels("NewConv1d", cin, cout, [2]int{1, kernel}, o.Groups)
	c := &Conv1d{Weight: graph.Param(tensor.Zeros(dev, cout, cin/g, kernel)), Options: o, mode: mode{true}}
	c.Bias = initConv(c.Weight, bias, cout, gen)
	return c
}

// Forward convolves x [N, Cin, L] to [N, Cout, Lout], or [Cin, L] to
// [Cout, Lout].
func (c *Conv1d) Forward(x *graph.Value) *graph.Value {
	ws := c.Weight.Shape()
	xs := x.Shape()
	if len(xs) == 2 {
		batched := x.Unsqueeze(0)
		defer batched.Release()
		y := c.Forward(batched)
		defer y.Release()
		return y.Squeeze(0)
	}
	if len(xs) != 3 || xs[1] != ws[1]*max(c.Options.Groups, 1) {
		misuse("Conv1d", "input %v is not [N, %d, L] or [%d, L]", xs, ws[1]*max(c.Options.Groups, 1), ws[1]*max(c.Options.Groups, 1))
	}
	o := tensor.ConvOptions{
		Stride:   [2]int{1, c.Options.Stride},
		Padding:  [2]int{0, c.Options.Padding},
		Dilation: [2]int{1, c.Options.Dilation},
		Groups:   c.Options.Groups,
	}
	x4 := x.Unsqueeze(2)
	defer x4.Release()
	w4 := c.Weight.Unsqueeze(2)
	defer w4.Release()
	y4 := graph.Conv2d(x4, w4, c.Bias, o)
	defer y4.Release()
	return y4.Squeeze(2)
}

// Parameters returns "weight" and "bias".
func (c *Conv1d) Parameters() []Named { return named("weight", c.Weight, "bias", c.Bias) }

// Buffers returns nothing.
func (c *Conv1d) Buffers() []Named { return nil }
