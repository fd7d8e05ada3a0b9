package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLayerNormRowF32 checks the float32 row kernel with the SIMD sum and
// with the portable loop (withBoth) against float64, at odd lengths around
// the SIMD widths and past sumF32's two-stream threshold, on rows of
// large mean (a one-pass variance cancels there).
func TestLayerNormRowF32(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(15, 1))
		for _, n := range []int{1, 3, 7, 8, 17, 33, 1000, 4100, 1<<18 + 5} {
			for _, offset := range []float64{0, 1000} {
				t.Run(fmt.Sprintf("n=%d/mean=%g", n, offset), func(t *testing.T) {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(offset + 4*rng.NormFloat64())
					}
					const eps = 0.25
					var s, mag float64
					for _, v := range x {
						s += float64(v)
						mag += math.Abs(float64(v))
					}
					m := s / float64(n)
					var q float64
					for _, v := range x {
						q += (float64(v) - m) * (float64(v) - m)
					}
					r := 1 / math.Sqrt(q/float64(n)+eps)
					got := make([]float32, n)
					layerNormRowF32(got, x, eps)
					for i, v := range x {
						want := (float64(v) - m) * r
						// The sums are float64; x − mean rounds once
						// against mean's own rounding, then r and the
						// product (a few u relative to y).
						tol := 0x1p-24 * (4*math.Abs(want) + 2*r*(math.Abs(float64(v))+math.Abs(m)))
						if !assert.InDelta(t, want, float64(got[i]), tol, "[%d] of %d", i, n) {
							return
						}
					}
				})
			}
		}
	})
}
