package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mean, Var and Std of Float16 accumulate in Float32 and round once, as
// torch does: rows whose sum (409,600) and sum of squared deviations
// (10,240,000) are far past float16's 65504 still give their mean (100),
// variance (2500) and deviation (50). Every intermediate is exact in
// float32, so each result is the float16 rounding of the float64 value.
func TestStatsFloat16AccumulateInFloat32(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, op := range []string{"Mean", "Var", "Std"} {
			if !Supports(dev, op, Float16) {
				t.Skipf("%v runs no float16 %s", dev, op)
			}
		}
		const rows, n = 2, 4096
		vals := make([]float64, rows*n)
		for i := range vals {
			vals[i] = 100 + 50*float64(1-2*(i%2)) // 150, 50, 150, …
		}
		x := upload(dev, Float16, vals, rows, n)
		defer x.Release()
		cases := []struct {
			name string
			run  func() *Tensor
			want float64
		}{
			{"mean", func() *Tensor { return x.Mean([]int{1}, false) }, 100},
			{"var/population", func() *Tensor { return x.Var([]int{1}, 0, false) }, 2500},
			{"var/unbiased", func() *Tensor { return x.Var([]int{1}, 1, false) }, 2500 * n / (n - 1)},
			{"std/keepdim", func() *Tensor { return x.Std([]int{1}, 0, true) }, 50},
			{"mean/all", func() *Tensor { return x.Mean(nil, false) }, 100},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := c.run()
				defer got.Release()
				assert.Equal(t, Float16, got.DType())
				want := roundTo(Float16, c.want)
				for i, v := range read64(t, got) {
					require.False(t, math.IsInf(v, 0), "element %d overflowed", i)
					assert.Equal(t, want, v, "element %d", i)
				}
			})
		}
	})
}
