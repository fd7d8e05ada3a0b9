package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// TestMaxPool2x2 checks 2×2 stride-2 max pooling (the AVX2 kernel and its
// padded tail, and the portable loop) against poolRef: output rows from 1
// to 17 wide (one kernel group, one and a tail, a tail only), odd input
// sizes whose last row and column no window covers, rows longer than the
// plane, ties (the first wins), signed zeros, NaN (the first NaN wins),
// and infinities.
func TestMaxPool2x2(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, simd := range []bool{true, false} {
		for _, s := range []struct{ n, c, hh, ww, extra int }{
			{2, 3, 2, 2, 0}, {1, 2, 7, 14, 0}, {2, 1, 4, 16, 3}, {1, 3, 5, 18, 1}, {2, 2, 9, 35, 0}, {1, 1, 3, 34, 5},
		} {
			t.Run(fmt.Sprintf("simd=%v/%dx%dx%dx%d+%d", simd, s.n, s.c, s.hh, s.ww, s.extra), func(t *testing.T) {
				defer func(was bool) { hasSIMD = was }(hasSIMD)
				hasSIMD = hasSIMD && simd
				xv := randn(rng, s.n*s.c*s.hh*s.ww)
				for i := range xv {
					switch r := rng.IntN(10); {
					case r < 4:
						xv[i] = math.Round(xv[i]) // ties
					case r == 4:
						xv[i] = math.Copysign(0, xv[i])
					case r == 5 && rng.IntN(8) == 0:
						xv[i] = math.NaN()
					case r == 6 && rng.IntN(8) == 0:
						xv[i] = math.Inf(1 - 2*rng.IntN(2))
					}
					xv[i] = round(hal.Float32, xv[i])
				}
				x := wideRows(h, hal.Float32, xv, s.n, s.c, s.hh, s.ww, s.extra)
				w := window(2, 2, 0, 1, s.hh, s.ww, false)
				dst := h.zeros(hal.Float32, s.n, s.c, w.OutH, w.OutW)
				idx := h.zeros(hal.Int32, s.n, s.c, w.OutH, w.OutW)
				require.NoError(t, h.dev.Pool2D(hal.PoolMax, dst, idx, x, w, false))
				want, wantIdx := poolRef(hal.PoolMax, xv, s.n, s.c, s.hh, s.ww, w, false)
				got := h.read(dst)
				assert.Equal(t, wantIdx, h.read(idx))
				for i := range want {
					if math.IsNaN(want[i]) {
						require.True(t, math.IsNaN(got[i]), "element %d: got %v, want NaN", i, got[i])
						continue
					}
					require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "element %d: got %v, want %v", i, got[i], want[i])
				}
			})
		}
	}
}
