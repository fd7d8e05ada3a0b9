//go:build cgo

package wgpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// withReducePassHook runs f with hook seeing every reduction pass.
// Not for concurrent tests.
func withReducePassHook(hook func(reduceShader), f func()) {
	old := reducePassHook
	reducePassHook = hook
	defer func() { reducePassHook = old }()
	f()
}

// firstPassVec4 runs f and reports whether the first reduction pass it
// recorded read its source as vec4s.
func firstPassVec4(t *testing.T, f func()) bool {
	t.Helper()
	var passes []reduceShader
	withReducePassHook(func(sh reduceShader) { passes = append(passes, sh) }, f)
	require.NotEmpty(t, passes)
	return passes[0].Vec4
}

// TestReduceVec4 checks the hardware plan's vec4 path, forced on the
// software adapters (subgroups on and off where the device has them):
// every op on float32 and int32 rows of odd lengths at every offset modulo
// 4 (so heads and tails of 0 to 3 scalars), rows whose starts differ in
// alignment, NaN and ±Inf mixed in, against float64; the path must be
// taken on contiguous rows (every op but prod) and left on strided ones.
func TestReduceVec4(t *testing.T) {
	forEachTestDevice(t, func(t *testing.T, d *Device) {
		for name, m := range reduceModes(d) {
			if !m.hardware {
				continue
			}
			t.Run(name, func(t *testing.T) {
				withReduceMode(t, d, m, func(t *testing.T) { testReduceVec4(t, d) })
			})
		}
	})
}

func testReduceVec4(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(15, 4))
	for _, c := range []struct{ rows, n, pitch int }{
		{1, 1, 1}, {1, 2, 2}, {1, 3, 3}, {1, 5, 5}, {1, 7, 7}, {3, 17, 17}, {1, 64, 64}, {2, 1023, 1023},
		{5, 1031, 1040}, {1, 4097, 4097}, {1, 70001, 70001}, {7, 257, 263}, {1, 1 << 18, 1 << 18},
	} {
		for _, offset := range []int{0, 1, 2, 3} {
			for _, op := range hal.ReduceOps {
				for _, dt := range []hal.DType{hal.Float32, hal.Int32} {
					if dt == hal.Int32 && op == hal.LogSumExp {
						continue
					}
					specials := []float64{0}
					if dt == hal.Float32 && offset == 1 {
						specials = append(specials, math.NaN(), math.Inf(1), math.Inf(-1))
					}
					for _, special := range specials {
						t.Run(fmt.Sprintf("%v/%v/%dx%d/pitch%d/off%d/%v", op, dt, c.rows, c.n, c.pitch, offset, special), func(t *testing.T) {
							vals := make([]float64, offset+c.rows*c.pitch)
							for i := range vals {
								switch {
								case op == hal.Prod && dt == hal.Int32:
									vals[i] = float64(1 - 2*rng.IntN(2))
								case op == hal.Prod:
									vals[i] = 0.99 + 0.02*rng.Float64()
								case dt == hal.Int32:
									vals[i] = float64(rng.IntN(2001) - 1000)
								default:
									vals[i] = rng.NormFloat64()
								}
							}
							if special != 0 {
								for range 1 + c.rows/2 {
									vals[offset+rng.IntN(c.rows*c.pitch)] = special
								}
							}
							v := hal.View{Shape: []int{c.rows, c.n}, Strides: []int{c.pitch, 1}, Offset: offset}
							vec := firstPassVec4(t, func() { checkReduce(t, d, op, dt, vals, v, 1) })
							assert.Equal(t, c.n > 1 && op != hal.Prod, vec, "vec4 path on a contiguous row (but for prod)")
						})
					}
				}
			}
		}
	}
	// A row with a stride (a column) is read element by element.
	vals := make([]float64, 3*1001)
	for i := range vals {
		vals[i] = rng.NormFloat64()
	}
	vec := firstPassVec4(t, func() {
		checkReduce(t, d, hal.Sum, hal.Float32, vals, hal.View{Shape: []int{3, 1001}, Strides: []int{1, 3}}, 1)
	})
	assert.False(t, vec, "vec4 path on a strided row")
}

// TestReducePlanHWVec checks the vec4 pass's plan: segments in whole steps
// of reduceHWVecStep elements per lane, every element covered once, a
// full reduction of up to 16M elements in two passes over at most
// reduceHWVecTargetTasks workgroups.
func TestReducePlanHWVec(t *testing.T) {
	for _, wg := range []int{64, 256, 1024} {
		for _, rows := range []int{1, 2, 3, 255, 256, 257, 100000} {
			for _, n := range []int{1, 2, 7, 8, 9, 255, 2049, 16385, 1 << 20, 1<<20 + 1, 1 << 24, 1 << 25, 1<<28 + 3} {
				p := planReduceHWVec(rows, n, wg)
				desc := fmt.Sprintf("wg %d, %d rows of %d: %+v", wg, rows, n, p)
				require.True(t, p.lanes >= 1 && p.lanes <= wg && p.lanes&(p.lanes-1) == 0, desc)
				require.True(t, p.segLen%(p.lanes*reduceHWVecStep) == 0 && p.segLen/p.lanes <= reduceHWMaxPerLane, desc)
				require.True(t, p.segs >= 1 && p.segs*p.segLen >= n && (p.segs-1)*p.segLen < n, desc)
				if p.segs > 1 {
					require.Less(t, rows*p.segs, max(reduceHWVecTargetTasks, rows*ceilDiv(n, wg*reduceHWMaxPerLane))+rows, desc)
				}
				if n <= wg*reduceHWMaxPerLane {
					require.True(t, p.segs == 1 || planReduceHW(rows, p.segs, wg).segs == 1, desc)
				}
			}
		}
	}
	// A 16M full reduction spreads over the whole target (an H200's 132
	// SMs × 8 workgroups of 256).
	assert.Equal(t, reduceHWVecTargetTasks, planReduceHWVec(1, 1<<24, 256).segs)
}
