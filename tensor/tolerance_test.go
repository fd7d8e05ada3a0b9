package tensor

import "math"

// The one place the tensor tests state their tolerances, per dtype and
// per op family. A result passes when |got − want| ≤ rel·|want| + abs,
// where want is the float64 reference computed from the (already rounded)
// inputs, so only the op's own error counts.
//
//   - exact: +, −, ·, ÷, comparisons, copies, min/max, where, abs, neg…:
//     one correct rounding of the result (half an ulp) — GPUs may flush
//     or fuse, so a whole ulp.
//   - transcendental: exp, log, tanh, erf-based GELU…: GPU built-ins are
//     accurate to a few ulp over the ranges tested (WGSL guarantees 3 ulp
//     for exp/log on [-∞, ∞] in practice on llvmpipe and Vulkan drivers);
//     8 ulp plus an absolute floor where the result nears 0 (log near 1,
//     sin near π) and cancellation makes relative error meaningless.
//   - sum-like (reductions, matmul): the rounding error of an n-term sum
//     grows with n and with Σ|terms|, so those tests scale the absolute
//     part by the magnitude; see sumTol.
//
// Float16 computes in float32 and rounds once (CPU), so one float16
// rounding (2⁻¹¹ relative) dominates; float64 runs on the CPU only, with
// Go's math library (≤ 1 ulp) — its tolerance just absorbs that.
type tolerance struct{ rel, abs float64 }

type opFamily int

const (
	familyExact opFamily = iota
	familyTranscendental
)

var tolerances = map[DType][2]tolerance{ // indexed by opFamily
	Float32: {{rel: 0x1p-23, abs: 0}, {rel: 8 * 0x1p-23, abs: 2e-6}},
	Float64: {{rel: 0x1p-52, abs: 0}, {rel: 4 * 0x1p-52, abs: 1e-14}},
	Float16: {{rel: 0x1p-10, abs: 0x1p-24}, {rel: 2 * 0x1p-10, abs: 1e-4}},
	Int32:   {{}, {}},
}

// epsilon is the unit roundoff of each dtype, for sum-like tolerances.
var epsilon = map[DType]float64{Float32: 0x1p-24, Float64: 0x1p-53, Float16: 0x1p-11, Int32: 0}

func tolFor(dtype DType, family opFamily) func(want float64) float64 {
	t := tolerances[dtype][family]
	return func(want float64) float64 { return t.rel*math.Abs(want) + t.abs }
}

// sumTol is the tolerance for a result that sums n terms whose absolute
// values add up to magnitude: the classic bound n·ε·Σ|terms| is far too
// pessimistic for pairwise or blocked sums, so √n·ε·Σ|terms|, with a
// floor of a few ulp of the result and room for the final rounding.
func sumTol(dtype DType, n int, magnitude, want float64) float64 {
	eps := epsilon[dtype]
	return 4*math.Sqrt(float64(max(n, 1)))*eps*magnitude + 4*eps*math.Abs(want) + eps*1e-3
}
