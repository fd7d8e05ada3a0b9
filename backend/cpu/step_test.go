package cpu

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// fma32 is x·y + z rounded once to float32: the product and sum are exact
// in a 512-bit big.Float, whatever the exponents of float32 operands.
func fma32(x, y, z float32) float32 {
	if math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) ||
		x != x || y != y || z != z {
		return float32(float64(x)*float64(y) + float64(z))
	}
	p := new(big.Float).SetPrec(512).SetFloat64(float64(x))
	p.Mul(p, new(big.Float).SetFloat64(float64(y)))
	p.Add(p, new(big.Float).SetFloat64(float64(z)))
	f, _ := p.Float32()
	if f == 0 && (math.Signbit(float64(x)) != math.Signbit(float64(y))) && z == 0 && math.Signbit(float64(z)) {
		return float32(math.Copysign(0, -1)) // −0 + (−0) keeps its sign
	}
	return f
}

// adamRef32 is one element of Adam's float32 update with every operation
// rounded once, the way torch's vectorized CPU ops round it.
func adamRef32(p, g, m, v float32, k adamConsts, flags int) (float32, float32, float32) {
	if flags&adamScaled != 0 {
		g *= k.scale
	}
	if flags&adamCoupled != 0 {
		g = fma32(p, k.wd, g)
	}
	if flags&adamDecoupled != 0 {
		p *= k.shrink
	}
	m = fma32(g, k.c1, m*k.b1)
	v = fma32(k.c2*g, g, v*k.b2)
	denom := float32(math.Sqrt(float64(v)))/k.bc2 + k.eps
	q := (k.negStep * m) / denom
	return p + q, m, v
}

func testAdamConsts(lr, wd, b1, b2, eps float64, t int) adamConsts {
	bc1, bc2 := 1-math.Pow(b1, float64(t)), 1-math.Pow(b2, float64(t))
	return adamConsts{
		scale: 0.37, wd: float32(wd), shrink: float32(1 - lr*wd),
		b1: float32(b1), c1: float32(1 - b1), b2: float32(b2), c2: float32(1 - b2),
		negStep: float32(-(lr / bc1)), bc2: float32(math.Sqrt(bc2)), eps: float32(eps),
	}
}

// adamInputs are a random parameter, gradient and moments; the second
// moment is non-negative, as the update keeps it.
func adamInputs(rng *rand.Rand, n int) (p, g, m, v []float32) {
	p, g, m = randF32(rng, n, 1), randF32(rng, n, 1), randF32(rng, n, 0.1)
	v = randF32(rng, n, 0.01)
	for i := range v {
		v[i] *= v[i]
	}
	if n > 5 { // zeros and a tiny second moment, where eps dominates
		g[1], m[2], v[3] = 0, 0, 0
		v[4] = 1e-30
	}
	return
}

// TestAdamF32Vector checks the vector kernels bit for bit against the
// once-rounded reference on every flag combination, on lengths around
// both vector widths; the elements past the prefix they take stay as
// they were.
func TestAdamF32Vector(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 3))
		k := testAdamConsts(1e-3, 0.01, 0.9, 0.999, 1e-8, 3)
		for _, n := range append(simdSizes, 4099) {
			for flags := range 8 {
				p, g, m, v := adamInputs(rng, n)
				p0, m0, v0 := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
				done := adamF32(p, g, m, v, k, flags)
				if hasSIMD {
					width := 8
					if hasAVX512 {
						width = 16
					}
					require.Equal(t, n&^(width-1), done, "n=%d", n)
				} else {
					require.Zero(t, done)
				}
				for i := range n {
					wp, wm, wv := p0[i], m0[i], v0[i]
					if i < done {
						wp, wm, wv = adamRef32(wp, g[i], wm, wv, k, flags)
					}
					where := fmt.Sprintf("n=%d flags=%d i=%d", n, flags, i)
					require.Equal(t, math.Float32bits(wp), math.Float32bits(p[i]), "param %s: %g vs %g", where, p[i], wp)
					require.Equal(t, math.Float32bits(wm), math.Float32bits(m[i]), "m %s", where)
					require.Equal(t, math.Float32bits(wv), math.Float32bits(v[i]), "v %s", where)
				}
			}
		}
	})
}

// ulps is how many float32 values lie between a and b.
func ulps(a, b float32) int64 {
	key := func(x float32) int64 {
		u := int64(math.Float32bits(x))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// TestAdamStepF32 runs the whole float32 Adam and AdamW update (vector
// prefix, scalar tail, split across workers) against the once-rounded
// reference. The scalar loop's float64 fused multiply-add rounds twice,
// so a rare tie may differ by an ulp in a moment; the parameter follows
// it through the square root and division by at most a few ulps.
func TestAdamStepF32(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 4))
		for _, n := range []int{1, 7, 9, 17, 33, 1025, 3*stepGrain + 5} {
			for _, decoupled := range []bool{false, true} {
				for _, wd := range []float64{0, 0.01} {
					a := hal.StepArgs{LR: 1e-3, WeightDecay: wd, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decoupled: decoupled}
					a.BiasCorrection1, a.BiasCorrection2 = 1-math.Pow(0.9, 5), 1-math.Pow(0.999, 5)
					k := testAdamConsts(a.LR, wd, a.Beta1, a.Beta2, a.Eps, 5)
					flags := 0
					if wd != 0 && decoupled {
						flags = adamDecoupled
					} else if wd != 0 {
						flags = adamCoupled
					}
					p, g, m, v := adamInputs(rng, n)
					op := func(x []float32) operand {
						w := make([]uint64, (n+1)/2)
						copy(asType[float32](w), x)
						return operand{View: hal.View{DType: hal.Float32, Shape: []int{n}, Strides: []int{1}}, words: w}
					}
					po, mo, vo := op(p), op(m), op(v)
					step[float32](hal.Adam, po, op(g), []operand{mo, vo}, operand{}, a)
					gp, gm, gv := slice[float32](po), slice[float32](mo), slice[float32](vo)
					for i := range n {
						wp, wm, wv := adamRef32(p[i], g[i], m[i], v[i], k, flags)
						where := fmt.Sprintf("n=%d decoupled=%v wd=%g i=%d", n, decoupled, wd, i)
						require.LessOrEqual(t, ulps(wm, gm[i]), int64(1), "m %s", where)
						require.LessOrEqual(t, ulps(wv, gv[i]), int64(1), "v %s", where)
						require.LessOrEqual(t, ulps(wp, gp[i]), int64(4), "param %s: %g vs %g", where, gp[i], wp)
					}
				}
			}
		}
	})
}

// rmsRef32 is one element of RMSProp's (or, with adagrad, Adagrad's)
// float32 update with every operation rounded once.
func rmsRef32(adagrad bool, p, g, v, buf, avg float32, k rmsConsts, flags int) (np, nv, nbuf, navg float32) {
	if flags&rmsScaled != 0 {
		g *= k.scale
	}
	if flags&rmsCoupled != 0 {
		g = fma32(p, k.wd, g)
	}
	sqrt32 := func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	if adagrad {
		v = fma32(g, g, v)
		return p + (k.negLR*g)/(sqrt32(v)+k.eps), v, buf, avg
	}
	v = fma32(k.c*g, g, v*k.alpha)
	d := sqrt32(v)
	if flags&rmsCentered != 0 {
		avg = fma32(g, k.c, avg*k.alpha)
		d = sqrt32(fma32(-avg, avg, v))
	}
	d += k.eps
	if flags&rmsMomentum != 0 {
		buf = buf*k.mom + g/d
		return fma32(buf, k.negLR, p), v, buf, avg
	}
	return p + (k.negLR*g)/d, v, buf, avg
}

// TestRMSF32Vector checks the RMSProp and Adagrad vector kernels bit for
// bit against the once-rounded reference, every flag combination, on
// lengths around both vector widths; elements past the prefix stay.
func TestRMSF32Vector(t *testing.T) {
	withBoth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 5))
		k := rmsConsts{scale: 0.37, wd: 0.01, alpha: 0.99, c: float32(1 - 0.99), mom: 0.9, negLR: -1e-2, eps: 1e-8}
		for _, adagrad := range []bool{false, true} {
			maxFlags := 16
			if adagrad {
				maxFlags = 4
			}
			for _, n := range append(simdSizes, 4099) {
				for flags := range maxFlags {
					p, g, buf, v := adamInputs(rng, n)
					avg := randF32(rng, n, 0.01) // |avg| ≤ √v keeps the centered variance real
					for i := range avg {
						r := float32(math.Sqrt(float64(v[i])))
						avg[i] = max(-r, min(avg[i], r))
					}
					p0, v0 := append([]float32(nil), p...), append([]float32(nil), v...)
					buf0, avg0 := append([]float32(nil), buf...), append([]float32(nil), avg...)
					done := rmsF32(adagrad, p, g, v, buf, avg, k, flags)
					if hasSIMD {
						width := 8
						if hasAVX512 {
							width = 16
						}
						require.Equal(t, n&^(width-1), done, "n=%d", n)
					} else {
						require.Zero(t, done)
					}
					for i := range n {
						wp, wv, wb, wa := p0[i], v0[i], buf0[i], avg0[i]
						if i < done {
							wp, wv, wb, wa = rmsRef32(adagrad, wp, g[i], wv, wb, wa, k, flags)
						}
						where := fmt.Sprintf("adagrad=%v n=%d flags=%d i=%d", adagrad, n, flags, i)
						require.Equal(t, math.Float32bits(wp), math.Float32bits(p[i]), "param %s: %g vs %g", where, p[i], wp)
						require.Equal(t, math.Float32bits(wv), math.Float32bits(v[i]), "v %s", where)
						require.Equal(t, math.Float32bits(wb), math.Float32bits(buf[i]), "buf %s", where)
						require.Equal(t, math.Float32bits(wa), math.Float32bits(avg[i]), "avg %s", where)
					}
				}
			}
		}
	})
}

// BenchmarkStepAdam is one float32 Adam update of 10M elements with each
// kernel this CPU has, A/B in one process: bytes/s counts the 7 streams
// (param, grad, two moments read; param, moments written).
func BenchmarkStepAdam(b *testing.B) {
	const n = 10_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	p, g, m, v := adamInputs(rng, n)
	op := func(x []float32) operand {
		w := make([]uint64, (n+1)/2)
		copy(asType[float32](w), x)
		return operand{View: hal.View{DType: hal.Float32, Shape: []int{n}, Strides: []int{1}}, words: w}
	}
	po, gO, mo, vo := op(p), op(g), op(m), op(v)
	a := hal.StepArgs{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, BiasCorrection1: 0.1, BiasCorrection2: 0.001}
	run := func(b *testing.B) {
		b.SetBytes(7 * 4 * n)
		b.ReportAllocs()
		for b.Loop() {
			step[float32](hal.Adam, po, gO, []operand{mo, vo}, operand{}, a)
		}
	}
	b.Run("portable", func(b *testing.B) {
		saved, saved512 := hasSIMD, hasAVX512
		hasSIMD, hasAVX512 = false, false
		defer func() { hasSIMD, hasAVX512 = saved, saved512 }()
		run(b)
	})
	if hasSIMD {
		b.Run("avx2", func(b *testing.B) {
			saved := hasAVX512
			hasAVX512 = false
			defer func() { hasAVX512 = saved }()
			run(b)
		})
	}
	if hasAVX512 {
		b.Run("avx512", run)
	}
}
