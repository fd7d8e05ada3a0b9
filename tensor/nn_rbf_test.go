package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRBFKernel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, tc := range []struct {
			name    string
			n, m, d int
			gamma   float64
		}{
			{"square", 5, 5, 3, 0.5},
			{"rectangular", 7, 4, 6, 0.2},
			{"one feature", 3, 8, 1, 2},
			{"one row", 1, 9, 4, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rng := nnRand(t)
				x, xs := nnInput(t, dev, rng, tc.n, tc.d)
				y, ys := nnInput(t, dev, rng, tc.m, tc.d)
				want := refRBFKernel(xs, ys, tc.n, tc.m, tc.d, tc.gamma)
				k := RBFKernel(x, y, tc.gamma)
				require.Equal(t, []int{tc.n, tc.m}, k.Shape())
				nnRequireClose(t, tc.name, want, nnRead(t, k), func(i int) float64 {
					return nnTolerance.rbfDistance*tc.gamma*float64(tc.d) + nnValueTol(want)(i)
				})
			})
		}
	})
}

// TestRBFKernelSelfIsAtMostOne compares a set of points with itself: the
// diagonal distances are zero and rounding must not push them negative
// (which would give K > 1).
func TestRBFKernelSelfIsAtMostOne(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		data := nnUniform(nnRand(t), 6*5, -3, 3)
		x := FromFloat32(dev, data, 6, 5)
		defer x.Release()
		got := nnRead(t, RBFKernel(x, x, 0.7))
		for i, v := range got {
			require.LessOrEqual(t, v, float32(1), "element %d", i)
			if i%7 == 0 { // the diagonal of a 6×6 matrix
				require.InDelta(t, 1, v, nnTolerance.rbfDistance*0.7*5*9, "diagonal element %d", i) // inputs in [−3, 3): ‖x‖² ≤ 9d
			}
		}
	})
}
