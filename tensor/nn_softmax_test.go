package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSoftmax(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		shape := []int{3, 5, 7}
		for _, dim := range []int{0, 1, 2, -1, -3} {
			for _, logarithm := range []bool{false, true} {
				name := fmt.Sprintf("%s dim %d", map[bool]string{false: "softmax", true: "log_softmax"}[logarithm], dim)
				t.Run(name, func(t *testing.T) {
					x, xs := nnInput(t, dev, nnRand(t), shape...)
					axis := (dim + len(shape)) % len(shape)
					want := refSoftmax(xs, shape, axis, logarithm)
					var y *Tensor
					if logarithm {
						y = x.LogSoftmax(dim)
					} else {
						y = x.Softmax(dim)
					}
					require.Equal(t, shape, y.Shape())
					nnRequireClose(t, name, want, nnRead(t, y), nnValueTol(want))
				})
			}
		}
	})
}

// TestSoftmaxLargeLogits feeds logits whose exponentials overflow float32
// (e^1000) and differ by amounts that a naive exp would lose entirely.
func TestSoftmaxLargeLogits(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		data := []float32{
			1000, 1001, 1002, 999,
			-1000, -1001, -1002, -999,
			88, 89, 90, -1e4,
		}
		x := FromFloat32(dev, data, 3, 4)
		defer x.Release()
		xs := nnFloat64s(data)
		for _, logarithm := range []bool{false, true} {
			want := refSoftmax(xs, []int{3, 4}, 1, logarithm)
			var got []float32
			if logarithm {
				got = nnRead(t, LogSoftmax(x, 1))
			} else {
				got = nnRead(t, Softmax(x, 1))
			}
			for i, v := range got {
				require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0), "element %d is %v", i, v)
			}
			// log_softmax(−1e4 among ~90) is ≈ −1e4: relative tolerance.
			nnRequireClose(t, "large logits", want, got, nnValueTol(want))
		}
	})
}

// TestSoftmaxNegativeInfinity: −∞ logits get probability 0 (log −∞), as
// masked attention relies on.
func TestSoftmaxNegativeInfinity(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		inf := float32(math.Inf(-1))
		x := FromFloat32(dev, []float32{0, inf, 0, inf}, 1, 4)
		defer x.Release()
		want := []float64{0.5, 0, 0.5, 0}
		nnRequireClose(t, "softmax", want, nnRead(t, x.Softmax(-1)), nnValueTol(want))
		got := nnRead(t, x.LogSoftmax(-1))
		require.InDelta(t, -math.Ln2, got[0], nnValueTol([]float64{math.Ln2})(0))
		require.True(t, math.IsInf(float64(got[1]), -1))
	})
}

func TestSoftmaxScalarAndFloat64(t *testing.T) {
	dev := openCPU(t)
	s := FromFloat32(dev, []float32{3})
	r := s.Reshape()
	defer releaseAll(s, r)
	one := r.Softmax(0)
	require.Empty(t, one.Shape())
	require.Equal(t, []float32{1}, nnRead(t, one))

	data := []float64{1, 2, 3, 4, 5, 6}
	x := FromFloat64(dev, data, 2, 3)
	defer x.Release()
	y := x.LogSoftmax(0)
	defer y.Release()
	require.Equal(t, Float64, y.DType())
	got, err := y.Float64s()
	require.NoError(t, err)
	want := refSoftmax(data, []int{2, 3}, 0, true)
	for i := range want {
		require.InDelta(t, want[i], got[i], nnFloat64Tol(want, nil)(i))
	}
}
