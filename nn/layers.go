package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// misuse panics with a *tensor.Error, as the tensor and graph packages
// report misuse, so that tensor.Catch recovers it.
func misuse(op, format string, args ...any) {
	panic(&tensor.Error{Op: "nn." + op, Msg: fmt.Sprintf(format, args...)})
}

// mode is the training flag of a module without children. New modules
// train, as PyTorch's do.
type mode struct{ training bool }

// SetTraining switches the module between training and evaluation.
func (m *mode) SetTraining(training bool) { m.training = training }

// Training reports whether the module is in training mode.
func (m *mode) Training() bool { return m.training }

// named lists the non-nil values under their names, for Parameters and
// Buffers.
func named(pairs ...any) []Named {
	var out []Named
	for i := 0; i < len(pairs); i += 2 {
		if v := pairs[i+1].(*graph.Value); v != nil {
			out = append(out, Named{Name: pairs[i].(string), Value: v})
		}
	}
	return out
}

// prefixed renames a child's state under prefix ("0.", "self_attn.").
func prefixed(prefix string, ns []Named) []Named {
	for i := range ns {
		ns[i].Name = prefix + ns[i].Name
	}
	return ns
}

// same returns a new value over x's data: what a module that leaves its
// input unchanged returns, so that the caller always owns Forward's result
// apart from x.
func same(x *graph.Value) *graph.Value { return x.Reshape(x.Shape()...) }

// Linear is y = x·Wᵀ + b over the last axis of x, as torch.nn.Linear:
// x [..., In] gives y [..., Out].
type Linear struct {
	Weight *graph.Value // [Out, In]
	Bias   *graph.Value // [Out], or nil
	mode
}

// NewLinear returns a Linear layer initialized as PyTorch's: weight and
// bias uniform in ±1/√in (Kaiming-uniform with a = √5).
func NewLinear(dev *tensor.Device, in, out int, bias bool, gen *tensor.Generator) *Linear {
	if in <= 0 || out <= 0 {
		misuse("NewLinear", "sizes in %d and out %d must be positive", in, out)
	}
	l := &Linear{Weight: graph.Param(tensor.Zeros(dev, out, in)), mode: mode{true}}
	KaimingUniform(l.Weight, math.Sqrt(5), gen)
	if bias {
		l.Bias = uniformParam(dev, 1/math.Sqrt(float64(in)), gen, out)
	}
	return l
}

// Forward computes x·Wᵀ + b.
func (l *Linear) Forward(x *graph.Value) *graph.Value { return linear("Linear", x, l.Weight, l.Bias) }

// Parameters returns "weight" and "bias".
func (l *Linear) Parameters() []Named { return named("weight", l.Weight, "bias", l.Bias) }

// Buffers returns nothing: Linear has none.
func (l *Linear) Buffers() []Named { return nil }

// linear computes x·wᵀ + b with one Gemm, folding x's leading axes into
// the matrix's rows.
func linear(op string, x, w, b *graph.Value) *graph.Value {
	ws, xs := w.Shape(), x.Shape()
	if len(xs) == 0 || xs[len(xs)-1] != ws[1] {
		misuse(op, "input %v does not end in the layer's %d input features", xs, ws[1])
	}
	beta := 0.0
	if b != nil {
		beta = 1
	}
	if len(xs) == 2 {
		return graph.Gemm(1, x, false, w, true, beta, b)
	}
	x2 := x.Reshape(-1, ws[1])
	defer x2.Release()
	y2 := graph.Gemm(1, x2, false, w, true, beta, b)
	defer y2.Release()
	return y2.Reshape(append(xs[:len(xs)-1], ws[0])...)
}

// Conv2d is a 2-D convolution over [N, Cin, H, W] inputs, as
// torch.nn.Conv2d.
type Conv2d struct {
	Weight  *graph.Value // [Cout, Cin/Groups, KH, KW]
	Bias    *graph.Value // [Cout], or nil
	Options tensor.ConvOptions
	mode
}

// NewConv2d returns a Conv2d layer initialized as PyTorch's: weight and
// bias uniform in ±1/√fan_in, fan_in = Cin/Groups·KH·KW.
func NewConv2d(dev *tensor.Device, cin, cout int, kernel [2]int, o tensor.ConvOptions, bias bool, gen *tensor.Generator) *Conv2d {
	g := checkConvChannels("NewConv2d", cin, cout, kernel, o.Groups)
	c := &Conv2d{Weight: graph.Param(tensor.Zeros(dev, cout, cin/g, kernel[0], kernel[1])), Options: o, mode: mode{true}}
	c.Bias = initConv(c.Weight, bias, cout, gen)
	return c
}

// Forward convolves x.
func (c *Conv2d) Forward(x *graph.Value) *graph.Value {
	return graph.Conv2d(x, c.Weight, c.Bias, c.Options)
}

// Parameters returns "weight" and "bias".
func (c *Conv2d) Parameters() []Named { return named("weight", c.Weight, "bias", c.Bias) }

// Buffers returns nothing.
func (c *Conv2d) Buffers() []Named { return nil }

// ConvTranspose2d is a 2-D transposed convolution, as
// torch.nn.ConvTranspose2d.
type ConvTranspose2d struct {
	Weight  *graph.Value // [Cin, Cout/Groups, KH, KW]
	Bias    *graph.Value // [Cout], or nil
	Options tensor.ConvTransposeOptions
	mode
}

// NewConvTranspose2d returns a ConvTranspose2d layer initialized as
// PyTorch's: weight and bias uniform in ±1/√fan_in, where fan_in is
// computed from the weight's shape as for a convolution
// (Cout/Groups·KH·KW).
func NewConvTranspose2d(dev *tensor.Device, cin, cout int, kernel [2]int, o tensor.ConvTransposeOptions, bias bool, gen *tensor.Generator) *ConvTranspose2d {
	g := checkConvChannels("NewConvTranspose2d", cin, cout, kernel, o.Groups)
	c := &ConvTranspose2d{Weight: graph.Param(tensor.Zeros(dev, cin, cout/g, kernel[0], kernel[1])), Options: o, mode: mode{true}}
	c.Bias = initConv(c.Weight, bias, cout, gen)
	return c
}

// Forward applies the transposed convolution to x.
func (c *ConvTranspose2d) Forward(x *graph.Value) *graph.Value {
	return graph.ConvTranspose2d(x, c.Weight, c.Bias, c.Options)
}

// Parameters returns "weight" and "bias".
func (c *ConvTranspose2d) Parameters() []Named { return named("weight", c.Weight, "bias", c.Bias) }

// Buffers returns nothing.
func (c *ConvTranspose2d) Buffers() []Named { return nil }

func checkConvChannels(op string, cin, cout int, kernel [2]int, groups int) int {
	g := max(groups, 1)
	if cin <= 0 || cout <= 0 || kernel[0] <= 0 || kernel[1] <= 0 {
		misuse(op, "channels %d, %d and kernel %v must be positive", cin, cout, kernel)
	}
	if cin%g != 0 || cout%g != 0 {
		misuse(op, "channels %d and %d are not divisible by %d groups", cin, cout, g)
	}
	return g
}

// initConv draws a convolution's weight as PyTorch's _ConvNd does and
// returns its bias, or nil.
func initConv(w *graph.Value, bias bool, cout int, gen *tensor.Generator) *graph.Value {
	KaimingUniform(w, math.Sqrt(5), gen)
	if !bias {
		return nil
	}
	fanIn, _ := Fans(w.Shape())
	return uniformParam(w.Device(), 1/math.Sqrt(float64(fanIn)), gen, cout)
}

// MaxPool2d takes the maximum of each window, as torch.nn.MaxPool2d.
type MaxPool2d struct {
	Options tensor.PoolOptions
	mode
}

// NewMaxPool2d returns a MaxPool2d layer; a zero Stride is the kernel
// size, as PyTorch's default.
func NewMaxPool2d(o tensor.PoolOptions) *MaxPool2d { return &MaxPool2d{Options: o, mode: mode{true}} }

// Forward pools x.
func (p *MaxPool2d) Forward(x *graph.Value) *graph.Value {
	v, idx := graph.MaxPool2d(x, p.Options)
	idx.Release()
	return v
}

// Parameters returns nothing.
func (p *MaxPool2d) Parameters() []Named { return nil }

// Buffers returns nothing.
func (p *MaxPool2d) Buffers() []Named { return nil }

// AvgPool2d averages each window, as torch.nn.AvgPool2d.
type AvgPool2d struct {
	Options tensor.PoolOptions
	// CountIncludePad counts the zero padding in each window's divisor
	// (PyTorch's default is true).
	CountIncludePad bool
	mode
}

// NewAvgPool2d returns an AvgPool2d layer.
func NewAvgPool2d(o tensor.PoolOptions, countIncludePad bool) *AvgPool2d {
	return &AvgPool2d{Options: o, CountIncludePad: countIncludePad, mode: mode{true}}
}

// Forward pools x.
func (p *AvgPool2d) Forward(x *graph.Value) *graph.Value {
	return graph.AvgPool2d(x, p.Options, p.CountIncludePad)
}

// Parameters returns nothing.
func (p *AvgPool2d) Parameters() []Named { return nil }

// Buffers returns nothing.
func (p *AvgPool2d) Buffers() []Named { return nil }

// AdaptiveAvgPool2d averages x down to an H×W grid, as
// torch.nn.AdaptiveAvgPool2d.
type AdaptiveAvgPool2d struct {
	H, W int
	mode
}

// NewAdaptiveAvgPool2d returns an AdaptiveAvgPool2d layer with output
// size h×w.
func NewAdaptiveAvgPool2d(h, w int) *AdaptiveAvgPool2d {
	return &AdaptiveAvgPool2d{H: h, W: w, mode: mode{true}}
}

// Forward pools x.
func (p *AdaptiveAvgPool2d) Forward(x *graph.Value) *graph.Value {
	return graph.AdaptiveAvgPool2d(x, p.H, p.W)
}

// Parameters returns nothing.
func (p *AdaptiveAvgPool2d) Parameters() []Named { return nil }

// Buffers returns nothing.
func (p *AdaptiveAvgPool2d) Buffers() []Named { return nil }

// Embedding is a lookup table of N vectors of size Dim, as
// torch.nn.Embedding.
type Embedding struct {
	Weight *graph.Value // [N, Dim]
	mode
}

// NewEmbedding returns an Embedding of n vectors of size dim drawn from
// N(0, 1), as PyTorch's.
func NewEmbedding(dev *tensor.Device, n, dim int, gen *tensor.Generator) *Embedding {
	if n <= 0 || dim <= 0 {
		misuse("NewEmbedding", "sizes %d and %d must be positive", n, dim)
	}
	e := &Embedding{Weight: graph.Param(tensor.Zeros(dev, n, dim)), mode: mode{true}}
	Normal(e.Weight, 0, 1, gen)
	return e
}

// Forward looks up the rows of the table at idx, an Int32 or Int64 value
// of any shape S, giving S + [Dim]. The gradient of a row used several
// times accumulates.
func (e *Embedding) Forward(idx *graph.Value) *graph.Value {
	if !idx.DType().IsInteger() {
		misuse("Embedding", "indices must be int32 or int64, got %v", idx.DType())
	}
	flat := idx.Reshape(-1)
	defer flat.Release()
	rows := e.Weight.IndexSelect(0, flat)
	defer rows.Release()
	return rows.Reshape(append(idx.Shape(), e.Weight.Shape()[1])...)
}

// Parameters returns "weight".
func (e *Embedding) Parameters() []Named { return named("weight", e.Weight) }

// Buffers returns nothing.
func (e *Embedding) Buffers() []Named { return nil }

// Flatten merges the axes Start … End (inclusive, negative counting from
// the end) into one, as torch.nn.Flatten.
type Flatten struct {
	Start, End int
	mode
}

// NewFlatten returns a Flatten that keeps the batch axis and merges the
// rest: [N, …] to [N, ∏…].
func NewFlatten() *Flatten { return &Flatten{Start: 1, End: -1, mode: mode{true}} }

// Forward flattens x.
func (f *Flatten) Forward(x *graph.Value) *graph.Value { return x.Flatten(f.Start, f.End) }

// Parameters returns nothing.
func (f *Flatten) Parameters() []Named { return nil }

// Buffers returns nothing.
func (f *Flatten) Buffers() []Named { return nil }

// Sequential applies its modules in order, as torch.nn.Sequential. Their
// state is named by position: "0.weight", "2.running_mean".
type Sequential struct {
	Modules  []Module
	training bool
}

// NewSequential chains mods.
func NewSequential(mods ...Module) *Sequential {
	return &Sequential{Modules: slices.Clone(mods), training: true}
}

// Forward runs x through every module, releasing each intermediate result
// once the next module has consumed it.
func (s *Sequential) Forward(x *graph.Value) *graph.Value {
	h := x
	for _, m := range s.Modules {
		next := m.Forward(h)
		if h != x && h != next {
			h.Release()
		}
		h = next
	}
	if h == x {
		return same(x)
	}
	return h
}

// Parameters returns the modules' parameters, prefixed with their
// positions.
func (s *Sequential) Parameters() []Named {
	var out []Named
	for i, m := range s.Modules {
		out = append(out, prefixed(fmt.Sprintf("%d.", i), m.Parameters())...)
	}
	return out
}

// Buffers returns the modules' buffers, prefixed with their positions.
func (s *Sequential) Buffers() []Named {
	var out []Named
	for i, m := range s.Modules {
		out = append(out, prefixed(fmt.Sprintf("%d.", i), m.Buffers())...)
	}
	return out
}

// SetTraining sets the mode of s and of every module in it.
func (s *Sequential) SetTraining(training bool) {
	s.training = training
	for _, m := range s.Modules {
		m.SetTraining(training)
	}
}

// Training reports the mode last set on s.
func (s *Sequential) Training() bool { return s.training }
