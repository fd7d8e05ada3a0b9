package tensor

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBatchNorm(t *testing.T) {
	const momentum, eps = 0.1, 1e-5
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range []struct {
			name     string
			shape    []int
			training bool
			affine   bool
			running  bool
		}{
			{"2d training", []int{6, 3}, true, true, true},
			{"2d eval", []int{5, 4}, false, true, true},
			{"4d training", []int{3, 2, 4, 5}, true, true, true},
			{"4d eval", []int{2, 3, 3, 2}, false, true, true},
			{"3d training no affine", []int{4, 3, 5}, true, false, true},
			{"training no running stats", []int{2, 3, 2, 2}, true, true, false},
			{"eval no affine", []int{2, 2, 3, 3}, false, false, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rng := nnRand(t)
				c := tc.shape[1]
				x, xs := nnInput(t, dev, rng, tc.shape...)
				var weight, bias, runMean, runVar *Tensor
				var ws, bs, ms, vs []float64
				if tc.affine {
					weight, ws = nnInput(t, dev, rng, c)
					bias, bs = nnInput(t, dev, rng, c)
				}
				if tc.running {
					runMean, ms = nnInput(t, dev, rng, c)
					// A variance is positive.
					vdata := nnUniform(rng, c, 0.5, 2)
					runVar, vs = FromFloat32(dev, vdata, c), nnFloat64s(vdata)
					t.Cleanup(runVar.Release)
				}
				want, wantMean, wantVar := refBatchNorm(xs, tc.shape, ms, vs, ws, bs, tc.training, momentum, eps)
				y := BatchNorm(x, runMean, runVar, weight, bias, tc.training, momentum, eps)
				require.Equal(t, tc.shape, y.Shape())
				nnRequireClose(t, tc.name, want, nnRead(t, y), nnValueTol(want))
				if tc.running {
					// In training the running statistics moved; in eval
					// they must be untouched.
					gotMean, err := runMean.Float32s()
					require.NoError(t, err)
					nnRequireClose(t, "running mean", wantMean, gotMean, nnValueTol(wantMean))
					gotVar, err := runVar.Float32s()
					require.NoError(t, err)
					nnRequireClose(t, "running var", wantVar, gotVar, nnValueTol(wantVar))
				}
			})
		}
	})
}

// TestBatchNormRunningStatsThroughView updates running statistics that
// are a view of a larger buffer: the update lands in that buffer, in
// place, as PyTorch's does.
func TestBatchNormRunningStatsThroughView(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		stats := FromFloat32(dev, []float32{0, 0, 1, 1}, 2, 2) // row 0 mean, row 1 var
		defer stats.Release()
		mean := stats.Slice(0, 0, 1, 1).Reshape(2)
		variance := stats.Slice(0, 1, 2, 1).Reshape(2)
		defer releaseAll(mean, variance)
		x := FromFloat32(dev, []float32{1, 10, 3, 20}, 2, 2)
		defer x.Release()
		BatchNorm(x, mean, variance, nil, nil, true, 0.5, 1e-5).Release()
		got, err := stats.Float32s()
		require.NoError(t, err)
		// Batch means 2 and 15; unbiased variances 2 and 50.
		want := []float64{1, 7.5, 1.5, 25.5}
		nnRequireClose(t, "running stats", want, got, nnValueTol(want))
	})
}

// TestLayerNorm checks LayerNorm against float64 on every device, with
// its fused kernel and with the composition (forEachTier): one and
// several normalized axes (collapsed into one row axis for the kernel),
// with and without weight and bias, and transposed inputs, whose rows
// are strided (one axis) or must be copied to be collapsed (two).
func TestLayerNorm(t *testing.T) {
	const eps = 1e-5
	forEachTier(t, func(t *testing.T, dev *Device) {
		for _, tc := range []struct {
			name       string
			shape      []int
			normalized []int
			affine     bool
			transposed bool // x is the transpose of its last two axes
		}{
			{"last axis", []int{2, 3, 7}, []int{7}, true, false},
			{"two axes", []int{3, 4, 5}, []int{4, 5}, true, false},
			{"all axes no affine", []int{2, 6}, []int{2, 6}, false, false},
			{"4d", []int{2, 2, 3, 4}, []int{3, 4}, true, false},
			{"odd rows", []int{5, 33}, []int{33}, true, false},
			{"strided rows", []int{3, 9, 33}, []int{33}, false, true},
			{"two strided axes", []int{2, 5, 3}, []int{5, 3}, true, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rng := nnRand(t)
				r := len(tc.shape)
				stored := slices.Clone(tc.shape)
				if tc.transposed {
					stored[r-1], stored[r-2] = stored[r-2], stored[r-1]
				}
				x, xs := nnInput(t, dev, rng, stored...)
				if tc.transposed {
					xt := x.Transpose(r-2, r-1)
					defer xt.Release()
					require.False(t, xt.IsContiguous())
					x, xs = xt, transposeLast2(xs, stored)
				}
				size := 1
				for _, d := range tc.normalized {
					size *= d
				}
				var weight, bias *Tensor
				var ws, bs []float64
				if tc.affine {
					weight, ws = nnInput(t, dev, rng, tc.normalized...)
					bias, bs = nnInput(t, dev, rng, tc.normalized...)
				}
				want := refLayerNorm(xs, size, ws, bs, eps)
				y := LayerNorm(x, tc.normalized, weight, bias, eps)
				require.Equal(t, tc.shape, y.Shape())
				nnRequireClose(t, tc.name, want, nnRead(t, y), nnValueTol(want))
			})
		}
	})
}

// transposeLast2 is v, row-major of shape, with its last two axes swapped.
func transposeLast2(v []float64, shape []int) []float64 {
	r := len(shape)
	a, b := shape[r-2], shape[r-1]
	out := make([]float64, len(v))
	for base := 0; base < len(v); base += a * b {
		for i := range a {
			for j := range b {
				out[base+j*a+i] = v[base+i*b+j]
			}
		}
	}
	return out
}

// TestLayerNormLargeOffset normalizes rows whose mean dwarfs their spread:
// the two-pass variance keeps the result accurate where E[x²] − E[x]²
// would cancel to garbage in float32.
func TestLayerNormLargeOffset(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		rng := nnRand(t)
		data := nnUniform(rng, 4*16, -1, 1)
		for i := range data {
			data[i] += 1000
		}
		x := FromFloat32(dev, data, 4, 16)
		defer x.Release()
		want := refLayerNorm(nnFloat64s(data), 16, nil, nil, 1e-5)
		got := nnRead(t, LayerNorm(x, []int{16}, nil, nil, 1e-5))
		nnRequireClose(t, "offset rows", want, got, func(int) float64 { return nnTolerance.offsetRows })
	})
}
