package nn

import (
	"strconv"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Conv3d is a 3-D convolution over [N, Cin, D, H, W] (or unbatched
// [Cin, D, H, W]) inputs, as torch.nn.Conv3d: graph.Conv3d, so it runs as
// Conv2d on every backend and differentiates through it.
type Conv3d struct {
	Weight  *graph.Value // [Cout, Cin/Groups, KD, KH, KW], as PyTorch's state dict
	Bias    *graph.Value // [Cout], or nil
	Options tensor.Conv3dOptions
	mode
}

// NewConv3d returns a Conv3d layer initialized as PyTorch's: weight and
// bias uniform in ±1/√fan_in, fan_in = Cin/Groups·KD·KH·KW.
func NewConv3d(dev *tensor.Device, cin, cout int, kernel [3]int, o tensor.Conv3dOptions, bias bool, gen *tensor.Generator) *Conv3d {
	if kernel[0] <= 0 {
		misuse("NewConv3d", "kernel %v must be positive", kernel)
	}
	g := checkConvChannels("NewConv3d", cin, cout, [2]int{kernel[1], kernel[2]}, o.Groups)
	c := &Conv3d{Weight: graph.Param(tensor.Zeros(dev, cout, cin/g, kernel[0], kernel[1], kernel[2])), Options: o, mode: mode{true}}
	c.Bias = initConv(c.Weight, bias, cout, gen)
	return c
}

// Forward convolves x.
func (c *Conv3d) Forward(x *graph.Value) *graph.Value {
	return graph.Conv3d(x, c.Weight, c.Bias, c.Options)
}

// Parameters returns "weight" and "bias".
func (c *Conv3d) Parameters() []Named { return named("weight", c.Weight, "bias", c.Bias) }

// Buffers returns nothing.
func (c *Conv3d) Buffers() []Named { return nil }

// ExtraRepr is torch's _ConvNd.extra_repr: "in, out, kernel_size=…,
// stride=…" and the options that differ from PyTorch's defaults.
func (c *Conv3d) ExtraRepr() string {
	o := c.Options
	for i := range 3 {
		o.Stride[i], o.Dilation[i] = max(o.Stride[i], 1), max(o.Dilation[i], 1)
	}
	o.Groups = max(o.Groups, 1)
	s := c.Weight.Shape()
	r := strconv.Itoa(s[1]*o.Groups) + ", " + strconv.Itoa(s[0]) +
		", kernel_size=" + pyTriple([3]int{s[2], s[3], s[4]}) + ", stride=" + pyTriple(o.Stride)
	if o.Padding != [3]int{} {
		r += ", padding=" + pyTriple(o.Padding)
	}
	if o.Dilation != [3]int{1, 1, 1} {
		r += ", dilation=" + pyTriple(o.Dilation)
	}
	if o.Groups != 1 {
		r += ", groups=" + strconv.Itoa(o.Groups)
	}
	if c.Bias == nil {
		r += ", bias=False"
	}
	return r
}

func (c *Conv3d) String() string { return Format(c) }

// pyTriple writes a Python 3-tuple.
func pyTriple(p [3]int) string {
	return "(" + strconv.Itoa(p[0]) + ", " + strconv.Itoa(p[1]) + ", " + strconv.Itoa(p[2]) + ")"
}
