package cpu

import (
	"math"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// erfFloat32 rounded to float32 is within 2 ulp of float32(math.Erf(x))
// on a dense grid over [−6, 6] (both tails, where erf saturates), and
// keeps erf's special values: ±0, ±1 at ±Inf, NaN; near 0 its relative
// error stays below 2⁻²³.
func TestErfFloat32(t *testing.T) {
	worst, at := 0.0, 0.0
	for i := 0; i <= 400000; i++ {
		x := float64(float32(-6 + 12*float64(i)/400000))
		want := float32(math.Erf(x))
		if want == 0 {
			continue
		}
		got := float32(erfFloat32(x))
		a := float32(math.Abs(float64(want)))
		ulp := float64(math.Nextafter32(a, 2) - a)
		if e := math.Abs(float64(got-want)) / ulp; e > worst {
			worst, at = e, x
		}
	}
	if worst > 2.01 {
		t.Fatalf("erfFloat32(%v) is %.2f ulp from erf", at, worst)
	}
	t.Logf("worst %.2f ulp at %v", worst, at)
	for _, x := range []float64{1e-30, 1e-10, 3e-5, 0.01} {
		if rel := math.Abs(erfFloat32(x)-math.Erf(x)) / math.Erf(x); rel > 0x1p-23 {
			t.Errorf("erfFloat32(%v): relative error %.3g", x, rel)
		}
	}
	if v := erfFloat32(math.Copysign(0, -1)); v != 0 || !math.Signbit(v) {
		t.Errorf("erfFloat32(−0) = %v, want −0", v)
	}
	if erfFloat32(math.Inf(1)) != 1 || erfFloat32(math.Inf(-1)) != -1 || !math.IsNaN(erfFloat32(math.NaN())) {
		t.Errorf("erfFloat32(±Inf, NaN) = %v, %v, %v", erfFloat32(math.Inf(1)), erfFloat32(math.Inf(-1)), erfFloat32(math.NaN()))
	}
}

// BenchmarkUnaryFastPaths compares, in one process, the float32 Erf and
// Clamp kernels with what they replaced (math.Erf per element; Clamp
// through mapT's function value), on a transformer FFN's activations
// (32·12·64 elements, in cache). On a shared machine run it with
// -count 5 and compare medians and best rows.
func BenchmarkUnaryFastPaths(b *testing.B) {
	const n = 32 * 12 * 64
	// math.Erf's cost depends on |x| (a short polynomial below 0.84,
	// exponentials above): a GELU's inputs x/√2 are mostly small.
	r := newRand()
	x, out := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.7)
	}
	lo, hi := float32(0), float32(6)
	for _, k := range []struct {
		name string
		run  kernel[float32, float32]
	}{
		{"erf/fit", unaryFloat[float32](hal.Erf, hal.Args{})},
		{"erf/math.Erf", mapF64[float32](math.Erf)},
		{"clamp/loop", unaryFloat[float32](hal.Clamp, hal.Args{Alpha: 0, Beta: 6})},
		{"clamp/mapT", mapT(func(v float32) float32 { return min(max(v, lo), hi) })},
	} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.run(out, x, nil, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/element")
		})
	}
}
