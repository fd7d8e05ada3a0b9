package graph

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

func init() {
	gradCases = append(gradCases, softmaxCases()...)
	gradCases = append(gradCases, convCases()...)
	gradCases = append(gradCases, poolCases()...)
	gradCases = append(gradCases, normCases()...)
	gradCases = append(gradCases, samplingCases()...)
}

func softmaxCases() []gradCase {
	return []gradCase{
		{name: "Softmax/last", inputs: []input{{shape: []int{3, 4}}},
			f: func(in []*Value) *Value { return Softmax(in[0], -1) }},
		{name: "Softmax/dim0 transposed", inputs: []input{{shape: []int{4, 3}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Softmax(0) }},
		{name: "Softmax/one class", inputs: []input{{shape: []int{3, 1}}},
			f: func(in []*Value) *Value { return Softmax(in[0], 1) }},
		{name: "Softmax/scalar", inputs: []input{{shape: []int{}}},
			f: func(in []*Value) *Value { return Softmax(in[0], 0) }},
		{name: "LogSoftmax/middle", inputs: []input{{shape: []int{2, 3, 4}}},
			f: func(in []*Value) *Value { return LogSoftmax(in[0], 1) }},
		{name: "LogSoftmax/7", inputs: []input{{shape: []int{7}}},
			f: func(in []*Value) *Value { return in[0].LogSoftmax(0) }},
	}
}

// conv is a Conv2d case: input, weight and (when bias) bias shapes.
func conv(name string, x, w []int, bias bool, o tensor.ConvOptions) gradCase {
	c := gradCase{name: "Conv2d/" + name, inputs: []input{{shape: x}, {shape: w}}}
	if bias {
		c.inputs = append(c.inputs, input{shape: []int{w[0]}})
	}
	c.f = func(in []*Value) *Value {
		var b *Value
		if bias {
			b = in[2]
		}
		return Conv2d(in[0], in[1], b, o)
	}
	return c
}

// firstOrder marks c for the first-order check only: a case whose inputs
// are large enough that the second order's finite differences take long.
func firstOrder(c gradCase) gradCase {
	c.firstOrder = true
	return c
}

func convT(name string, x, w []int, bias bool, o tensor.ConvTransposeOptions) gradCase {
	c := gradCase{name: "ConvTranspose2d/" + name, inputs: []input{{shape: x}, {shape: w}}}
	groups := max(o.Groups, 1)
	if bias {
		c.inputs = append(c.inputs, input{shape: []int{w[1] * groups}})
	}
	c.f = func(in []*Value) *Value {
		var b *Value
		if bias {
			b = in[2]
		}
		return ConvTranspose2d(in[0], in[1], b, o)
	}
	return c
}

// conv3 is a Conv3d case: input, weight and (when bias) bias shapes.
func conv3(name string, x, w []int, bias bool, o tensor.Conv3dOptions) gradCase {
	c := gradCase{name: "Conv3d/" + name, inputs: []input{{shape: x}, {shape: w}}}
	if bias {
		c.inputs = append(c.inputs, input{shape: []int{w[0]}})
	}
	c.f = func(in []*Value) *Value {
		var b *Value
		if bias {
			b = in[2]
		}
		return Conv3d(in[0], in[1], b, o)
	}
	return c
}

func convCases() []gradCase {
	return []gradCase{
		conv3("plain", []int{2, 2, 3, 4, 3}, []int{3, 2, 2, 3, 2}, true, tensor.Conv3dOptions{}),
		// Depth stride 2 over 6 padded slices drops the last: its gradient
		// is zero; taps that read one slice twice (dilation 1, stride 1
		// elsewhere) add up.
		conv3("stride padding dilation", []int{1, 2, 5, 4, 5}, []int{2, 2, 2, 2, 3}, true,
			tensor.Conv3dOptions{Stride: [3]int{2, 1, 2}, Padding: [3]int{1, 1, 0}, Dilation: [3]int{2, 1, 1}}),
		conv3("groups", []int{2, 4, 4, 3, 3}, []int{4, 2, 3, 2, 2}, false,
			tensor.Conv3dOptions{Padding: [3]int{1, 0, 1}, Groups: 2}),
		conv3("unbatched depthwise", []int{3, 3, 4, 3}, []int{3, 1, 2, 2, 2}, true,
			tensor.Conv3dOptions{Stride: [3]int{1, 2, 1}, Groups: 3}),
		conv3("pointwise groups", []int{2, 4, 2, 3, 2}, []int{6, 2, 1, 1, 1}, true, tensor.Conv3dOptions{Groups: 2}),
		conv3("pointwise unbatched strided", []int{3, 3, 4, 3}, []int{2, 3, 1, 1, 1}, false,
			tensor.Conv3dOptions{Stride: [3]int{2, 2, 1}}),
		{name: "Conv3d/permuted input", inputs: []input{{shape: []int{1, 2, 3, 4, 5}}, {shape: []int{2, 2, 2, 2, 2}}},
			f: func(in []*Value) *Value {
				return Conv3d(in[0].Permute(0, 1, 4, 3, 2), in[1], nil, tensor.Conv3dOptions{Padding: [3]int{1, 0, 0}})
			}},
		conv("plain", []int{2, 2, 4, 4}, []int{3, 2, 3, 3}, true, tensor.ConvOptions{}),
		// (H + 2p − d(k−1) − 1) is odd along both axes: the stride drops a
		// row and a column, which the input gradient gets back as zeros.
		conv("stride padding", []int{2, 2, 6, 5}, []int{2, 2, 3, 2}, true,
			tensor.ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 0}}),
		conv("dilation", []int{1, 2, 6, 6}, []int{2, 2, 2, 3}, false,
			tensor.ConvOptions{Stride: [2]int{1, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{2, 1}}),
		conv("groups", []int{2, 4, 4, 4}, []int{6, 2, 3, 3}, false,
			tensor.ConvOptions{Padding: [2]int{1, 1}, Groups: 2}),
		conv("depthwise", []int{2, 3, 5, 5}, []int{3, 1, 3, 3}, true,
			tensor.ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Groups: 3}),
		conv("pointwise", []int{2, 3, 3, 2}, []int{2, 3, 1, 1}, true, tensor.ConvOptions{}),
		// Images 9 and more wide: the weight's gradient is a convolution
		// whose window is wider than its output, which the CPU computes
		// with images as the GEMM's columns.
		conv("wide", []int{3, 2, 4, 11}, []int{4, 2, 3, 3}, true, tensor.ConvOptions{Padding: [2]int{1, 1}}),
		conv("wide strided", []int{2, 3, 5, 19}, []int{2, 3, 2, 3}, false,
			tensor.ConvOptions{Stride: [2]int{1, 2}, Padding: [2]int{0, 1}, Dilation: [2]int{2, 1}}),
		conv("unbatched", []int{2, 5, 5}, []int{3, 2, 2, 2}, true, tensor.ConvOptions{Stride: [2]int{2, 1}}),
		// N·OH·OW ≥ 512: the weight gradient's convolution has few outputs
		// and a long K, which WebGPU's Conv2D splits into slices.
		firstOrder(conv("long-k", []int{3, 2, 14, 13}, []int{3, 2, 3, 3}, true, tensor.ConvOptions{Padding: [2]int{1, 1}})),
		firstOrder(conv("long-k pointwise", []int{3, 3, 13, 17}, []int{5, 3, 1, 1}, false, tensor.ConvOptions{})),
		firstOrder(conv("long-k grouped strided dilated", []int{3, 4, 27, 25}, []int{4, 2, 3, 3}, false,
			tensor.ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{2, 1}, Dilation: [2]int{2, 1}, Groups: 2})),
		{name: "Conv2d/transposed input", inputs: []input{{shape: []int{2, 2, 5, 4}}, {shape: []int{2, 2, 2, 2}}},
			f: func(in []*Value) *Value {
				return Conv2d(in[0].Transpose(2, 3), in[1], nil, tensor.ConvOptions{Dilation: [2]int{1, 2}})
			}},

		convT("plain", []int{2, 3, 3, 3}, []int{3, 2, 2, 2}, true, tensor.ConvTransposeOptions{}),
		convT("stride padding", []int{2, 2, 3, 3}, []int{2, 2, 3, 3}, true,
			tensor.ConvTransposeOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 0}}),
		convT("groups dilation", []int{2, 4, 3, 2}, []int{4, 1, 2, 2}, true,
			tensor.ConvTransposeOptions{Stride: [2]int{2, 1}, Dilation: [2]int{2, 2}, Groups: 2}),
		// Output padding 1 ≥ stride 1 (allowed by dilation 2): the adjoint
		// convolution yields one row more than the input, which it drops.
		convT("output padding past stride", []int{2, 2, 3, 3}, []int{2, 2, 2, 2}, false,
			tensor.ConvTransposeOptions{Dilation: [2]int{2, 2}, OutputPadding: [2]int{1, 1}}),
		convT("depthwise", []int{2, 3, 3, 3}, []int{3, 1, 3, 3}, false,
			tensor.ConvTransposeOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Groups: 3}),
		convT("unbatched", []int{2, 3, 3}, []int{2, 3, 2, 2}, true, tensor.ConvTransposeOptions{Stride: [2]int{2, 2}}),
	}
}

func maxPool(name string, x []int, o tensor.PoolOptions) gradCase {
	return gradCase{name: "MaxPool2d/" + name, inputs: []input{{shape: x}},
		f: func(in []*Value) *Value {
			v, idx := MaxPool2d(in[0], o)
			idx.Release()
			return v
		}}
}

func avgPool(name string, x []int, o tensor.PoolOptions, countIncludePad bool) gradCase {
	return gradCase{name: "AvgPool2d/" + name, inputs: []input{{shape: x}},
		f: func(in []*Value) *Value { return AvgPool2d(in[0], o, countIncludePad) }}
}

func poolCases() []gradCase {
	overlap := tensor.PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
	ceil := tensor.PoolOptions{Kernel: [2]int{2, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, CeilMode: true}
	// Random values are distinct, so no window has a tie and the maximum
	// is a smooth function of the input nearby.
	return []gradCase{
		maxPool("overlapping", []int{2, 2, 5, 5}, overlap),
		maxPool("dilated ceil", []int{2, 2, 6, 5},
			tensor.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 1}, Dilation: [2]int{2, 2}, CeilMode: true}),
		maxPool("unbatched", []int{3, 4, 4}, tensor.PoolOptions{Kernel: [2]int{2, 2}}),
		// Windows wholly inside the input, the CPU's unrolled 2×2 path
		// (odd sizes drop the last row and column) and its general one.
		maxPool("2x2 odd sizes", []int{3, 5, 7, 9}, tensor.PoolOptions{Kernel: [2]int{2, 2}}),
		maxPool("3x3 stride 2 inside", []int{1, 3, 9, 7}, tensor.PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}}),

		avgPool("overlapping include pad", []int{2, 2, 5, 5}, overlap, true),
		avgPool("overlapping exclude pad", []int{2, 2, 5, 5}, overlap, false),
		avgPool("ceil include pad", []int{2, 2, 6, 5}, ceil, true),
		avgPool("ceil exclude pad", []int{2, 2, 6, 5}, ceil, false),
		avgPool("unbatched", []int{2, 4, 6}, tensor.PoolOptions{Kernel: [2]int{2, 3}}, true),

		{name: "AdaptiveAvgPool2d/divisible", inputs: []input{{shape: []int{2, 2, 6, 4}}},
			f: func(in []*Value) *Value { return AdaptiveAvgPool2d(in[0], 3, 2) }},
		{name: "AdaptiveAvgPool2d/global", inputs: []input{{shape: []int{2, 3, 3, 5}}},
			f: func(in []*Value) *Value { return AdaptiveAvgPool2d(in[0], 1, 1) }},
		{name: "AdaptiveAvgPool2d/unbatched transposed", inputs: []input{{shape: []int{2, 4, 6}}},
			f: func(in []*Value) *Value { return AdaptiveAvgPool2d(in[0].Transpose(1, 2), 2, 4) }},
	}
}

func normCases() []gradCase {
	// Fresh running statistics on every evaluation, so that the in-place
	// update of one does not change the next.
	running := func(in *Value, c int, mean, variance float64) (*tensor.Tensor, *tensor.Tensor) {
		m := make([]float64, c)
		v := make([]float64, c)
		for i := range m {
			m[i] = mean + 0.1*float64(i)
			v[i] = variance + 0.3*float64(i)
		}
		return hostTensor(in.Device(), in.DType(), m, c), hostTensor(in.Device(), in.DType(), v, c)
	}
	return []gradCase{
		{name: "BatchNorm/train affine", inputs: []input{{shape: []int{3, 2, 2, 2}}, {shape: []int{2}}, {shape: []int{2}}},
			f: func(in []*Value) *Value {
				m, v := running(in[0], 2, 0.5, 1.5)
				defer m.Release()
				defer v.Release()
				return BatchNorm(in[0], m, v, in[1], in[2], true, 0.1, 1e-5)
			}},
		{name: "BatchNorm/train 2-D no affine", inputs: []input{{shape: []int{5, 3}}},
			f: func(in []*Value) *Value { return BatchNorm(in[0], nil, nil, nil, nil, true, 0.1, 1e-5) }},
		{name: "BatchNorm/train weight only 3-D", inputs: []input{{shape: []int{2, 3, 4}}, {shape: []int{3}}},
			f: func(in []*Value) *Value { return BatchNorm(in[0], nil, nil, in[1], nil, true, 0.1, 1e-3) }},
		{name: "BatchNorm/eval affine", inputs: []input{{shape: []int{2, 3, 2, 2}}, {shape: []int{3}}, {shape: []int{3}}},
			f: func(in []*Value) *Value {
				m, v := running(in[0], 3, -0.2, 0.7)
				defer m.Release()
				defer v.Release()
				return BatchNorm(in[0], m, v, in[1], in[2], false, 0.1, 1e-5)
			}},
		{name: "BatchNorm/eval no affine", inputs: []input{{shape: []int{2, 3, 3}}},
			f: func(in []*Value) *Value {
				m, v := running(in[0], 3, 0.3, 1.2)
				defer m.Release()
				defer v.Release()
				return BatchNorm(in[0], m, v, nil, nil, false, 0.1, 1e-5)
			}},
		{name: "LayerNorm/affine", inputs: []input{{shape: []int{3, 4}}, {shape: []int{4}}, {shape: []int{4}}},
			f: func(in []*Value) *Value { return LayerNorm(in[0], []int{4}, in[1], in[2], 1e-5) }},
		{name: "LayerNorm/two axes no affine", inputs: []input{{shape: []int{2, 3, 4}}},
			f: func(in []*Value) *Value { return LayerNorm(in[0], []int{3, 4}, nil, nil, 1e-5) }},
		{name: "LayerNorm/weight only transposed", inputs: []input{{shape: []int{5, 2}}, {shape: []int{2, 3}}},
			f: func(in []*Value) *Value {
				x := in[0].Reshape(1, 5, 2).Expand(3, 5, 2).Transpose(1, 2) // [3, 2, 5]
				return LayerNorm(x.Slice(2, 0, 3, 1), []int{2, 3}, in[1], nil, 1e-4)
			}},

		{name: "Dropout/train", inputs: []input{{shape: []int{4, 5}}},
			f: func(in []*Value) *Value { return Dropout(in[0], 0.3, true, tensor.NewGenerator(11)) }},
		{name: "Dropout/eval", inputs: []input{{shape: []int{3}}},
			f: func(in []*Value) *Value { return Mul(Dropout(in[0], 0.3, false, nil), in[0]) }},

		{name: "RBFKernel/xy", inputs: []input{{shape: []int{3, 2}}, {shape: []int{4, 2}}},
			f: func(in []*Value) *Value { return RBFKernel(in[0], in[1], 0.5) }},
		{name: "RBFKernel/self", inputs: []input{{shape: []int{4, 3}, lo: -1, hi: 1}},
			f: func(in []*Value) *Value { return RBFKernel(in[0], in[0], 0.7) }},
	}
}

// gridValues are sample points for GridSample [n, oh, ow, 2] whose pixel
// coordinates stay at least 0.15 from any integer (where the bilinear
// weights have kinks) and from the borders, some outside the input.
func gridValues(seed uint64, n, oh, ow, h, w int, alignCorners bool) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]float64, 0, n*oh*ow*2)
	for range n * oh * ow {
		for _, size := range []int{w, h} {
			u := float64(rng.IntN(size+2)-2) + 0.15 + 0.7*rng.Float64() // pixel coordinate in (−2, size)
			if alignCorners {
				out = append(out, 2*u/float64(size-1)-1)
			} else {
				out = append(out, (2*u+1)/float64(size)-1)
			}
		}
	}
	return out
}

func gridSample(name string, padding tensor.GridPadding, alignCorners bool) gradCase {
	return gradCase{name: "GridSample/" + name, inputs: []input{
		{shape: []int{2, 2, 3, 4}},
		{shape: []int{2, 2, 3, 2}, values: gridValues(uint64(len(name)), 2, 2, 3, 3, 4, alignCorners)},
	}, f: func(in []*Value) *Value { return GridSample(in[0], in[1], padding, alignCorners) }}
}

func samplingCases() []gradCase {
	return []gradCase{
		{name: "AffineGrid/align", inputs: []input{{shape: []int{2, 2, 3}}},
			f: func(in []*Value) *Value { return AffineGrid(in[0], []int{2, 1, 3, 4}, true) }},
		{name: "AffineGrid/no align", inputs: []input{{shape: []int{1, 2, 3}}},
			f: func(in []*Value) *Value { return AffineGrid(in[0], []int{1, 3, 1, 5}, false) }},
		gridSample("zeros", tensor.GridZeros, false),
		gridSample("zeros align", tensor.GridZeros, true),
		gridSample("border", tensor.GridBorder, false),
		gridSample("border align corners", tensor.GridBorder, true),
		{name: "GridSample/affine", inputs: []input{
			{shape: []int{1, 2, 4, 4}},
			{shape: []int{1, 2, 3}, values: []float64{0.8, -0.31, 0.07, 0.23, 0.91, -0.12}},
		}, f: func(in []*Value) *Value {
			grid := AffineGrid(in[1], []int{1, 2, 3, 3}, false)
			defer grid.Release()
			return GridSample(in[0], grid, tensor.GridZeros, false)
		}},
	}
}

// TestDropoutMatchesTensor: the recorded Dropout draws the mask the
// tensor op draws from the same generator state, and its gradient is the
// scaled mask.
func TestDropoutMatchesTensor(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		data := make([]float32, 40)
		for i := range data {
			data[i] = float32(i%7) - 2.5
		}
		x := param(dev, data, 5, 8)
		defer x.Release()
		ref := tensor.FromFloat32(dev, data, 5, 8)
		defer ref.Release()
		want := tensor.Dropout(ref, 0.4, true, tensor.NewGenerator(3))
		defer want.Release()
		y := Dropout(x, 0.4, true, tensor.NewGenerator(3))
		defer y.Release()
		got, err := y.Float32s()
		require.NoError(t, err)
		exp, err := want.Float32s()
		require.NoError(t, err)
		require.Equal(t, exp, got)

		loss := y.Sum(nil, false)
		defer loss.Release()
		require.NoError(t, loss.Backward())
		grad, err := x.Grad().Float32s()
		require.NoError(t, err)
		zeros := 0
		for i, g := range grad {
			// y = x·mask, so the gradient is the mask: 0 or 1/(1−p).
			if g == 0 {
				zeros++
				require.Zero(t, got[i])
			} else {
				require.InDelta(t, 1/0.6, g, 1e-6)
			}
		}
		require.Greater(t, zeros, 0)
		require.Less(t, zeros, len(grad))
	})
}

// nnFamilies prefixes the names of this file's cases.
var nnFamilies = []string{"Softmax", "LogSoftmax", "Conv2d", "Conv3d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d",
	"AdaptiveAvgPool2d", "BatchNorm", "LayerNorm", "Dropout", "RBFKernel", "AffineGrid", "GridSample"}

// TestNNRulesStayOnDeviceAndFreeMemory: for every NN case, first- and
// second-order gradients read nothing back to the host, and once every
// value is released the live bytes are back where they started (the
// rules' host-built constants and raw temporaries included).
func TestNNRulesStayOnDeviceAndFreeMemory(t *testing.T) {
	dev := cpuDevice(t)
	quietGC(t, dev)
	for _, c := range gradCases {
		if !slices.ContainsFunc(nnFamilies, func(f string) bool { return strings.HasPrefix(c.name, f+"/") }) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			floats, ints := c.draw()
			// Some cases drop intermediate values of their forward pass
			// (a transposed input) to the garbage collector: what the
			// forward alone leaves behind is the baseline.
			start := liveBytes(dev)
			in := c.build(dev, tensor.Float64, floats, ints)
			c.f(in).Release()
			releaseValues(in)
			before := liveBytes(dev)
			forward := before - start
			in = c.build(dev, tensor.Float64, floats, ints)
			y := c.f(in)
			loss := y.Sum(nil, false)
			var targets []*Value
			for _, i := range c.differentiable() {
				targets = append(targets, in[i])
			}
			reads := dev.Stats().HostReads
			gs, err := Grad([]*Value{loss}, targets, nil, CreateGraph)
			require.NoError(t, err)
			var total *Value
			for _, g := range gs {
				sq := Mul(g, g)
				s := sq.Sum(nil, false)
				sq.Release()
				if total == nil {
					total = s
				} else {
					sum := Add(total, s)
					total.Release()
					s.Release()
					total = sum
				}
			}
			var hs []*Value
			if total.RequiresGrad() {
				hs, err = Grad([]*Value{total}, targets, nil, AllowUnused)
				require.NoError(t, err)
			}
			require.Equal(t, reads, dev.Stats().HostReads, "host reads during the backward passes")
			releaseValues(hs)
			total.Release()
			releaseValues(gs)
			loss.Release()
			y.Release()
			releaseValues(in)
			require.Equal(t, before+forward, liveBytes(dev), "live bytes after releasing everything")
		})
	}
}

// TestConv3dVariantsAgree: the taps composition (tensor.EnvConv3d=taps)
// gives the default's gradients (which TestGradCheck checks against
// finite differences) for every Conv3d case.
func TestConv3dVariantsAgree(t *testing.T) {
	dev := cpuDevice(t)
	for _, c := range gradCases {
		if !strings.HasPrefix(c.name, "Conv3d/") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			floats, ints := c.draw()
			n, _ := outputSize(t, c, dev, floats, ints)
			seed := randomLike(caseRNG(c.name+"/seed"), n)
			_, want := c.vjp(t, dev, tensor.Float64, floats, ints, seed)
			t.Setenv(tensor.EnvConv3d, string(tensor.Conv3dTaps))
			_, got := c.vjp(t, dev, tensor.Float64, floats, ints, seed)
			requireGradsClose(t, "taps", "stack", got, want, 1e-12)
		})
	}
}
