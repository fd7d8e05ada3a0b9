package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conv2dCases cover stride, padding, dilation and groups alone and
// combined, depthwise, batch > 1 and non-square kernels and inputs. They
// stay small: llvmpipe runs them too.
var conv2dCases = []struct {
	name string
	g    conv2dGeometry
}{
	{"plain", conv2dGeometry{N: 2, Cin: 3, H: 7, W: 5, Cout: 4, KH: 3, KW: 3, Bias: true}},
	{"stride2 pad1 nonsquare kernel", conv2dGeometry{N: 2, Cin: 3, H: 8, W: 9, Cout: 5, KH: 3, KW: 2,
		Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Bias: true}},
	{"dilation", conv2dGeometry{N: 1, Cin: 2, H: 9, W: 10, Cout: 3, KH: 3, KW: 3,
		Padding: [2]int{2, 1}, Dilation: [2]int{2, 3}, Bias: true}},
	{"groups2", conv2dGeometry{N: 2, Cin: 4, H: 6, W: 7, Cout: 6, KH: 3, KW: 3,
		Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Groups: 2, Bias: true}},
	{"depthwise", conv2dGeometry{N: 2, Cin: 3, H: 5, W: 6, Cout: 3, KH: 3, KW: 3,
		Padding: [2]int{1, 1}, Groups: 3, Bias: true}},
	{"depthwise multiplier2", conv2dGeometry{N: 1, Cin: 3, H: 5, W: 4, Cout: 6, KH: 2, KW: 3, Groups: 3}},
	{"1x1 no bias", conv2dGeometry{N: 3, Cin: 5, H: 4, W: 3, Cout: 2, KH: 1, KW: 1}},
	{"1x1 stride2 padded", conv2dGeometry{N: 2, Cin: 3, H: 5, W: 4, Cout: 2, KH: 1, KW: 1,
		Stride: [2]int{2, 2}, Padding: [2]int{1, 0}, Bias: true}},
	{"kernel covers input", conv2dGeometry{N: 3, Cin: 2, H: 4, W: 5, Cout: 3, KH: 4, KW: 5, Bias: true}},
	{"everything", conv2dGeometry{N: 2, Cin: 4, H: 9, W: 11, Cout: 4, KH: 3, KW: 2,
		Stride: [2]int{2, 3}, Padding: [2]int{1, 2}, Dilation: [2]int{2, 1}, Groups: 2, Bias: true}},
}

// resolved fills the geometry's zero values the way ConvOptions does.
func (g conv2dGeometry) resolved() conv2dGeometry {
	for i := range 2 {
		if g.Stride[i] == 0 {
			g.Stride[i] = 1
		}
		if g.Dilation[i] == 0 {
			g.Dilation[i] = 1
		}
	}
	if g.Groups == 0 {
		g.Groups = 1
	}
	return g
}

func TestConv2d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range conv2dCases {
			t.Run(tc.name, func(t *testing.T) {
				g := tc.g.resolved()
				rng := nnRand(t)
				x, xs := nnInput(t, dev, rng, g.inputShape()...)
				w, ws := nnInput(t, dev, rng, g.weightShape()...)
				var b *Tensor
				var bs []float64
				if g.Bias {
					b, bs = nnInput(t, dev, rng, g.Cout)
				}
				want, mag, oh, ow := refConv2d(xs, ws, bs, g)
				y := Conv2d(x, w, b, ConvOptions{Stride: tc.g.Stride, Padding: tc.g.Padding, Dilation: tc.g.Dilation, Groups: tc.g.Groups})
				require.Equal(t, []int{g.N, g.Cout, oh, ow}, y.Shape())
				nnRequireClose(t, tc.name, want, nnRead(t, y), nnSumTol(want, mag))
			})
		}
	})
}

func TestConv2dUnbatched(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		g := conv2dGeometry{N: 1, Cin: 2, H: 5, W: 6, Cout: 3, KH: 3, KW: 2, Padding: [2]int{1, 1}, Bias: true}.resolved()
		rng := nnRand(t)
		x, xs := nnInput(t, dev, rng, g.Cin, g.H, g.W)
		w, ws := nnInput(t, dev, rng, g.weightShape()...)
		b, bs := nnInput(t, dev, rng, g.Cout)
		want, mag, oh, ow := refConv2d(xs, ws, bs, g)
		y := Conv2d(x, w, b, ConvOptions{Padding: g.Padding})
		require.Equal(t, []int{g.Cout, oh, ow}, y.Shape())
		nnRequireClose(t, "unbatched", want, nnRead(t, y), nnSumTol(want, mag))
	})
}

// TestConv2dNonContiguousInput feeds a transposed view: Im2Col reads
// strides, so the result must not depend on the layout.
func TestConv2dNonContiguousInput(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		g := conv2dGeometry{N: 2, Cin: 3, H: 5, W: 4, Cout: 2, KH: 2, KW: 3}.resolved()
		rng := nnRand(t)
		// Stored as [N, C, W, H]; the view swaps the last two axes.
		stored, ss := nnInput(t, dev, rng, g.N, g.Cin, g.W, g.H)
		x := stored.Transpose(2, 3)
		defer x.Release()
		require.False(t, x.IsContiguous())
		xs := make([]float64, len(ss))
		for nc := range g.N * g.Cin {
			for h := range g.H {
				for w := range g.W {
					xs[(nc*g.H+h)*g.W+w] = ss[(nc*g.W+w)*g.H+h]
				}
			}
		}
		w, ws := nnInput(t, dev, rng, g.weightShape()...)
		want, mag, _, _ := refConv2d(xs, ws, nil, g)
		nnRequireClose(t, "transposed input", want, nnRead(t, Conv2d(x, w, nil, ConvOptions{})), nnSumTol(want, mag))
	})
}

// TestConv2dFloat64 runs the float64 path where the device has one (the
// CPU backend) with a float64 tolerance.
func TestConv2dFloat64(t *testing.T) {
	dev := openCPU(t)
	g := conv2dGeometry{N: 2, Cin: 4, H: 6, W: 5, Cout: 2, KH: 3, KW: 2, Stride: [2]int{2, 1},
		Padding: [2]int{1, 1}, Dilation: [2]int{1, 2}, Groups: 2, Bias: true}.resolved()
	rng := nnRand(t)
	xs := nnFloat64s(nnUniform(rng, g.N*g.Cin*g.H*g.W, -1, 1))
	ws := nnFloat64s(nnUniform(rng, g.Cout*g.Cin/g.Groups*g.KH*g.KW, -1, 1))
	bs := nnFloat64s(nnUniform(rng, g.Cout, -1, 1))
	x := FromFloat64(dev, xs, g.inputShape()...)
	w := FromFloat64(dev, ws, g.weightShape()...)
	b := FromFloat64(dev, bs, g.Cout)
	defer releaseAll(x, w, b)
	want, mag, _, _ := refConv2d(xs, ws, bs, g)
	y := Conv2d(x, w, b, ConvOptions{Stride: g.Stride, Padding: g.Padding, Dilation: g.Dilation, Groups: g.Groups})
	defer y.Release()
	require.Equal(t, Float64, y.DType())
	got, err := y.Float64s()
	require.NoError(t, err)
	for i := range want {
		require.InDelta(t, want[i], got[i], nnFloat64Tol(want, mag)(i), "element %d", i)
	}
}

var convTranspose2dCases = []struct {
	name string
	g    conv2dGeometry
}{
	{"plain", conv2dGeometry{N: 2, Cin: 3, H: 4, W: 5, Cout: 2, KH: 3, KW: 3, Bias: true}},
	// Stride 1 runs as a convolution over the flipped weight where the
	// device has the Conv2D kernel, unless the padding exceeds the dilated
	// kernel's reach.
	{"stride1 pad dilation groups", conv2dGeometry{N: 2, Cin: 4, H: 5, W: 7, Cout: 6, KH: 3, KW: 2,
		Padding: [2]int{1, 1}, Dilation: [2]int{2, 1}, Groups: 2, Bias: true}},
	{"stride1 depthwise odd", conv2dGeometry{N: 3, Cin: 5, H: 7, W: 1, Cout: 5, KH: 3, KW: 1,
		Padding: [2]int{1, 0}, Groups: 5}},
	{"stride1 pad past kernel", conv2dGeometry{N: 1, Cin: 3, H: 6, W: 6, Cout: 2, KH: 2, KW: 3,
		Padding: [2]int{2, 1}, Bias: true}},
	{"stride2 pad1 outpad1", conv2dGeometry{N: 2, Cin: 2, H: 4, W: 3, Cout: 3, KH: 3, KW: 3,
		Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 1}, Bias: true}},
	{"dilation nonsquare", conv2dGeometry{N: 1, Cin: 2, H: 3, W: 4, Cout: 2, KH: 2, KW: 3,
		Stride: [2]int{2, 3}, Dilation: [2]int{2, 1}, OutputPadding: [2]int{1, 2}, Bias: true}},
	{"outpad below dilation", conv2dGeometry{N: 1, Cin: 2, H: 4, W: 4, Cout: 2, KH: 2, KW: 2,
		Dilation: [2]int{2, 2}, OutputPadding: [2]int{1, 0}}},
	{"groups2", conv2dGeometry{N: 2, Cin: 4, H: 3, W: 4, Cout: 6, KH: 3, KW: 2,
		Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Groups: 2, Bias: true}},
	{"depthwise", conv2dGeometry{N: 2, Cin: 3, H: 4, W: 3, Cout: 3, KH: 3, KW: 3,
		Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Groups: 3, Bias: true}},
	{"1x1 no bias", conv2dGeometry{N: 2, Cin: 3, H: 3, W: 2, Cout: 4, KH: 1, KW: 1}},
	{"1x1 stride2", conv2dGeometry{N: 2, Cin: 2, H: 3, W: 2, Cout: 2, KH: 1, KW: 1,
		Stride: [2]int{2, 2}, OutputPadding: [2]int{1, 0}, Bias: true}},
	{"everything", conv2dGeometry{N: 2, Cin: 4, H: 3, W: 5, Cout: 2, KH: 3, KW: 2,
		Stride: [2]int{3, 2}, Padding: [2]int{2, 1}, Dilation: [2]int{2, 3}, OutputPadding: [2]int{2, 1}, Groups: 2, Bias: true}},
}

func TestConvTranspose2d(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range convTranspose2dCases {
			t.Run(tc.name, func(t *testing.T) {
				g := tc.g.resolved()
				g.transposedWeight = true
				rng := nnRand(t)
				x, xs := nnInput(t, dev, rng, g.inputShape()...)
				w, ws := nnInput(t, dev, rng, g.weightShape()...)
				var b *Tensor
				var bs []float64
				if g.Bias {
					b, bs = nnInput(t, dev, rng, g.Cout)
				}
				want, mag, oh, ow := refConvTranspose2d(xs, ws, bs, g)
				y := ConvTranspose2d(x, w, b, ConvTransposeOptions{Stride: tc.g.Stride, Padding: tc.g.Padding,
					OutputPadding: tc.g.OutputPadding, Dilation: tc.g.Dilation, Groups: tc.g.Groups})
				require.Equal(t, []int{g.N, g.Cout, oh, ow}, y.Shape())
				nnRequireClose(t, tc.name, want, nnRead(t, y), nnSumTol(want, mag))
			})
		}
	})
}

// TestConvTranspose2dIsAdjoint checks ⟨conv(x), y⟩ = ⟨x, convT(y)⟩ with the
// same weight: the defining property, independent of any reference loop.
func TestConvTranspose2dIsAdjoint(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		g := conv2dGeometry{N: 2, Cin: 4, H: 7, W: 6, Cout: 2, KH: 3, KW: 2,
			Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 2}, Groups: 2}.resolved()
		rng := nnRand(t)
		oh := convOutSize(g.H, g.KH, g.Stride[0], g.Padding[0], g.Dilation[0])
		ow := convOutSize(g.W, g.KW, g.Stride[1], g.Padding[1], g.Dilation[1])
		// (H + 2p − d(k−1) − 1) mod s recovers the rows the forward conv skipped.
		opad := [2]int{(g.H + 2*g.Padding[0] - g.Dilation[0]*(g.KH-1) - 1) % g.Stride[0],
			(g.W + 2*g.Padding[1] - g.Dilation[1]*(g.KW-1) - 1) % g.Stride[1]}
		x, xs := nnInput(t, dev, rng, g.inputShape()...)
		w, _ := nnInput(t, dev, rng, g.weightShape()...) // [Cout, Cin/G, …] is convT's [Cin', Cout'/G, …]
		y, ys := nnInput(t, dev, rng, g.N, g.Cout, oh, ow)
		fx := nnRead(t, Conv2d(x, w, nil, ConvOptions{Stride: g.Stride, Padding: g.Padding, Dilation: g.Dilation, Groups: g.Groups}))
		ty := nnRead(t, ConvTranspose2d(y, w, nil, ConvTransposeOptions{Stride: g.Stride, Padding: g.Padding,
			Dilation: g.Dilation, Groups: g.Groups, OutputPadding: opad}))
		require.Len(t, ty, len(xs))
		var lhs, rhs, mag float64
		for i := range fx {
			lhs += float64(fx[i]) * ys[i]
			mag += math.Abs(float64(fx[i]) * ys[i])
		}
		for i := range ty {
			rhs += xs[i] * float64(ty[i])
		}
		require.InDelta(t, lhs, rhs, nnTolerance.adjoint*mag+nnTolerance.absolute, fmt.Sprintf("⟨conv x, y⟩ = %v, ⟨x, convT y⟩ = %v", lhs, rhs))
	})
}

// TestNNEmptyBatch: a batch of zero images is valid and gives empty
// results of the right shapes, as PyTorch.
func TestNNEmptyBatch(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		x := Zeros(dev, 0, 3, 5, 6)
		w := Zeros(dev, 4, 3, 3, 3)
		wt := Zeros(dev, 3, 2, 3, 3)
		defer releaseAll(x, w, wt)
		for _, tc := range []struct {
			name string
			y    *Tensor
			want []int
		}{
			{"conv2d", Conv2d(x, w, nil, ConvOptions{Padding: [2]int{1, 0}}), []int{0, 4, 5, 4}},
			{"conv_transpose2d", ConvTranspose2d(x, wt, nil, ConvTransposeOptions{Stride: [2]int{2, 2}}), []int{0, 2, 11, 13}},
			{"avg_pool2d", AvgPool2d(x, PoolOptions{Kernel: [2]int{2, 2}}, true), []int{0, 3, 2, 3}},
			{"adaptive_avg_pool2d", AdaptiveAvgPool2d(x, 1, 1), []int{0, 3, 1, 1}},
			{"softmax", x.Softmax(1), []int{0, 3, 5, 6}},
		} {
			assert.Equal(t, tc.want, tc.y.Shape(), tc.name)
			assert.Empty(t, nnRead(t, tc.y), tc.name)
		}
	})
}
