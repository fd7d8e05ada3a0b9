package haltest

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// Tolerances against the float64 references, all in one place.
//
// Every bound is written in units of u, the unit roundoff of the dtype the
// kernel computes in (unitRoundoff: 2⁻²⁴ for float32, 2⁻⁵³ for float64,
// 2⁻¹¹ for float16), so one table serves every dtype: a float16 kernel is
// held to float16's own precision, a float64 one to float64's.
//
// The bounds below assume IEEE 754 arithmetic, the CPU backend's; on a
// WebGPU device each kernel also gets the latitude WGSL gives the
// divisions, square roots and conversions on its evaluation path, and
// either-neighbour rounding where IEEE rounds to nearest (accuracy.go:
// Arithmetic, kernelLatitude, WGSLAccuracy). [suite.check] applies it.
//
// Exact kernels have no tolerance: got must equal the float64 reference
// rounded once to the dtype. That is not optimistic. Copy, Fill with step
// 0, Neg, Abs, Sign, ReLU, Clamp, Maximum, Minimum, the comparisons, Where,
// Gather, Im2Col, max pooling, Random Uniform and Bernoulli move or select
// values without arithmetic. Add, Sub, Mul, Div and Square of two values of
// a p-bit format are exact or correctly rounded in float64 (53 ≥ 2p+2 bits,
// so even a double rounding is innocuous), which is what IEEE 754 requires
// of a float32 or float16 device, and float16 computed in float32 and then
// rounded (the CPU backend's way) gives the same bits (24 ≥ 2·11+2).
// Reciprocal is Div with a numerator of 1. Under WGSL the rounded ones
// (Add, Sub, Mul, Square, conversions) may give either neighbour of the
// exact result, and Div and Reciprocal are good to 2.5 ulp.
//
// Subnormal results may be flushed to zero (WGSL allows it, llvmpipe does
// it), so any |want| below the dtype's smallest normal also accepts an
// error up to that normal. Random inputs are kept normal and far from it.
// Under WGSL a subnormal intermediate may be flushed too: GELU(−13) is
// −13·Φ(−13), and Φ(−13) is subnormal in float32 (unaryBounds); and a
// result whose allowed error reaches below the smallest normal may be a
// subnormal, flushed (1/8.5e37 is 1.18e-38, a normal, but a division 2.5
// ulp below it is not).

// bound is a per-element error bound for a toleranced kernel:
//
//	|got − want| ≤ u·(Rel·|want| + Cond·|x·f′(x)| + Abs·scale)
//
// Rel covers the function's own rounding error, relative to the result.
// Cond covers a rounding of the argument (a GPU's exp(x) is exp2(x·log₂e);
// its sin(x) reduces x modulo 2π in float32): an argument error of relative
// size u moves the result by u·|x·f′(x)|, the condition number of f at x
// times |f(x)|. Abs covers cancellation that a reasonable formula cannot
// avoid, scaled as the op says (by |x| for GELU's x·(1+erf), by Alpha for
// ELU's Alpha·(eˣ−1)).
type bound struct {
	Rel, Cond, Abs float64
}

// unaryTol are the bounds of the unary kernels with rounding error; the
// unary kernels not listed are exact. Rel 4 is 2 ulp at the bottom of a
// binade (an ulp is 2u there).
//
// Measured with HALTEST_ERRORS=1, the worst share of its bound any case
// used was 0.35 for the transcendentals on both the CPU backend (float32
// computed through float64 math) and WebGPU on llvmpipe (float32 shader
// code), so the bounds have about 3× margin; LeakyReLU (one rounding of
// Alpha) reached 0.68. Legitimate float32 formulations were checked to
// pass (exp as exp2(x·log₂e), tanh as (e²ˣ−1)/(e²ˣ+1), GELU with the
// Abramowitz–Stegun 7.1.26 erf, ELU as Alpha·(eˣ−1), sin after a float32
// reduction by 2π) and real mistakes to fail: a 16-ulp error in exp,
// 0.0447 for 0.044715 in GELUTanh, GELUTanh for GELU, ln(1+x) for log1p,
// eˣ/(1+eˣ) for sigmoid (NaN at 89), swapped Softplus arguments, a
// fixed LeakyReLU slope, Clamp's min and max in the wrong order.
//
// These are what shaders/math.wgsl guarantees itself, far tighter than
// WGSL's own built-ins where |x| is not small (exp: 3 + 2|x| ulp; sin and
// cos: 2⁻¹¹ absolute on [−π, π], nothing outside). On a WGSL device the
// divisions and square roots inside these functions may be off by WGSL's
// 2.5 and 4.5 ulp rather than half an ulp: kernelLatitude adds that. The
// mutation check (TestMutations) confirms a 16-ulp exp and a 1e-5 tan
// still fail.
var unaryTol = map[hal.UnaryOp]bound{
	hal.Sqrt:       {Rel: 2},
	hal.Rsqrt:      {Rel: 4},
	hal.Exp:        {Rel: 4, Cond: 2},
	hal.Expm1:      {Rel: 4, Cond: 2},
	hal.Log:        {Rel: 4, Cond: 2},
	hal.Log1p:      {Rel: 4, Cond: 2},
	hal.Sin:        {Rel: 4, Cond: 4, Abs: 2},
	hal.Cos:        {Rel: 4, Cond: 4, Abs: 2},
	hal.Tan:        {Rel: 4, Cond: 4},
	hal.Tanh:       {Rel: 4, Cond: 2, Abs: 2},
	hal.Erf:        {Rel: 4, Cond: 2},
	hal.Sigmoid:    {Rel: 4, Cond: 2, Abs: 1},
	hal.ELU:        {Rel: 4, Cond: 2, Abs: 2},
	hal.GELU:       {Rel: 4, Cond: 2, Abs: 2},
	hal.GELUTanh:   {Rel: 4, Cond: 2, Abs: 2},
	hal.SiLU:       {Rel: 4, Cond: 2, Abs: 1},
	hal.Softplus:   {Rel: 4, Cond: 2, Abs: 1},
	hal.LeakyReLU:  {Rel: 1}, // Alpha rounded to the dtype first, then one product: at most one extra rounding
	hal.Reciprocal: {},       // exact, as Div
}

// powTol bounds Pow: Cond multiplies |want·y·ln x|, since aᵇ computed as
// exp2(b·log₂a) has the relative error of the exponent b·log₂a.
var powTol = bound{Rel: 4, Cond: 2}

// Sums. Summing n terms in any order (sequential, blocked, tree, across
// workgroups) has |error| ≤ (n−1)·u·Σ|xᵢ| (Higham, Accuracy and Stability
// of Numerical Algorithms, §4.2), so Sum, ScatterAdd and Col2Im (which sum
// overlapping terms), average pooling and the dot products of MatMul use
//
//	|got − want| ≤ perTerm·n·u·Σ|terms| + u·|want|
//
// perTerm 2 is that bound with each addition allowed 2u rather than u, as
// WGSL's either-neighbour rounding needs (on IEEE it is a factor of two of
// slack). For the sizes the suite uses (n ≤ 1025 outside the
// large cases) dropping or doubling one term breaks that bound by orders of
// magnitude. The large cases catch lost terms separately, with integer
// data whose every partial sum is exact (see reduce.go).
const perTerm = 2

// Prod multiplies n terms: relative error ≤ (n−1)·u per Higham §3.1.
const prodPerTerm = 2

// LogSumExp = m + ln Σ e^(xᵢ−m): the sum of positive terms is relatively
// accurate to n·u, which is an absolute error of n·u after ln; each eᵗ has
// its argument's rounding, u·|xᵢ−m| relative, weighted by its share of the
// sum; ln and the final addition round once each.
//
//	|got − want| ≤ u·(lseRel·|want| + perTerm·n + lseCond·Σ wᵢ·|xᵢ−m|), wᵢ = e^(xᵢ−m)/Σ
const (
	lseRel  = 4
	lseCond = 4
)

// sumAccuracy bounds a long float32 sum of positive terms more tightly
// than the worst case n·u·Σ|x|, which for a million terms allows 6% and
// checks nothing: |got − want| ≤ u·Σ|x|·sumAccuracy·√n. The rounding
// errors of a plain float32 loop behave like a random walk, well under
// √n·u·Σ|x| on this data, and blocked or tree sums do far better, so both
// pass; an accumulator of less than float32 precision, or a sum that
// drops a block of terms, does not.
const sumAccuracy = 2

// fillTerms bounds Fill with a nonzero step: a device may form start + i·step
// in its own precision (a GPU in float32, from float32 copies of start and
// step), which costs a few roundings of the terms' size.
//
//	|got − want| ≤ u·fillTerms·(|start| + |i·step|)
const fillTerms = 3

// gridTol bounds GridSample: the unnormalized coordinate ((x+1)·W−1)/2 is
// computed with a few roundings of size u·W, and each bilinear weight
// inherits that absolute error, so
//
//	|got − want| ≤ u·(gridCoord·max(W, H)·Σ|corners| + gridRel·Σ|wₖ·vₖ|)
const (
	gridCoord = 8
	gridRel   = 4
)

// Random's Normal draws, z = r·cos θ with r = √(−2 ln u₁) and θ = 2π·u₂,
// are held against the float64 formula on the same Philox words by
//
//	|got − want| ≤ u·(normalRel·|z| + normalAngle·r·(1+θ) + normalLogAbs/r)
//
// ln u₁ is tiny when u₁ is near 1, and an absolute error e in it moves r by
// e/r (the square root's derivative), so a log that is only absolutely
// accurate near 1 (as GPU logs may be) is allowed normalLogAbs·u there;
// θ rounds to u·θ and cos adds its own few u, both scaled by r; normalRel
// covers the square root, the product and the final rounding.
const (
	normalRel    = 8
	normalAngle  = 8
	normalLogAbs = 4
)

// maxReported caps the mismatches listed in one failure message.
const maxReported = 5

// mismatches collects elements that broke a tolerance and reports the
// first few with one assertion, so a 1M-element failure stays readable and
// checking does not cost a testify call per element.
type mismatches struct {
	count int
	first []string
	worst float64 // largest |got − want| / allowed seen, for HALTEST_ERRORS
	ulps  float64 // largest |got − want| in ulps of want, for HALTEST_ERRORS
}

func (m *mismatches) add(i int, got, want, tol float64, input string) {
	m.count++
	if len(m.first) < maxReported {
		s := fmt.Sprintf("[%d] got %g, want %.17g (±%.3g)", i, got, want, tol)
		if input != "" {
			s += " for " + input
		}
		m.first = append(m.first, s)
	}
}

// observe records an element's error for HALTEST_ERRORS; allowed 0 skips
// the share of the tolerance.
func (m *mismatches) observe(dt hal.DType, got, want, allowed float64) {
	diff := math.Abs(got - want)
	if math.IsNaN(diff) || math.IsInf(diff, 0) || !dt.IsFloat() || math.Abs(want) < minNormal(dt) {
		return // ulps of a subnormal (or its flush) say nothing
	}
	if allowed > 0 {
		m.worst = max(m.worst, diff/allowed)
	}
	m.ulps = max(m.ulps, diff/ULP(dt, want))
}

func (m *mismatches) assert(t testing.TB, n int) {
	t.Helper()
	if os.Getenv("HALTEST_ERRORS") != "" && (m.worst > 0 || m.ulps > 0) {
		t.Logf("worst error: %.3g of the tolerance, %.3g ulp", m.worst, m.ulps)
	}
	assert.Zerof(t, m.count, "%d of %d elements out of tolerance, first: %v", m.count, n, m.first)
}

// describer names the inputs of element i for failure messages; nil for
// none.
type describer func(i int) string

func (d describer) at(i int) string {
	if d == nil {
		return ""
	}
	return d(i)
}

// sameValue is equality of results: NaN matches NaN, −0 matches +0.
func sameValue(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}

// checkExact asserts got[i] == roundTo(dt, want[i]) for every i (a
// subnormal want may read as 0): for results that are exact on every
// device (moves, selections, integer arithmetic).
func checkExact(t testing.TB, dt hal.DType, got, want []float64, in describer) {
	t.Helper()
	if !assert.Len(t, got, len(want)) {
		return
	}
	var bad mismatches
	for i := range want {
		w := roundTo(dt, want[i])
		if sameValue(got[i], w) || flushed(dt, got[i], w) {
			continue
		}
		bad.add(i, got[i], w, 0, in.at(i))
	}
	bad.assert(t, len(want))
}

// flushed reports whether got is a subnormal want flushed to zero.
func flushed(dt hal.DType, got, want float64) bool {
	return dt.IsFloat() && math.Abs(want) < minNormal(dt) && got == 0
}

// checkRounded asserts that got[i] is want[i] rounded once to dt: to
// nearest under IEEE, to either neighbour under WGSL (a subnormal want
// may read as 0).
func checkRounded(t testing.TB, ar Arithmetic, dt hal.DType, got, want []float64, in describer) {
	t.Helper()
	if !ar.Faithful() || !dt.IsFloat() {
		checkExact(t, dt, got, want, in)
		return
	}
	if !assert.Len(t, got, len(want)) {
		return
	}
	var bad mismatches
	for i, w := range want {
		lo, hi := neighbours(dt, w)
		g := got[i]
		if sameValue(g, lo) || sameValue(g, hi) || flushed(dt, g, lo) || flushed(dt, g, hi) {
			bad.observe(dt, g, w, 0)
			continue
		}
		bad.add(i, g, w, ULP(dt, w), in.at(i))
	}
	bad.assert(t, len(want))
}

// neighbours returns the dt values just below and just above x (both x
// when x is one), with ±Inf beyond the finite range.
func neighbours(dt hal.DType, x float64) (lo, hi float64) {
	r := roundTo(dt, x)
	if r == x || math.IsNaN(x) {
		return r, r
	}
	next := func(v float64, up bool) float64 {
		switch dt {
		case hal.Float16:
			if math.IsInf(v, 0) {
				return math.Copysign(65504, v)
			}
			b := f16Bits(v)
			if (v > 0 || v == 0 && !math.Signbit(v)) == up {
				return f16Value(b + 1)
			}
			if v == 0 {
				return -f16Value(1)
			}
			return f16Value(b - 1)
		case hal.Float32:
			return float64(math.Nextafter32(float32(v), float32(math.Copysign(math.Inf(1), boolSign(up)))))
		}
		return math.Nextafter(v, math.Copysign(math.Inf(1), boolSign(up)))
	}
	if r > x {
		return next(r, false), r
	}
	return r, next(r, true)
}

func boolSign(up bool) float64 {
	if up {
		return 1
	}
	return -1
}

// checkWithin asserts |got[i] − want[i]| ≤ tol[i] + the final rounding of
// the result to dt, or got[i] equal to want[i] rounded to dt. NaN and ±Inf
// must match exactly. The final rounding is u·|want| (IEEE, and float32
// under WGSL, whose kernels compute in float32); a float16 result under
// WGSL is converted from float32 to either neighbour: 2u·|want|.
func checkWithin(t testing.TB, ar Arithmetic, dt hal.DType, got, want, tol []float64, in describer) {
	t.Helper()
	if !assert.Len(t, got, len(want)) {
		return
	}
	u := unitRoundoff(dt)
	final := 1.0
	if dt == hal.Float16 {
		final = ar.primRel(primRound, dt)
	}
	var bad mismatches
	for i := range want {
		w := want[i]
		allowed := tol[i] + final*u*math.Abs(w)
		if math.Abs(w) < minNormal(dt) {
			allowed += minNormal(dt)
		}
		if sameValue(got[i], roundTo(dt, w)) {
			continue
		}
		if got[i] == 0 && ar.Flushes() && math.Abs(w)-allowed < minNormal(dt) {
			continue // a result allowed to be subnormal, flushed
		}
		bad.observe(dt, got[i], w, allowed)
		if math.Abs(got[i]-w) <= allowed {
			continue
		}
		bad.add(i, got[i], w, allowed, in.at(i))
	}
	bad.assert(t, len(want))
}

// check asserts a result of kernel op (a kernelLatitude key, "" for a
// kernel without latitude) against its float64 reference: tol is the
// allowed error under IEEE arithmetic, nil for a result that IEEE rounds
// once. On the device's arithmetic the kernel may add extraRel·u·|want|;
// a once-rounded result without other latitude is checked to be one of
// the two neighbours of want.
func (s *suite) check(t testing.TB, op string, dt hal.DType, got, want, tol []float64, in describer) {
	t.Helper()
	extra := s.arith.extraRel(op, dt)
	switch {
	case tol == nil && (extra == 0 || !dt.IsFloat()):
		checkExact(t, dt, got, want, in)
		return
	case tol == nil && roundsOnly(op):
		checkRounded(t, s.arith, dt, got, want, in)
		return
	}
	widened := make([]float64, len(want))
	u := unitRoundoff(dt)
	for i, w := range want {
		if tol != nil {
			widened[i] = tol[i]
		}
		widened[i] += extra * u * math.Abs(w)
	}
	checkWithin(t, s.arith, dt, got, want, widened, in)
}

// roundsOnly reports whether op's latitude is its rounding alone.
func roundsOnly(op string) bool {
	for _, l := range kernelLatitude[op] {
		if l.prim != primRound {
			return false
		}
	}
	return true
}

// checkZeroSigns asserts that where want is ±0, got is the same zero: for
// the kernels that must get the sign of zero right (Neg, Abs, Copy).
func checkZeroSigns(t testing.TB, got, want []float64, in describer) {
	t.Helper()
	var bad mismatches
	for i := range want {
		if want[i] == 0 && got[i] == 0 && math.Signbit(got[i]) != math.Signbit(want[i]) {
			bad.add(i, got[i], want[i], 0, in.at(i))
		}
	}
	bad.assert(t, len(want))
}
