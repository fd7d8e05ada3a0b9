package haltest

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// The floating-point rules a device's kernels follow, stated once: the
// tolerances of this suite, and of the tests of the packages above hal
// (tensor, graph, nn), are derived from them.
//
// The CPU backend follows IEEE 754: +, −, ×, ÷, √ and conversions round
// to nearest (half an ulp), and subnormals are kept. A WebGPU device
// follows WGSL (W3C WebGPU Shading Language, §15.7 "Floating Point
// Evaluation"), which gives its implementations latitude that real GPUs
// use (an NVIDIA H200 on Vulkan divides to about an ulp and flushes
// subnormals):
//
//   - "correctly rounded" carries no rounding mode: the result may be
//     either neighbour of the exact value (§15.7.4), so +, −, × and
//     conversions are off by up to one ulp;
//   - any input or output of the operations of §15.7.4 may be flushed to
//     zero when it is subnormal (§15.7.2);
//   - division and the built-ins have the accuracy of WGSLAccuracy.
//
// The kernels do not use WGSL's exp, log, sin, cos, tan, tanh or pow:
// shaders/math.wgsl implements them (and erf, sigmoid, GELU …) from +, −,
// ×, ÷, √ and bit operations, to a few ulp on every device, because WGSL's
// own are far looser (exp: 3 + 2|x| ulp; sin: 2⁻¹¹ absolute, and nothing
// at all outside [−π, π]). Their tolerances are what we guarantee
// ourselves (unaryTol, measured on the CPU backend, lavapipe and
// llvmpipe), plus, on a WGSL device, the latitude of every division and
// built-in on their evaluation path (kernelLatitude): a GPU's division is
// what WGSL allows, whoever calls it. WGSLAccuracy also lists the rows of
// the built-ins math.wgsl replaces, for comparison.

// Accuracy is one row of an accuracy table: the largest error an
// operation may make, in ulps of its exact result or absolutely.
type Accuracy struct {
	// ULPs bounds the error in ulps of the exact result; for rows that
	// compose operations (Inherits), it is the relative bound of the
	// composition in the same units: ULPs·2u relative.
	ULPs float64
	// PerX adds this many ulps per unit of |x| (exp: 3 + 2|x| ulp).
	PerX float64
	// Abs is an absolute bound that replaces the ulps on AbsOn.
	Abs   float64
	AbsOn [2]float64
	// Defined is the interval of |operand| (the divisor for x/y, else x)
	// outside which the accuracy is undefined; zero for everywhere.
	Defined [2]float64
	// Inherits is the WGSL expression whose accuracy the row takes, if the
	// specification defines it so.
	Inherits string
}

// ErrorAt is the largest |got − want| the row allows for an operation
// whose argument is x and exact result want, in dtype dt; +Inf where the
// accuracy is undefined, or inherited from an expression the row does not
// bound (tan, tanh, pow: their inputs' errors compose).
func (a Accuracy) ErrorAt(dt hal.DType, x, want float64) float64 {
	switch {
	case a.Defined != [2]float64{} && (math.Abs(x) < a.Defined[0] || math.Abs(x) > a.Defined[1]):
		return math.Inf(1)
	case a.Abs > 0 && x >= a.AbsOn[0] && x <= a.AbsOn[1]:
		return a.Abs
	case a.ULPs == 0 && a.PerX == 0:
		return math.Inf(1) // absolute only and x outside AbsOn, or inherited
	case a.Inherits != "":
		return a.rel() * unitRoundoff(dt) * math.Abs(want) // a composition: relative
	}
	return (a.ULPs + a.PerX*math.Abs(x)) * ULP(dt, want)
}

// rel is the row's bound relative to |result|, in units of the unit
// roundoff u: an ulp is at most 2u·|result| (at the bottom of a binade).
func (a Accuracy) rel() float64 { return 2 * a.ULPs }

// WGSLRow is one operation of WGSL's accuracy table (§15.7.4.1), with its
// float32 and float16 columns.
type WGSLRow struct {
	Op       string
	F32, F16 Accuracy
}

// WGSLAccuracy is WGSL §15.7.4.1 for the operations the kernels use, and
// the built-ins that math.wgsl replaces.
var WGSLAccuracy = []WGSLRow{
	// "Correctly rounded", no rounding mode: either neighbour (also
	// conversions, §15.7.6).
	{Op: "x+y, x-y, x*y, conversion", F32: Accuracy{ULPs: 1}, F16: Accuracy{ULPs: 1}},
	{Op: "x/y", F32: Accuracy{ULPs: 2.5, Defined: [2]float64{0x1p-126, 0x1p126}},
		F16: Accuracy{ULPs: 2.5, Defined: [2]float64{0x1p-14, 0x1p14}}},
	{Op: "inverseSqrt", F32: Accuracy{ULPs: 2}, F16: Accuracy{ULPs: 2}},
	// 1.0 / inverseSqrt(x): 2 ulp of 1/√x, then a 2.5-ulp division, is
	// 4u + 5u relative.
	{Op: "sqrt", F32: Accuracy{ULPs: 4.5, Inherits: "1.0 / inverseSqrt(x)"},
		F16: Accuracy{ULPs: 4.5, Inherits: "1.0 / inverseSqrt(x)"}},
	{Op: "exp", F32: Accuracy{ULPs: 3, PerX: 2}, F16: Accuracy{ULPs: 1, PerX: 2}},
	{Op: "log", F32: Accuracy{ULPs: 3, Abs: 0x1p-21, AbsOn: [2]float64{0.5, 2}},
		F16: Accuracy{ULPs: 3, Abs: 0x1p-7, AbsOn: [2]float64{0.5, 2}}},
	{Op: "sin", F32: Accuracy{Abs: 0x1p-11, AbsOn: [2]float64{-math.Pi, math.Pi}},
		F16: Accuracy{Abs: 0x1p-7, AbsOn: [2]float64{-math.Pi, math.Pi}}},
	{Op: "cos", F32: Accuracy{Abs: 0x1p-11, AbsOn: [2]float64{-math.Pi, math.Pi}},
		F16: Accuracy{Abs: 0x1p-7, AbsOn: [2]float64{-math.Pi, math.Pi}}},
	{Op: "tan", F32: Accuracy{Inherits: "sin(x) / cos(x)"}, F16: Accuracy{Inherits: "sin(x) / cos(x)"}},
	{Op: "tanh", F32: Accuracy{Inherits: "sinh(x) / cosh(x)"}, F16: Accuracy{Inherits: "sinh(x) / cosh(x)"}},
	{Op: "pow", F32: Accuracy{Inherits: "exp2(y * log2(x))"}, F16: Accuracy{Inherits: "exp2(y * log2(x))"}},
}

// wgslRow returns the column of op's row for dt (float16's for Float16,
// else float32's).
func wgslRow(op string, dt hal.DType) Accuracy {
	for _, r := range WGSLAccuracy {
		if r.Op == op {
			if dt == hal.Float16 {
				return r.F16
			}
			return r.F32
		}
	}
	panic("haltest: no WGSL accuracy row " + op)
}

// primitive is an operation whose accuracy the two arithmetics state
// differently, as it appears on the evaluation path of a kernel.
type primitive int

const (
	primRound       primitive = iota // +, −, ×, conversions: "correctly rounded"
	primDiv                          // x / y
	primSqrt                         // sqrt(x)
	primInverseSqrt                  // inverseSqrt(x)
)

var primitiveRows = map[primitive]string{
	primRound:       "x+y, x-y, x*y, conversion",
	primDiv:         "x/y",
	primSqrt:        "sqrt",
	primInverseSqrt: "inverseSqrt",
}

// latitude is one primitive on a kernel's evaluation path, with the weight
// by which its relative error reaches the kernel's result (1: the result
// is, or is a product with, the primitive's result).
type latitude struct {
	prim   primitive
	weight float64
}

// kernelLatitude lists, per kernel key of hal.Kernels(), the primitives
// whose WGSL latitude the kernel inherits beyond the IEEE 754 evaluation
// that its own error budget assumes. Kernels not listed inherit none: they
// move or select values, or are polynomials, ldexp and frexp (math.wgsl's
// exp, expm1, sin, cos), whose budgets hold on every device. Weights are
// first-order bounds on how much of a primitive's relative error survives
// in the result (see shaders/math.wgsl for each formula).
var kernelLatitude = map[string][]latitude{
	"binary.add": {{primRound, 1}}, "binary.sub": {{primRound, 1}}, "binary.mul": {{primRound, 1}},
	"unary.square":     {{primRound, 1}},
	hal.KernelCopy:     {{primRound, 1}}, // conversions between dtypes
	hal.KernelFill:     {{primRound, 1}}, // the constant, converted to the dtype
	"random.uniform":   {{primRound, 1}}, // the 24-bit draw, rounded to float16
	"unary.leaky_relu": {{primRound, 1}}, // Alpha·x
	"binary.div":       {{primDiv, 1}},
	"unary.reciprocal": {{primDiv, 1}},
	"unary.sqrt":       {{primSqrt, 1}},
	"unary.rsqrt":      {{primInverseSqrt, 1}},
	// log1p_reduced(f) = f − s·(f − R) with s = f/(2+f): an error δ in s
	// moves the result by δ·f²/2, at most δ/4 of ln x (ln(1+f) for
	// log1p, where the large-x correction's division is negligible).
	"unary.log":   {{primDiv, 0.25}},
	"unary.log1p": {{primDiv, 0.5}},
	"unary.tan":   {{primDiv, 1}}, // sin r / cos r
	"unary.tanh":  {{primDiv, 1}}, // e / (e + 2)
	// 1 / (1 + e), then e·s for x < 0; SiLU and GELUTanh multiply it.
	"unary.sigmoid": {{primDiv, 1}}, "unary.silu": {{primDiv, 1}}, "unary.gelu_tanh": {{primDiv, 1}},
	// erfc(z) = e^(−z²)·F(t)·t with t = 1/z: t's error reaches erfc at
	// most once (|t·F′/F| < 1 and F′ < 0), and erfc ≤ erf where it is used.
	"unary.erf": {{primDiv, 1}}, "unary.gelu": {{primDiv, 1}},
	// ln(1 + e^−|t|)/β: log1p's division and the one by β.
	"unary.softplus": {{primDiv, 1.5}},
	// 1/xⁿ for negative integer exponents or √x for y = ½, never both
	// (the suite applies the right one per element; this is the larger);
	// the exponent's ln adds to the condition term (binaryBounds).
	"binary.pow": {{primSqrt, 1}},
	// ÷ Σ, or ln Σ's division (at most a quarter of it times ln Σ, which is
	// at most |log_softmax|).
	hal.KernelSoftmax: {{primDiv, 1}},
	// (x − m)·inverseSqrt(Σ/n + eps): the rsqrt, and the division by n
	// halved by it.
	hal.KernelLayerNorm: {{primInverseSqrt, 1}, {primDiv, 0.5}},
	// m + ln Σ: ln's division, relative to ln Σ ≤ |result| + |m|.
	"reduce.logsumexp": {{primDiv, 0.25}},
	// Σ / count.
	"pool2d.avg": {{primDiv, 1}},
	// √(−2 ln u₁)·cos θ.
	"random.normal": {{primSqrt, 1}},
	// ((g + 1)·W − 1) / 2: a division of a coordinate of size W.
	hal.KernelGridSample: {{primDiv, 1}},
}

// Arithmetic is the set of floating-point rules a device's kernels
// follow: IEEE (the CPU backend) or WGSL (every WebGPU device).
type Arithmetic struct {
	name string
	wgsl bool
}

var (
	// IEEE is IEEE 754 arithmetic with round to nearest and subnormals.
	IEEE = Arithmetic{name: "IEEE 754"}
	// WGSL is the accuracy WGSL promises, and no more.
	WGSL = Arithmetic{name: "WGSL", wgsl: true}
)

// ArithmeticOf is the arithmetic of a device: IEEE for the CPU backend,
// WGSL for any other (a WebGPU adapter, whatever its driver: a software
// one that happens to round correctly is held to no more than a GPU).
func ArithmeticOf(info hal.Info) Arithmetic {
	if info.Backend == "cpu" {
		return IEEE
	}
	return WGSL
}

func (a Arithmetic) String() string { return a.name }

// Faithful reports whether a "correctly rounded" result may be either
// neighbour of the exact value rather than the nearest one.
func (a Arithmetic) Faithful() bool { return a.wgsl }

// Flushes reports whether subnormal inputs, intermediates and results may
// read as zero (of either sign).
func (a Arithmetic) Flushes() bool { return a.wgsl }

// primRel is a primitive's error relative to its result, in units of dt's
// unit roundoff u: 1 (half an ulp) for IEEE's correctly rounded
// operations; the WGSL row's for WGSL.
func (a Arithmetic) primRel(p primitive, dt hal.DType) float64 {
	if !a.wgsl {
		return 1
	}
	return wgslRow(primitiveRows[p], dt).rel()
}

// extraRel is how much more error than IEEE arithmetic gives the kernel
// op may make on this arithmetic, relative to its result, in units of u.
func (a Arithmetic) extraRel(op string, dt hal.DType) float64 {
	e := 0.0
	for _, l := range kernelLatitude[op] {
		e += l.weight * (a.primRel(l.prim, dt) - IEEE.primRel(l.prim, dt))
	}
	return e
}

// ExtraULPs is how many ulps of its result the kernel (a key of
// hal.Kernels(): "binary.div", "unary.sqrt", "softmax", "pool2d.avg" …)
// may be off on this arithmetic beyond what it may be off under IEEE 754:
// the tests of the packages above hal add it to their IEEE tolerances.
// Zero on IEEE.
func (a Arithmetic) ExtraULPs(op string, dt hal.DType) float64 {
	return a.extraRel(op, dt) / 2
}

// FlushFloor is the absolute error a flushed subnormal costs in dt: the
// smallest normal number on an arithmetic that flushes, else 0. A
// flushed intermediate multiplied by m afterwards costs m times that.
func (a Arithmetic) FlushFloor(dt hal.DType) float64 {
	if !a.Flushes() {
		return 0
	}
	return minNormal(dt)
}

// ULP is the gap between the two dt values around x, the upper one where
// x is one of them: 2^(e−p+1) for |x| in [2^e, 2^(e+1)), and the
// subnormal spacing below the normals.
func ULP(dt hal.DType, x float64) float64 {
	var p int // significand bits
	switch dt {
	case hal.Float16:
		p = 11
	case hal.Float32:
		p = 24
	case hal.Float64:
		p = 53
	default:
		return 1
	}
	x = math.Abs(x)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.Inf(1)
	}
	_, e := math.Frexp(math.Max(x, minNormal(dt))) // x = f·2^e, f in [½, 1)
	return math.Ldexp(1, e-p)
}

// MinNormal is dt's smallest positive normal number.
func MinNormal(dt hal.DType) float64 { return minNormal(dt) }

// UnitRoundoff is u = 2^−p for dt's p-bit significand.
func UnitRoundoff(dt hal.DType) float64 { return unitRoundoff(dt) }
