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

// TestInterleaveSixLanes checks interleave's six-lane A panels, through
// the 6×8 assembly transposes where the CPU has them and through the
// portable loop, against a plain transpose: kb from 1 to 41 (no block,
// whole blocks with the one row always left to the loop, a tail), full
// and edge panels (fewer lanes, zero past them), strides and offsets that
// are not multiples of eight, float32 and float64; nothing past the
// panel's 6·kb elements may be written (the assembly's last store spills
// two floats past its block).
func TestInterleaveSixLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 8))
	saved := interleave6F32
	defer func() { interleave6F32 = saved }()
	for _, asm := range []bool{true, false} {
		interleave6F32 = nil
		if asm {
			if saved == nil {
				continue
			}
			interleave6F32 = saved
		}
		for n := 1; n <= 6; n++ {
			for kb := 1; kb <= 41; kb++ {
				ld, base := kb+rng.IntN(9), rng.IntN(5)
				checkSixLanes(t, rng, asm, n, kb, ld, base, float32(0))
				checkSixLanes(t, rng, asm, n, kb, ld, base, float64(0))
			}
		}
	}
}

func checkSixLanes[T float32 | float64](t *testing.T, rng *rand.Rand, asm bool, n, kb, ld, base int, _ T) {
	const sentinel = -12345
	data := make([]T, base+n*ld)
	for i := range data {
		data[i] = T(rng.Float32()*2 - 1)
	}
	panel := make([]T, 6*kb+8)
	for i := range panel {
		panel[i] = sentinel
	}
	interleave(panel[:6*kb], data, base, ld, n, 6, kb)
	for p := range kb {
		for l := range 6 {
			var want T
			if l < n {
				want = data[base+l*ld+p]
			}
			if got := panel[p*6+l]; got != want {
				require.Failf(t, "mismatch", "%T asm %v lanes %d kb %d ld %d base %d: row %d lane %d got %v want %v", want, asm, n, kb, ld, base, p, l, got, want)
			}
		}
	}
	for i, v := range panel[6*kb:] {
		require.Equal(t, T(sentinel), v, "%T asm %v lanes %d kb %d: wrote %d past the panel", v, asm, n, kb, i)
	}
}
