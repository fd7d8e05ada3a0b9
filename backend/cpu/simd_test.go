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

// withBoth runs f with the SIMD kernels (where the CPU has them) and with
// the portable loops.
func withBoth(t *testing.T, f func(t *testing.T)) {
	t.Run("portable", func(t *testing.T) {
		saved, saved512 := hasSIMD, hasAVX512
		hasSIMD, hasAVX512 = false, false
		t.Cleanup(func() { hasSIMD, hasAVX512 = saved, saved512 })
		f(t)
	})
	if hasSIMD {
		t.Run("avx2", func(t *testing.T) {
			saved := hasAVX512
			hasAVX512 = false
			t.Cleanup(func() { hasAVX512 = saved })
			f(t)
		})
	}
	if hasAVX512 {
		t.Run("avx512", f)
	}
}

// simdSizes straddle every loop of the kernels: the 32-wide body, the
// 8-wide one, the scalar or masked tail.
var simdSizes = []int{1, 3, 7, 8, 9, 15, 16, 31, 32, 33, 40, 63, 1000, 1025}

func randF32(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(scale * rng.NormFloat64())
	}
	return x
}

// TestSIMDBinary checks the float32 arithmetic kernels bit for bit
// against Go's own float32 arithmetic, specials included.
func TestSIMDBinary(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, 3e38}
		for _, n := range simdSizes {
			a, b := randF32(rng, n, 10), randF32(rng, n, 10)
			for i := range min(n, len(specials)) {
				a[i], b[n-1-i] = specials[i], specials[(i+3)%len(specials)]
			}
			for _, op := range []hal.BinaryOp{hal.Add, hal.Sub, hal.Mul, hal.Div} {
				out := make([]float32, n)
				if !binaryF32(op, out, a, b) {
					require.False(t, hasSIMD, "%v has a SIMD kernel", op)
					continue
				}
				for i := range out {
					var want float32
					switch op {
					case hal.Add:
						want = a[i] + b[i]
					case hal.Sub:
						want = a[i] - b[i]
					case hal.Mul:
						want = a[i] * b[i]
					case hal.Div:
						want = a[i] / b[i]
					}
					require.Equal(t, math.Float32bits(want), math.Float32bits(out[i]), "%v n=%d [%d]: %g, %g", op, n, i, a[i], b[i])
				}
			}
		}
	})
}

// TestSIMDReLU checks ReLU keeps NaN, maps −0 and negatives to +0.
func TestSIMDReLU(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range simdSizes {
			x := randF32(rng, n, 1)
			x[0] = float32(math.Copysign(0, -1))
			x[n/2] = float32(math.NaN())
			out := make([]float32, n)
			reluF32(out, x)
			for i, v := range x {
				want := max(v, 0)
				require.Equal(t, math.Float32bits(want), math.Float32bits(out[i]), "n=%d [%d]: %g", n, i, v)
			}
		}
	})
}

// TestSIMDSum checks the widening sum against a float64 sum: each lane
// adds float64s, so the result is within a few float64 roundings.
func TestSIMDSum(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, n := range append(simdSizes, 1<<18, 1<<18+33, 1<<20+3) {
			x := randF32(rng, n, 100)
			var want, abs float64
			for _, v := range x {
				want += float64(v)
				abs += math.Abs(float64(v))
			}
			got := sumF32(x)
			assert.InDelta(t, want, got, 2*float64(n)*0x1p-53*abs, "n=%d", n)
		}
		assert.True(t, math.IsNaN(sumF32([]float32{1, float32(math.NaN()), 2})))
	})
}

// TestSIMDExp measures the SIMD exp against float64 over [−87.3, 0] (all
// that softmax feeds it) and asserts the 2-ulp bound softmaxRowF32 states,
// plus flushing below the smallest normal and −Inf to 0 and NaN to NaN.
func TestSIMDExp(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2/FMA")
	}
	const n = 1 << 20
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(-87.3 * float64(i) / n)
	}
	x[0], x[1], x[2], x[3] = float32(math.Inf(-1)), float32(math.NaN()), -88, -87.5
	got := make([]float32, n)
	expSumF32AVX2(&got[0], &x[0], n, 0)
	worst := 0.0
	for i := 4; i < n; i++ {
		want := math.Exp(float64(x[i]))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		worst = max(worst, math.Abs(float64(got[i])-want)/ulp)
	}
	t.Logf("worst exp error: %.3f ulp", worst)
	assert.LessOrEqual(t, worst, 2.0)
	assert.Equal(t, float32(0), got[0], "e^−Inf")
	assert.True(t, math.IsNaN(float64(got[1])), "e^NaN")
	assert.Equal(t, float32(0), got[2], "e^−88 flushes")
	assert.Equal(t, float32(0), got[3], "e^−87.5 flushes")
}

// TestSoftmaxRows checks both row kernels against float64 on rows of every
// tail length, logits large and small.
func TestSoftmaxRows(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range simdSizes {
			for _, scale := range []float64{1, 30, 1e4} {
				for _, log := range []bool{false, true} {
					x := randF32(rng, n, scale)
					got := make([]float32, n)
					softmaxRowF32(got, x, log)
					m := math.Inf(-1)
					for _, v := range x {
						m = max(m, float64(v))
					}
					var s, spread float64
					for _, v := range x {
						s += math.Exp(float64(v) - m)
					}
					for _, v := range x {
						spread += math.Exp(float64(v)-m) / s * math.Abs(float64(v)-m)
					}
					for i, v := range x {
						want := math.Exp(float64(v)-m) / s
						// The rounding of x − m moves e^(x−m) by u·|x−m| relatively.
						tol := want*(float64(n+8)+4*math.Abs(float64(v)-m)+4*spread)*0x1p-24 + 0x1p-126
						if log {
							want = float64(v) - m - math.Log(s)
							tol = (math.Abs(want) + float64(n+8) + 2*math.Abs(float64(v)-m) + 4*spread) * 0x1p-24
						}
						require.InDelta(t, want, float64(got[i]), tol, "n=%d scale=%g log=%v [%d]", n, scale, log, i)
					}
				}
			}
		}
	})
}

// BenchmarkSumVariants compares the two widening sums, in cache and from
// memory.
func BenchmarkSumVariants(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no AVX-512")
	}
	for _, n := range []int{64 << 10, 16 << 20} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i % 7)
		}
		b.Run(fmt.Sprintf("avx2/%d", n), func(b *testing.B) {
			for b.Loop() {
				sumF32AVX2(&x[0], n)
			}
			b.ReportMetric(float64(4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(fmt.Sprintf("avx512/%d", n), func(b *testing.B) {
			for b.Loop() {
				sumF32AVX512(&x[0], n)
			}
			b.ReportMetric(float64(4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// TestSIMDExtreme checks max and min against Go's loop, and that NaN or a
// ±0 extreme leave the answer to the caller's ordered walk.
func TestSIMDExtreme(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range simdSizes {
		for _, isMin := range []bool{false, true} {
			x := randF32(rng, n, 100)
			want := x[0]
			for _, v := range x {
				if isMin {
					want = min(want, v)
				} else {
					want = max(want, v)
				}
			}
			got, ok := extremeF32(x, isMin)
			require.True(t, ok, "n=%d", n)
			require.Equal(t, want, got, "n=%d min=%v", n, isMin)
			x[rng.IntN(n)] = float32(math.NaN())
			_, ok = extremeF32(x, isMin)
			require.False(t, ok, "n=%d: NaN", n)
			// All on one side of a zero that is the extreme.
			for i := range x {
				x[i] = float32(math.Abs(rng.NormFloat64()) + 1)
				if !isMin {
					x[i] = -x[i]
				}
			}
			x[n/2] = float32(math.Copysign(0, -1))
			_, ok = extremeF32(x, isMin)
			require.False(t, ok, "n=%d: zero extreme", n)
		}
	}
}

// TestNonTemporal checks the non-temporal store kernels against plain
// arithmetic: lengths around the threshold, outputs starting off a 64-byte
// boundary (so that both the aligning head and the tail run), and in place.
func TestNonTemporal(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2")
	}
	saved := ntMin
	defer func() { ntMin = saved }()
	ntMin = 256
	rng := newRand()
	for _, n := range []int{256, 257, 1000, 4099} {
		for _, off := range []int{0, 1, 3, 15} {
			a, b := make([]float32, n+off), make([]float32, n+off)
			for i := range a {
				a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())+2
			}
			out := make([]float32, n+off)[off:]
			x, y := a[off:], b[off:]
			for _, op := range []hal.BinaryOp{hal.Add, hal.Sub, hal.Mul, hal.Div} {
				if !binaryF32(op, out, x, y) {
					t.Fatalf("%v: no fast path", op)
				}
				for i := range out {
					var want float32
					switch op {
					case hal.Add:
						want = x[i] + y[i]
					case hal.Sub:
						want = x[i] - y[i]
					case hal.Mul:
						want = x[i] * y[i]
					case hal.Div:
						want = x[i] / y[i]
					}
					if out[i] != want {
						t.Fatalf("%v n=%d off=%d: out[%d] = %v, want %v", op, n, off, i, out[i], want)
					}
				}
			}
			reluF32(out, x)
			for i := range out {
				if want := max(x[i], 0); out[i] != want {
					t.Fatalf("relu n=%d off=%d: out[%d] = %v, want %v", n, off, i, out[i], want)
				}
			}
			want := make([]float32, n)
			for i := range want {
				want[i] = x[i] + y[i]
			}
			binaryF32(hal.Add, x, x, y) // in place
			for i := range want {
				if x[i] != want[i] {
					t.Fatalf("in place n=%d off=%d: x[%d] = %v, want %v", n, off, i, x[i], want[i])
				}
			}
		}
	}
}
