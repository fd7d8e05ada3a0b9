//go:build cgo

package wgpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu"
	"github.com/webtensor/webtensor/tensor"
)

// TestFusionLinearReLU checks the acceptance case of fusion: relu(x·W + b)
// written with tensor ops (MatMul, a broadcast Add, ReLU) is one dispatch
// on the WebGPU device, and its values match a float64 reference.
func TestFusionLinearReLU(t *testing.T) { forEachFusionDevice(t, testFusionLinearReLU) }

func testFusionLinearReLU(t *testing.T, dev *tensor.Device) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{2, 7, 5}, {7, 33, 1025}, {65, 100, 70}} {
		m, k, n := sz[0], sz[1], sz[2]
		random := func(count int) []float32 {
			v := make([]float32, count)
			for i := range v {
				v[i] = float32(rng.Float64()*2 - 1)
			}
			return v
		}
		xs, ws, bs := random(m*k), random(k*n), random(n)
		x := tensor.FromFloat32(dev, xs, m, k)
		w := tensor.FromFloat32(dev, ws, k, n)
		b := tensor.FromFloat32(dev, bs, n)
		require.NoError(t, dev.Sync())

		before := dev.Stats().Dispatches
		xw := tensor.MatMul(x, w)
		pre := tensor.Add(xw, b)
		y := tensor.ReLU(pre)
		xw.Release()
		pre.Release()
		got, err := y.Float64s()
		require.NoError(t, err)
		require.Equal(t, int64(1), dev.Stats().Dispatches-before, "relu(x·W + b) of %dx%d·%dx%d is one dispatch", m, k, k, n)

		for i := range m {
			for j := range n {
				s := float64(bs[j])
				for l := range k {
					s += float64(xs[i*k+l]) * float64(ws[l*n+j])
				}
				want := math.Max(s, 0)
				require.InDelta(t, want, got[i*n+j], 1e-5*(1+math.Abs(want)*float64(k)), "element (%d, %d) of %dx%d·%dx%d", i, j, m, k, k, n)
			}
		}
		for _, v := range []*tensor.Tensor{x, w, b, y} {
			v.Release()
		}
	}
}

func leaky(v, slope float64) float64 {
	if v < 0 {
		return v * slope
	}
	return v
}

// epilogueChain runs (x·W + b).LeakyReLU(slope).Clamp(lo, hi) and then
// LeakyReLU with each of more slopes as tensor ops, checks the values
// against float64, and returns the dispatches the chain took.
func epilogueChain(t *testing.T, dev *tensor.Device, rng *rand.Rand, m, k, n int, slope, lo, hi float64, more []float64) int64 {
	t.Helper()
	xs, ws, bs := randomF32(rng, m*k), randomF32(rng, k*n), randomF32(rng, n)
	x := tensor.FromFloat32(dev, xs, m, k)
	w := tensor.FromFloat32(dev, ws, k, n)
	b := tensor.FromFloat32(dev, bs, n)
	defer func() {
		for _, v := range []*tensor.Tensor{x, w, b} {
			v.Release()
		}
	}()
	require.NoError(t, dev.Sync())
	before := dev.Stats().Dispatches
	steps := []func(*tensor.Tensor) *tensor.Tensor{
		func(v *tensor.Tensor) *tensor.Tensor { return tensor.Add(v, b) },
		func(v *tensor.Tensor) *tensor.Tensor { return v.LeakyReLU(slope) },
		func(v *tensor.Tensor) *tensor.Tensor { return v.Clamp(lo, hi) },
	}
	for _, s := range more {
		steps = append(steps, func(v *tensor.Tensor) *tensor.Tensor { return v.LeakyReLU(s) })
	}
	y := tensor.MatMul(x, w)
	var intermediates []*tensor.Tensor
	for _, step := range steps {
		intermediates = append(intermediates, y)
		y = step(y)
	}
	defer y.Release()
	for _, v := range intermediates {
		v.Release()
	}
	got, err := y.Float64s()
	require.NoError(t, err)
	dispatches := dev.Stats().Dispatches - before
	for i := range m {
		for j := range n {
			s := float64(bs[j])
			for l := range k {
				s += float64(xs[i*k+l]) * float64(ws[l*n+j])
			}
			want := min(max(leaky(s, slope), lo), hi)
			for _, c := range more {
				want = leaky(want, c)
			}
			require.InDelta(t, want, got[i*n+j], 1e-5*(1+math.Abs(s)*float64(k)),
				"element (%d, %d) of %dx%d·%dx%d, slope %v, clamp [%v, %v], %d more slopes", i, j, m, k, k, n, slope, lo, hi, len(more))
		}
	}
	return dispatches
}

// TestEpilogueKernelServesEveryShape checks that a GEMM's fused epilogue
// takes its shapes, offsets and constants as uniform words: after the
// first run, (x·W + b).LeakyReLU(slope).Clamp(lo, hi) over other sizes
// and other constants compiles nothing more, and each is one dispatch. An
// epilogue with more words than the producer keeps for it (a long chain
// of constants) falls back to literals: still right and one dispatch, at
// the cost of a kernel per set of constants.
func TestEpilogueKernelServesEveryShape(t *testing.T) {
	forEachFusionDevice(t, testEpilogueKernelServesEveryShape)
}

func testEpilogueKernelServesEveryShape(t *testing.T, dev *tensor.Device) {
	rng := rand.New(rand.NewPCG(3, 4))
	require.Equal(t, int64(1), epilogueChain(t, dev, rng, 5, 8, 12, 0.1, -0.5, 0.5, nil))
	kernels := dev.Stats().Kernels
	require.Positive(t, kernels)
	// Sizes of one GEMM variant: k and n multiples of 4 keep the vector
	// loads, which choose the variant.
	for _, sz := range [][3]int{{3, 16, 4}, {7, 12, 20}, {9, 4, 8}, {5, 8, 12}} {
		slope, lo, hi := rng.Float64()*0.5+0.01, -rng.Float64()-0.1, rng.Float64()+0.1
		require.Equal(t, int64(1), epilogueChain(t, dev, rng, sz[0], sz[1], sz[2], slope, lo, hi, nil), "dispatches of %v", sz)
	}
	require.Equal(t, kernels, dev.Stats().Kernels, "kernels compiled for other shapes and constants")

	// Past the words the producer keeps (lowered here to what a short
	// chain needs): literals, so other constants compile another kernel.
	defer wgpu.LimitEpilogueWords(4)()
	require.Equal(t, int64(1), epilogueChain(t, dev, rng, 5, 8, 12, 0.1, -0.5, 0.5, []float64{0.5, 0.75}))
	kernels = dev.Stats().Kernels
	require.Equal(t, int64(1), epilogueChain(t, dev, rng, 5, 8, 12, 0.1, -0.5, 0.5, []float64{0.5, 0.75}))
	require.Equal(t, kernels, dev.Stats().Kernels, "the same shape and constants: the same kernel")
	require.Equal(t, int64(1), epilogueChain(t, dev, rng, 7, 12, 20, 0.2, -0.25, 0.75, []float64{0.5, 0.8}))
	require.Greater(t, dev.Stats().Kernels, kernels, "literal words: other shapes and constants, another kernel")
}

// TestFusedDivisionByZero checks that a constant divisor 0 fused into a
// kernel (the Fill of DivScalar's scalar joins the Div on a one-element
// tensor, as in Mean over no elements) divides at run time as IEEE and
// torch do: ±Inf, and NaN for 0/0. A literal 0 in the shader let
// llvmpipe fold x / 0 to 0.
func TestFusedDivisionByZero(t *testing.T) { forEachFusionDevice(t, testFusedDivisionByZero) }

func testFusedDivisionByZero(t *testing.T, dev *tensor.Device) {
	for _, shape := range [][]int{nil, {1}, {1, 1}} {
		for _, x := range []float32{3, -2.5, 0} {
			v := tensor.FromFloat32(dev, []float32{x}, shape...)
			q := v.DivScalar(0)
			got, err := q.Float64s()
			require.NoError(t, err)
			want := float64(x) / math.Copysign(0, 1)
			if x == 0 {
				require.True(t, math.IsNaN(got[0]), "%v / 0 over shape %v: got %v, want NaN", x, shape, got[0])
			} else {
				require.Equal(t, want, got[0], "%v / 0 over shape %v", x, shape)
			}
			q.Release()
			v.Release()
		}
	}
	empty := tensor.FromFloat32(dev, nil, 0)
	defer empty.Release()
	mean := empty.Mean(nil, false)
	defer mean.Release()
	got, err := mean.Float64s()
	require.NoError(t, err)
	require.True(t, math.IsNaN(got[0]), "mean of no elements: got %v, want NaN", got[0])
}
