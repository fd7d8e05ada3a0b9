package tensor

import (
	"errors"
	"maps"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/hal"
)

// nnFloat64Input returns a random float64 tensor of shape on dev and its
// values.
func nnFloat64Input(t *testing.T, dev *Device, shape ...int) (*Tensor, []float64) {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	rng := nnRand(t)
	data := make([]float64, n)
	for i := range data {
		data[i] = 2*rng.Float64() - 1
	}
	x := FromFloat64(dev, data, shape...)
	t.Cleanup(x.Release)
	return x, data
}

// nnRead64 reads a float64 result, checks its dtype and releases it.
func nnRead64(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	defer x.Release()
	require.Equal(t, Float64, x.DType())
	got, err := x.Float64s()
	require.NoError(t, err)
	return got
}

func nnRequireClose64(t *testing.T, name string, want, mag, got []float64) {
	t.Helper()
	require.Len(t, got, len(want), name)
	tol := nnFloat64Tol(want, mag)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol(i)) {
			t.Fatalf("%s: element %d: got %v, want %v (|diff| %.3g > %.3g)", name, i, got[i], want[i], d, tol(i))
		}
	}
}

// TestNNFloat64 runs every NN op in float64 on the CPU backend (the one
// with float64), to float64 precision: the ops keep the dtype all the way
// through, with no float32 step (AffineGrid builds its coordinates in
// float64, Dropout casts its mask).
func TestNNFloat64(t *testing.T) {
	dev := openCPU(t)
	t.Run("ConvTranspose2d", func(t *testing.T) {
		g := conv2dGeometry{N: 2, Cin: 4, H: 3, W: 4, Cout: 2, KH: 3, KW: 2, Stride: [2]int{2, 1},
			Padding: [2]int{1, 0}, OutputPadding: [2]int{1, 0}, Groups: 2, Bias: true, transposedWeight: true}.resolved()
		x, xs := nnFloat64Input(t, dev, g.inputShape()...)
		w, ws := nnFloat64Input(t, dev, g.weightShape()...)
		b, bs := nnFloat64Input(t, dev, g.Cout)
		want, mag, _, _ := refConvTranspose2d(xs, ws, bs, g)
		got := nnRead64(t, ConvTranspose2d(x, w, b, ConvTransposeOptions{Stride: g.Stride, Padding: g.Padding,
			OutputPadding: g.OutputPadding, Groups: g.Groups}))
		nnRequireClose64(t, "conv_transpose2d", want, mag, got)
	})
	t.Run("Pool", func(t *testing.T) {
		g := poolGeometry{N: 2, C: 2, H: 7, W: 6, Opts: PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 2},
			Padding: [2]int{1, 1}, CeilMode: true}}
		x, xs := nnFloat64Input(t, dev, g.N, g.C, g.H, g.W)
		wantMax, wantIdx, _, _ := refMaxPool2d(xs, g)
		values, indices := MaxPool2d(x, g.Opts)
		nnRequireClose64(t, "max_pool2d", wantMax, nil, nnRead64(t, values))
		idx, err := indices.Int32s()
		indices.Release()
		require.NoError(t, err)
		require.Equal(t, wantIdx, idx)
		wantAvg, _, _ := refAvgPool2d(xs, g, false)
		nnRequireClose64(t, "avg_pool2d", wantAvg, nil, nnRead64(t, AvgPool2d(x, g.Opts, false)))
		wantGlobal, _, _ := refAvgPool2d(xs, poolGeometry{N: 2, C: 2, H: 7, W: 6, Opts: PoolOptions{Kernel: [2]int{7, 6}}}, true)
		nnRequireClose64(t, "adaptive_avg_pool2d", wantGlobal, nil, nnRead64(t, AdaptiveAvgPool2d(x, 1, 1)))
	})
	t.Run("Norm", func(t *testing.T) {
		shape := []int{3, 2, 4}
		x, xs := nnFloat64Input(t, dev, shape...)
		mean := FromFloat64(dev, []float64{0.1, -0.2}, 2)
		variance := FromFloat64(dev, []float64{1.5, 0.5}, 2)
		weight := FromFloat64(dev, []float64{0.5, 2}, 2)
		bias := FromFloat64(dev, []float64{1, -1}, 2)
		defer releaseAll(mean, variance, weight, bias)
		want, wantMean, wantVar := refBatchNorm(xs, shape, []float64{0.1, -0.2}, []float64{1.5, 0.5},
			[]float64{0.5, 2}, []float64{1, -1}, true, 0.1, 1e-5)
		nnRequireClose64(t, "batch_norm", want, nil, nnRead64(t, BatchNorm(x, mean, variance, weight, bias, true, 0.1, 1e-5)))
		gotMean, err := mean.Float64s()
		require.NoError(t, err)
		nnRequireClose64(t, "running mean", wantMean, nil, gotMean)
		gotVar, err := variance.Float64s()
		require.NoError(t, err)
		nnRequireClose64(t, "running var", wantVar, nil, gotVar)
		nnRequireClose64(t, "layer_norm", refLayerNorm(xs, 8, nil, nil, 1e-5), nil,
			nnRead64(t, LayerNorm(x, []int{2, 4}, nil, nil, 1e-5)))
		nnRequireClose64(t, "softmax", refSoftmax(xs, shape, 1, false), nil, nnRead64(t, x.Softmax(1)))
	})
	t.Run("Sampling", func(t *testing.T) {
		theta, ts := nnFloat64Input(t, dev, 2, 2, 3)
		for _, align := range []bool{false, true} {
			grid := AffineGrid(theta, []int{2, 3, 4, 5}, align)
			g, err := grid.Float64s()
			require.NoError(t, err)
			nnRequireClose64(t, "affine_grid", refAffineGrid(ts, 2, 4, 5, align), nil, g)
			x, xs := nnFloat64Input(t, dev, 2, 3, 3, 4)
			want := refGridSample(xs, 2, 3, 3, 4, g, 4, 5, true, align)
			nnRequireClose64(t, "grid_sample", want, nil, nnRead64(t, GridSample(x, grid, GridBorder, align)))
			grid.Release()
		}
	})
	t.Run("RBFKernel", func(t *testing.T) {
		x, xs := nnFloat64Input(t, dev, 4, 3)
		y, ys := nnFloat64Input(t, dev, 5, 3)
		want := refRBFKernel(xs, ys, 4, 5, 3, 0.8)
		// The norms form loses ~2⁻⁵²·(‖x‖² + ‖y‖²) ≤ 2⁻⁵²·6 to cancellation.
		nnRequireClose64(t, "rbf", want, nil, nnRead64(t, RBFKernel(x, y, 0.8)))
	})
	t.Run("Dropout", func(t *testing.T) {
		x, xs := nnFloat64Input(t, dev, 10, 10)
		got := nnRead64(t, Dropout(x, 0.5, true, NewGenerator(3)))
		// The mask is the float32 stream's, cast.
		x32 := FromFloat32(dev, make([]float32, 100), 10, 10)
		defer x32.Release()
		ones := x32.AddScalar(1)
		defer ones.Release()
		mask := nnRead(t, Dropout(ones, 0.5, true, NewGenerator(3)))
		for i := range got {
			require.Equal(t, xs[i]*float64(mask[i]), got[i], "element %d", i)
		}
	})
}

// TestNNFloat16 runs the NN ops on float16 tensors on the CPU backend,
// which computes them by conversion; the tolerance is float16's (2⁻¹¹
// relative per rounding, a few roundings deep).
func TestNNFloat16(t *testing.T) {
	dev := openCPU(t)
	if !Supports(dev, "Conv2d", Float16) {
		t.Skip("the CPU backend declares no float16 convolution")
	}
	rng := nnRand(t)
	g := conv2dGeometry{N: 1, Cin: 2, H: 5, W: 4, Cout: 2, KH: 3, KW: 3, Padding: [2]int{1, 1}}.resolved()
	xs := nnFloat64s(nnUniform(rng, g.N*g.Cin*g.H*g.W, -1, 1))
	ws := nnFloat64s(nnUniform(rng, g.Cout*g.Cin*g.KH*g.KW, -1, 1))
	x16 := nnHalf(t, dev, xs, g.inputShape()...)
	w16 := nnHalf(t, dev, ws, g.weightShape()...)
	// The reference sees the inputs as rounded to float16.
	xs, ws = nnFloat64sOf(t, x16), nnFloat64sOf(t, w16)
	half := func(want, mag []float64) func(int) float64 {
		return func(i int) float64 {
			return nnTolerance.float16Relative*(math.Abs(want[i])+mag[i]) + nnTolerance.float16Absolute
		}
	}

	want, mag, _, _ := refConv2d(xs, ws, nil, g)
	y := Conv2d(x16, w16, nil, ConvOptions{Padding: g.Padding})
	require.Equal(t, Float16, y.DType())
	nnRequireClose(t, "conv2d float16", want, nnRead(t, y), half(want, mag))

	shape := g.inputShape()
	zero := make([]float64, len(xs))
	wantSoft := refSoftmax(xs, shape, 1, false)
	nnRequireClose(t, "softmax float16", wantSoft, nnRead(t, x16.Softmax(1)), half(wantSoft, zero))
	wantLN := refLayerNorm(xs, g.H*g.W, nil, nil, 1e-5)
	nnRequireClose(t, "layer_norm float16", wantLN, nnRead(t, LayerNorm(x16, []int{g.H, g.W}, nil, nil, 1e-5)), half(wantLN, zero))
	wantMax, _, _, _ := refMaxPool2d(xs, poolGeometry{N: 1, C: 2, H: 5, W: 4, Opts: PoolOptions{Kernel: [2]int{2, 2}}})
	values, indices := MaxPool2d(x16, PoolOptions{Kernel: [2]int{2, 2}})
	indices.Release()
	nnRequireClose(t, "max_pool2d float16", wantMax, nnRead(t, values), func(int) float64 { return 0 })
}

// nnHalf makes a float16 tensor of values (rounded to nearest).
func nnHalf(t *testing.T, dev *Device, values []float64, shape ...int) *Tensor {
	t.Helper()
	x := FromFloat64(dev, values, shape...)
	defer x.Release()
	h := x.Cast(Float16)
	t.Cleanup(h.Release)
	return h
}

func nnFloat64sOf(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// trimmedDevice is a CPU device that declares no NN kernels, standing in
// for a backend that lacks them.
type trimmedDevice struct{ hal.Device }

func (d trimmedDevice) Capabilities() hal.Capabilities {
	caps := maps.Clone(d.Device.Capabilities())
	for _, k := range []string{hal.KernelIm2Col, hal.KernelCol2Im, hal.PoolMax.Kernel(), hal.PoolAvg.Kernel(), hal.KernelGridSample} {
		delete(caps, k)
	}
	return caps
}

// TestNNUnsupported: an op whose kernel the device lacks panics with an
// *Error wrapping hal.ErrUnsupported that names the op the user called,
// the dtype and the device — before anything runs.
func TestNNUnsupported(t *testing.T) {
	cpu := openCPU(t)
	dev := newDevice("trimmed", trimmedDevice{cpu.hal})
	x := Zeros(dev, 1, 2, 4, 4)
	w := Zeros(dev, 2, 2, 3, 3)
	grid := Zeros(dev, 1, 2, 2, 2)
	defer releaseAll(x, w, grid)
	for _, tc := range []struct {
		op, kernel string
		f          func()
	}{
		{"Conv2d", "im2col", func() { Conv2d(x, w, nil, ConvOptions{}) }},
		{"ConvTranspose2d", "col2im", func() { ConvTranspose2d(x, w, nil, ConvTransposeOptions{}) }},
		{"MaxPool2d", "pool2d.max", func() { MaxPool2d(x, PoolOptions{Kernel: [2]int{2, 2}}) }},
		{"AvgPool2d", "pool2d.avg", func() { AvgPool2d(x, PoolOptions{Kernel: [2]int{2, 2}}, true) }},
		{"AdaptiveAvgPool2d", "pool2d.avg", func() { AdaptiveAvgPool2d(x, 2, 2) }},
		{"GridSample", "grid_sample", func() { GridSample(x, grid, GridZeros, false) }},
	} {
		t.Run(tc.op, func(t *testing.T) {
			assert.False(t, Supports(dev, tc.op, Float32))
			err := Catch(tc.f)
			require.True(t, errors.Is(err, hal.ErrUnsupported), "got %v", err)
			assert.Equal(t, "tensor: "+tc.op+": float32 on "+dev.String()+": unsupported operation (no "+tc.kernel+" kernel for float32)", err.Error())
		})
	}
	// The ops built from other kernels still run.
	y := nnRead(t, x.Softmax(1))
	assert.Len(t, y, 32)
}
