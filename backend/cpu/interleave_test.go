package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInterleaveF32Tails checks the assembly interleave (interleaveF32 and
// interleaveLanesF32, where this CPU has them) against a plain transpose
// on every kb from 1 to 41, so that lengths that are not a multiple of
// eight (a weight gradient's window rows: 13, 14, 27, 28) take the
// overlapping last 8×8 tile, at strides and offsets that are not
// multiples of eight; kb below eight must be refused. Panel lanes past
// lanes must keep what they held.
func TestInterleaveF32Tails(t *testing.T) {
	if interleaveF32 == nil || interleaveLanesF32 == nil {
		t.Skip("no assembly interleave on this CPU")
	}
	rng := rand.New(rand.NewPCG(14, 28))
	const sentinel = float32(-12345)
	for _, width := range []int{8, 16, 24, 32} {
		for lanes := 8; lanes <= width; lanes += 8 {
			for kb := 1; kb <= 41; kb++ {
				ld, base := kb+rng.IntN(9), rng.IntN(5)
				data := make([]float32, base+width*ld)
				for i := range data {
					data[i] = rng.Float32()*2 - 1
				}
				panel := make([]float32, width*kb)
				for i := range panel {
					panel[i] = sentinel
				}
				var ok bool
				if lanes == width {
					ok = interleaveF32(panel, data, base, ld, width, kb)
				} else {
					ok = interleaveLanesF32(panel, data, base, ld, lanes, width, kb)
				}
				if kb < 8 {
					require.False(t, ok, "width %d lanes %d kb %d", width, lanes, kb)
					continue
				}
				require.True(t, ok, "width %d lanes %d kb %d", width, lanes, kb)
				for p := range kb {
					for l := range width {
						want := sentinel
						if l < lanes {
							want = data[base+l*ld+p]
						}
						if got := panel[p*width+l]; got != want {
							require.Failf(t, "mismatch", "width %d lanes %d kb %d ld %d base %d: row %d lane %d got %v want %v", width, lanes, kb, ld, base, p, l, got, want)
						}
					}
				}
			}
		}
	}
}
