package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/hal"
)

// TestFillConst fills contiguous views with constants, which take the
// fast path, and expects exactly what the general path stores into every
// other element of a strided view: the same rounding, saturation and NaN
// handling per dtype.
func TestFillConst(t *testing.T) {
	h := newHarness(t)
	values := []float64{0, -1.5, 0.1, 1e10, -1e10, 70000, math.Inf(-1), math.NaN()}
	for _, n := range []int{1, 7, 1000, 1025, 70000} {
		for _, dt := range hal.DTypes {
			for _, v := range values {
				dst := h.zeros(dt, n)
				require.NoError(t, h.dev.Fill(dst, v, 0))
				strided := h.zeros(dt, 2*n)
				strided = hal.View{Buf: strided.Buf, DType: dt, Shape: []int{n}, Strides: []int{2}}
				require.NoError(t, h.dev.Fill(strided, v, 0))
				got, want := h.read(dst), h.read(strided)
				for i := range got {
					if !(math.IsNaN(want[i]) && math.IsNaN(got[i])) && want[i] != got[i] {
						assert.Fail(t, "mismatch", "%v n=%d value %v element %d: got %v want %v", dt, n, v, i, got[i], want[i])
						break
					}
				}
				if !math.IsNaN(v) && math.Abs(v) < 1e9 && (dt != hal.Int32 || v == math.Trunc(v)) {
					assert.Equal(t, round(dt, v), got[n-1], "%v %v", dt, v)
				}
			}
		}
	}
}
