package tensor

import (
	"math"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// The one place the tensor tests state their tolerances, per dtype and
// per op family. A result passes when |got − want| ≤ rel·|want| + abs,
// where want is the float64 reference computed from the (already rounded)
// inputs, so only the op's own error counts.
//
//   - exact: +, −, ·, comparisons, copies, min/max, where, abs, neg…: one
//     correct rounding of the result (half an ulp) — WGSL rounds to either
//     neighbour, so a whole ulp.
//   - divide: ÷, one correct rounding under IEEE 754 (the CPU backend);
//     WGSL allows 2.5 ulp (haltest.WGSLAccuracy), which a GPU uses (an
//     H200 divides to about an ulp).
//   - transcendental: exp, log, tanh, erf-based GELU…: shaders/math.wgsl
//     and the CPU backend are accurate to a few ulp over the ranges
//     tested, and WGSL's latitude for the divisions and square roots inside
//     them adds at most 4 (√ is 4.5 ulp); 8 ulp plus an absolute floor
//     where the result nears 0 (log near 1, sin near π) and cancellation
//     makes relative error meaningless.
//   - sum-like (reductions, matmul): the rounding error of an n-term sum
//     grows with n and with Σ|terms|, so those tests scale the absolute
//     part by the magnitude; see sumTol.
//
// Float16 computes in float32 and rounds once (CPU), so one float16
// rounding (2⁻¹¹ relative) dominates; float64 runs on the CPU only, with
// Go's math library (≤ 1 ulp) — its tolerance just absorbs that.
//
// tolerances holds for every device; tolOn gives a device the tolerance of
// its own arithmetic (haltest.ArithmeticOf), so that the CPU backend's
// division is still held to one rounding.
type tolerance struct{ rel, abs float64 }

type opFamily int

const (
	familyExact opFamily = iota
	familyTranscendental
	familyDivide
)

// wgslULPs is how many ulps WGSL allows the division: half an ulp of
// rounding plus the table's latitude.
func wgslULPs(kernel string, dtype DType) float64 {
	return 0.5 + haltest.WGSL.ExtraULPs(kernel, dtype)
}

var tolerances = map[DType][3]tolerance{ // indexed by opFamily
	Float32: {{rel: 0x1p-23, abs: 0}, {rel: 8 * 0x1p-23, abs: 2e-6}, {rel: wgslULPs(hal.Div.Kernel(), Float32) * 0x1p-23}},
	Float64: {{rel: 0x1p-52, abs: 0}, {rel: 4 * 0x1p-52, abs: 1e-14}, {rel: 0x1p-52}},
	Float16: {{rel: 0x1p-10, abs: 0x1p-24}, {rel: 2 * 0x1p-10, abs: 1e-4},
		{rel: wgslULPs(hal.Div.Kernel(), Float16) * 0x1p-10, abs: 0x1p-24}},
	Int32: {{}, {}, {}},
}

// epsilon is the unit roundoff of each dtype, for sum-like tolerances.
var epsilon = map[DType]float64{Float32: 0x1p-24, Float64: 0x1p-53, Float16: 0x1p-11, Int32: 0}

func tolFor(dtype DType, family opFamily) func(want float64) float64 {
	t := tolerances[dtype][family]
	return func(want float64) float64 { return t.rel*math.Abs(want) + t.abs }
}

// tolOn is tolFor for dev's arithmetic: IEEE 754 divides with one
// rounding, as the other exact ops.
func tolOn(dev *Device, dtype DType, family opFamily) func(want float64) float64 {
	if family == familyDivide && haltest.ArithmeticOf(dev.Info()) == haltest.IEEE {
		family = familyExact
	}
	return tolFor(dtype, family)
}

// familyTolOn is familyTol on dev.
func familyTolOn(dev *Device, dtype DType, family opFamily, want []float64) func(int) float64 {
	tol := tolOn(dev, dtype, family)
	return func(i int) float64 { return tol(want[i]) }
}

// sumTol is the tolerance for a result that sums n terms whose absolute
// values add up to magnitude: the classic bound n·ε·Σ|terms| is far too
// pessimistic for pairwise or blocked sums, so √n·ε·Σ|terms|, with a
// floor of a few ulp of the result and room for the final rounding.
func sumTol(dtype DType, n int, magnitude, want float64) float64 {
	eps := epsilon[dtype]
	return 4*math.Sqrt(float64(max(n, 1)))*eps*magnitude + 4*eps*math.Abs(want) + eps*1e-3
}
