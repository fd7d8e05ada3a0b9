package tensor

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// publicBinary is the entry of the public binary ops: misuse checks, then the
// op table's capability check, then the kernel.
func publicBinary(op string, kernel hal.BinaryOp, a, b *Tensor) *Tensor {
	return routed(op, familyElementwise, elementwiseSize(a, b), func() *Tensor {
		dev := sameDevice(op, a, b)
		sameDType(op, a, b)
		broadcastShapes(op, a.shape, b.shape)
		checkOp(op, dev, a.dtype)
		return binaryOp(op, kernel, a, b)
	}, &a, &b)
}

// binaryOp runs an elementwise kernel of two inputs under NumPy
// broadcasting. Both operands must share a dtype; Int32 Div promotes both
// to Float32 (true division, as torch), comparisons give an Int32 mask.
func binaryOp(op string, kernel hal.BinaryOp, a, b *Tensor) *Tensor {
	dev := sameDevice(op, a, b)
	sameDType(op, a, b)
	shape := broadcastShapes(op, a.shape, b.shape)
	if kernel == hal.Div && a.dtype == Int32 {
		fa, fb := a.Cast(Float32), b.Cast(Float32)
		defer releaseAll(fa, fb)
		return binaryOp(op, kernel, fa, fb)
	}
	dev.requireKernel(op, a.dtype, kernel.Kernel(), a.dtype)
	result := a.dtype
	if kernel.IsComparison() {
		result = Int32
	}
	return compute(op, dev, result, shape, []*Tensor{a, b}, func(dst hal.View) error {
		return dev.hal.Binary(kernel, dst, a.expanded(shape), b.expanded(shape))
	})
}

// binaryScalar runs a binary kernel against a scalar of a's dtype,
// broadcast over a. Int32 Div divides in Float32, so the scalar keeps its
// fraction there.
func binaryScalar(op string, kernel hal.BinaryOp, a *Tensor, s float64) *Tensor {
	a.checkLive(op)
	x := a
	if kernel == hal.Div && a.dtype == Int32 {
		x = a.Cast(Float32)
		defer x.Release()
	}
	x.dev.requireKernel(op, a.dtype, kernel.Kernel(), x.dtype)
	sc := full(op, x.dev, x.dtype, s, nil)
	defer sc.Release()
	return binaryOp(op, kernel, x, sc)
}

// publicScalar is the entry of the public scalar ops.
func publicScalar(op string, kernel hal.BinaryOp, a *Tensor, s float64) *Tensor {
	a.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(a), func() *Tensor {
		checkOp(op, a.dev, a.dtype)
		return binaryScalar(op, kernel, a, s)
	}, &a)
}

// Add returns a + b elementwise, broadcasting as NumPy.
func Add(a, b *Tensor) *Tensor { return publicBinary("Add", hal.Add, a, b) }

// Sub returns a − b elementwise, broadcasting as NumPy.
func Sub(a, b *Tensor) *Tensor { return publicBinary("Sub", hal.Sub, a, b) }

// Mul returns a · b elementwise, broadcasting as NumPy.
func Mul(a, b *Tensor) *Tensor { return publicBinary("Mul", hal.Mul, a, b) }

// Div returns a / b elementwise, broadcasting as NumPy. Int32 operands
// give a Float32 true quotient, as torch.div.
func Div(a, b *Tensor) *Tensor { return publicBinary("Div", hal.Div, a, b) }

// Pow returns aᵇ elementwise, broadcasting as NumPy (float dtypes only).
func Pow(a, b *Tensor) *Tensor { return publicBinary("Pow", hal.Pow, a, b) }

// Maximum returns max(a, b) elementwise; NaN propagates.
func Maximum(a, b *Tensor) *Tensor { return publicBinary("Maximum", hal.Maximum, a, b) }

// Minimum returns min(a, b) elementwise; NaN propagates.
func Minimum(a, b *Tensor) *Tensor { return publicBinary("Minimum", hal.Minimum, a, b) }

// Eq returns the Int32 mask a = b (1 where true, 0 where false).
func Eq(a, b *Tensor) *Tensor { return publicBinary("Eq", hal.Eq, a, b) }

// Ne returns the Int32 mask a ≠ b; NaN is unequal to everything.
func Ne(a, b *Tensor) *Tensor { return publicBinary("Ne", hal.Ne, a, b) }

// Lt returns the Int32 mask a < b.
func Lt(a, b *Tensor) *Tensor { return publicBinary("Lt", hal.Lt, a, b) }

// Le returns the Int32 mask a ≤ b.
func Le(a, b *Tensor) *Tensor { return publicBinary("Le", hal.Le, a, b) }

// Gt returns the Int32 mask a > b.
func Gt(a, b *Tensor) *Tensor { return publicBinary("Gt", hal.Gt, a, b) }

// Ge returns the Int32 mask a ≥ b.
func Ge(a, b *Tensor) *Tensor { return publicBinary("Ge", hal.Ge, a, b) }

// Add returns t + b; see the package function Add.
func (t *Tensor) Add(b *Tensor) *Tensor { return Add(t, b) }

// Sub returns t − b; see the package function Sub.
func (t *Tensor) Sub(b *Tensor) *Tensor { return Sub(t, b) }

// Mul returns t · b; see the package function Mul.
func (t *Tensor) Mul(b *Tensor) *Tensor { return Mul(t, b) }

// Div returns t / b; see the package function Div.
func (t *Tensor) Div(b *Tensor) *Tensor { return Div(t, b) }

// Pow returns tᵇ; see the package function Pow.
func (t *Tensor) Pow(b *Tensor) *Tensor { return Pow(t, b) }

// Maximum returns max(t, b); see the package function Maximum.
func (t *Tensor) Maximum(b *Tensor) *Tensor { return Maximum(t, b) }

// Minimum returns min(t, b); see the package function Minimum.
func (t *Tensor) Minimum(b *Tensor) *Tensor { return Minimum(t, b) }

// Eq returns the Int32 mask t = b.
func (t *Tensor) Eq(b *Tensor) *Tensor { return Eq(t, b) }

// Ne returns the Int32 mask t ≠ b.
func (t *Tensor) Ne(b *Tensor) *Tensor { return Ne(t, b) }

// Lt returns the Int32 mask t < b.
func (t *Tensor) Lt(b *Tensor) *Tensor { return Lt(t, b) }

// Le returns the Int32 mask t ≤ b.
func (t *Tensor) Le(b *Tensor) *Tensor { return Le(t, b) }

// Gt returns the Int32 mask t > b.
func (t *Tensor) Gt(b *Tensor) *Tensor { return Gt(t, b) }

// Ge returns the Int32 mask t ≥ b.
func (t *Tensor) Ge(b *Tensor) *Tensor { return Ge(t, b) }

// AddScalar returns t + s; s takes t's dtype.
func (t *Tensor) AddScalar(s float64) *Tensor { return publicScalar("AddScalar", hal.Add, t, s) }

// SubScalar returns t − s; s takes t's dtype.
func (t *Tensor) SubScalar(s float64) *Tensor { return publicScalar("SubScalar", hal.Sub, t, s) }

// MulScalar returns t · s; s takes t's dtype.
func (t *Tensor) MulScalar(s float64) *Tensor { return publicScalar("MulScalar", hal.Mul, t, s) }

// DivScalar returns t / s. An Int32 t divides in Float32 (so does s).
func (t *Tensor) DivScalar(s float64) *Tensor { return publicScalar("DivScalar", hal.Div, t, s) }

// PowScalar returns tˢ (float dtypes only).
func (t *Tensor) PowScalar(s float64) *Tensor { return publicScalar("PowScalar", hal.Pow, t, s) }

// MaximumScalar returns max(t, s); s takes t's dtype.
func (t *Tensor) MaximumScalar(s float64) *Tensor {
	return publicScalar("MaximumScalar", hal.Maximum, t, s)
}

// MinimumScalar returns min(t, s); s takes t's dtype.
func (t *Tensor) MinimumScalar(s float64) *Tensor {
	return publicScalar("MinimumScalar", hal.Minimum, t, s)
}

// EqScalar returns the Int32 mask t = s; s takes t's dtype.
func (t *Tensor) EqScalar(s float64) *Tensor { return publicScalar("EqScalar", hal.Eq, t, s) }

// NeScalar returns the Int32 mask t ≠ s; s takes t's dtype.
func (t *Tensor) NeScalar(s float64) *Tensor { return publicScalar("NeScalar", hal.Ne, t, s) }

// LtScalar returns the Int32 mask t < s; s takes t's dtype.
func (t *Tensor) LtScalar(s float64) *Tensor { return publicScalar("LtScalar", hal.Lt, t, s) }

// LeScalar returns the Int32 mask t ≤ s; s takes t's dtype.
func (t *Tensor) LeScalar(s float64) *Tensor { return publicScalar("LeScalar", hal.Le, t, s) }

// GtScalar returns the Int32 mask t > s; s takes t's dtype.
func (t *Tensor) GtScalar(s float64) *Tensor { return publicScalar("GtScalar", hal.Gt, t, s) }

// GeScalar returns the Int32 mask t ≥ s; s takes t's dtype.
func (t *Tensor) GeScalar(s float64) *Tensor { return publicScalar("GeScalar", hal.Ge, t, s) }

// intPromoted lists the unary functions whose Int32 form computes in
// Float32, as torch does for sqrt, exp and friends; the other unary ops
// keep Int32 (neg, abs, sign, square, relu, clamp) or refuse it.
var intPromoted = map[hal.UnaryOp]bool{
	hal.Reciprocal: true, hal.Sqrt: true, hal.Rsqrt: true, hal.Exp: true, hal.Log: true, hal.Log1p: true,
	hal.Sin: true, hal.Cos: true, hal.Tan: true, hal.Tanh: true, hal.Sigmoid: true, hal.Erf: true,
}

// unary runs an elementwise kernel of one input.
func unary(op string, kernel hal.UnaryOp, x *Tensor, args hal.Args) *Tensor {
	x.checkLive(op)
	if x.dtype == Int32 && intPromoted[kernel] {
		f := x.Cast(Float32)
		defer f.Release()
		return unary(op, kernel, f, args)
	}
	if !x.dev.caps().Supports(kernel.Kernel(), x.dtype) {
		return composedUnary(op, kernel, x, args) // see composites.go
	}
	return compute(op, x.dev, x.dtype, x.shape, []*Tensor{x}, func(dst hal.View) error {
		return x.dev.hal.Unary(kernel, dst, x.view(), args)
	})
}

// publicUnary is the entry of the public unary ops.
func publicUnary(op string, kernel hal.UnaryOp, x *Tensor, args hal.Args) *Tensor {
	x.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(x), func() *Tensor {
		checkOp(op, x.dev, x.dtype)
		return unary(op, kernel, x, args)
	}, &x)
}

func (t *Tensor) unary(op string, kernel hal.UnaryOp) *Tensor {
	return publicUnary(op, kernel, t, hal.Args{})
}

// Neg returns −x elementwise.
func Neg(x *Tensor) *Tensor { return x.unary("Neg", hal.Neg) }

// Abs returns |x| elementwise.
func Abs(x *Tensor) *Tensor { return x.unary("Abs", hal.Abs) }

// Sign returns −1, 0 or 1 elementwise (NaN stays NaN).
func Sign(x *Tensor) *Tensor { return x.unary("Sign", hal.Sign) }

// Reciprocal returns 1/x elementwise.
func Reciprocal(x *Tensor) *Tensor { return x.unary("Reciprocal", hal.Reciprocal) }

// Sqrt returns √x elementwise.
func Sqrt(x *Tensor) *Tensor { return x.unary("Sqrt", hal.Sqrt) }

// Rsqrt returns 1/√x elementwise.
func Rsqrt(x *Tensor) *Tensor { return x.unary("Rsqrt", hal.Rsqrt) }

// Square returns x² elementwise.
func Square(x *Tensor) *Tensor { return x.unary("Square", hal.Square) }

// Exp returns eˣ elementwise.
func Exp(x *Tensor) *Tensor { return x.unary("Exp", hal.Exp) }

// Log returns ln x elementwise.
func Log(x *Tensor) *Tensor { return x.unary("Log", hal.Log) }

// Log1p returns ln(1+x) elementwise, accurate near 0.
func Log1p(x *Tensor) *Tensor { return x.unary("Log1p", hal.Log1p) }

// Sin returns sin x elementwise.
func Sin(x *Tensor) *Tensor { return x.unary("Sin", hal.Sin) }

// Cos returns cos x elementwise.
func Cos(x *Tensor) *Tensor { return x.unary("Cos", hal.Cos) }

// Tan returns tan x elementwise.
func Tan(x *Tensor) *Tensor { return x.unary("Tan", hal.Tan) }

// Tanh returns tanh x elementwise.
func Tanh(x *Tensor) *Tensor { return x.unary("Tanh", hal.Tanh) }

// Erf returns the error function erf x = 2/√π·∫₀ˣ e^(−t²) dt
// elementwise.
func Erf(x *Tensor) *Tensor { return x.unary("Erf", hal.Erf) }

// Sigmoid returns 1/(1+e⁻ˣ) elementwise.
func Sigmoid(x *Tensor) *Tensor { return x.unary("Sigmoid", hal.Sigmoid) }

// ReLU returns max(x, 0) elementwise; NaN stays NaN.
func ReLU(x *Tensor) *Tensor { return x.unary("ReLU", hal.ReLU) }

// LeakyReLU returns x ≥ 0 ? x : alpha·x elementwise.
func LeakyReLU(x *Tensor, alpha float64) *Tensor {
	return publicUnary("LeakyReLU", hal.LeakyReLU, x, hal.Args{Alpha: alpha})
}

// ELU returns x > 0 ? x : alpha·(eˣ−1) elementwise.
func ELU(x *Tensor, alpha float64) *Tensor {
	return publicUnary("ELU", hal.ELU, x, hal.Args{Alpha: alpha})
}

// GELU returns x·Φ(x), the exact (erf) form of torch's gelu.
func GELU(x *Tensor) *Tensor { return x.unary("GELU", hal.GELU) }

// GELUTanh returns the tanh approximation of GELU, torch's
// gelu(approximate="tanh").
func GELUTanh(x *Tensor) *Tensor { return x.unary("GELUTanh", hal.GELUTanh) }

// SiLU returns x·sigmoid(x) (swish) elementwise.
func SiLU(x *Tensor) *Tensor { return x.unary("SiLU", hal.SiLU) }

// Softplus returns ln(1+e^(beta·x))/beta elementwise, or x where
// beta·x > threshold, as torch.nn.functional.softplus (beta 1, threshold
// 20 by default there).
func Softplus(x *Tensor, beta, threshold float64) *Tensor {
	return publicUnary("Softplus", hal.Softplus, x, hal.Args{Alpha: beta, Beta: threshold})
}

// Clamp returns min(max(x, lo), hi) elementwise; pass math.Inf(-1) or
// math.Inf(1) to leave a side open. NaN stays NaN. On Int32 tensors the
// bounds round inwards to integers, so Clamp(x, 0.5, 2.5) keeps 1 … 2.
func Clamp(x *Tensor, lo, hi float64) *Tensor {
	const op = "Clamp"
	x.checkLive(op)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		misuse(op, "NaN bound (lo %v, hi %v)", lo, hi)
	}
	if x.dtype == Int32 {
		lo = math.Max(math.Ceil(lo), math.MinInt32)
		hi = math.Min(math.Floor(hi), math.MaxInt32)
	}
	return publicUnary(op, hal.Clamp, x, hal.Args{Alpha: lo, Beta: hi})
}

// Neg returns −t elementwise.
func (t *Tensor) Neg() *Tensor { return Neg(t) }

// Abs returns |t| elementwise.
func (t *Tensor) Abs() *Tensor { return Abs(t) }

// Sign returns the sign of t elementwise.
func (t *Tensor) Sign() *Tensor { return Sign(t) }

// Reciprocal returns 1/t elementwise.
func (t *Tensor) Reciprocal() *Tensor { return Reciprocal(t) }

// Sqrt returns √t elementwise.
func (t *Tensor) Sqrt() *Tensor { return Sqrt(t) }

// Rsqrt returns 1/√t elementwise.
func (t *Tensor) Rsqrt() *Tensor { return Rsqrt(t) }

// Square returns t² elementwise.
func (t *Tensor) Square() *Tensor { return Square(t) }

// Exp returns eᵗ elementwise.
func (t *Tensor) Exp() *Tensor { return Exp(t) }

// Log returns ln t elementwise.
func (t *Tensor) Log() *Tensor { return Log(t) }

// Log1p returns ln(1+t) elementwise.
func (t *Tensor) Log1p() *Tensor { return Log1p(t) }

// Sin returns sin t elementwise.
func (t *Tensor) Sin() *Tensor { return Sin(t) }

// Cos returns cos t elementwise.
func (t *Tensor) Cos() *Tensor { return Cos(t) }

// Tan returns tan t elementwise.
func (t *Tensor) Tan() *Tensor { return Tan(t) }

// Tanh returns tanh t elementwise.
func (t *Tensor) Tanh() *Tensor { return Tanh(t) }

// Erf returns erf t elementwise.
func (t *Tensor) Erf() *Tensor { return Erf(t) }

// Sigmoid returns 1/(1+e⁻ᵗ) elementwise.
func (t *Tensor) Sigmoid() *Tensor { return Sigmoid(t) }

// ReLU returns max(t, 0) elementwise.
func (t *Tensor) ReLU() *Tensor { return ReLU(t) }

// LeakyReLU returns t ≥ 0 ? t : alpha·t elementwise.
func (t *Tensor) LeakyReLU(alpha float64) *Tensor { return LeakyReLU(t, alpha) }

// ELU returns t > 0 ? t : alpha·(eᵗ−1) elementwise.
func (t *Tensor) ELU(alpha float64) *Tensor { return ELU(t, alpha) }

// GELU returns the exact GELU of t.
func (t *Tensor) GELU() *Tensor { return GELU(t) }

// GELUTanh returns the tanh approximation of GELU of t.
func (t *Tensor) GELUTanh() *Tensor { return GELUTanh(t) }

// SiLU returns t·sigmoid(t) elementwise.
func (t *Tensor) SiLU() *Tensor { return SiLU(t) }

// Softplus returns torch's softplus(t, beta, threshold).
func (t *Tensor) Softplus(beta, threshold float64) *Tensor { return Softplus(t, beta, threshold) }

// Clamp returns t clamped to [lo, hi]; see the package function Clamp.
func (t *Tensor) Clamp(lo, hi float64) *Tensor { return Clamp(t, lo, hi) }

// Where returns cond ≠ 0 ? a : b elementwise, broadcasting all three as
// NumPy. cond is an Int32 mask (as the comparisons produce); a and b share
// a dtype, which the result has.
func Where(cond, a, b *Tensor) *Tensor {
	const op = "Where"
	return routed(op, familyElementwise, elementwiseSize(cond, a, b), func() *Tensor {
		dev := sameDevice(op, cond, a, b)
		if cond.dtype != Int32 {
			misuse(op, "condition must be int32 (a mask), got %v", cond.dtype)
		}
		sameDType(op, a, b)
		shape := broadcastShapes(op, cond.shape, a.shape, b.shape)
		checkOp(op, dev, a.dtype)
		dev.requireKernel(op, a.dtype, hal.KernelWhere, a.dtype)
		return compute(op, dev, a.dtype, shape, []*Tensor{cond, a, b}, func(dst hal.View) error {
			return dev.hal.Where(dst, cond.expanded(shape), a.expanded(shape), b.expanded(shape))
		})
	}, &cond, &a, &b)
}

// Cast returns t converted to dtype: floats to Int32 truncate toward zero
// and saturate, NaN becomes 0. Casting to t's own dtype returns a new
// reference to t's data (release it as any tensor), as torch's .to does.
func (t *Tensor) Cast(dtype DType) *Tensor {
	const op = "Cast"
	t.checkLive(op)
	if !dtype.Valid() {
		misuse(op, "invalid dtype %v", dtype)
	}
	if dtype == t.dtype {
		return t.alias()
	}
	checkOp(op, t.dev, t.dtype)
	t.dev.requireKernel(op, dtype, hal.KernelCopy, dtype)
	return compute(op, t.dev, dtype, t.shape, []*Tensor{t}, func(dst hal.View) error {
		return t.dev.hal.Copy(dst, t.view())
	})
}

// Contiguous returns t densely packed in row-major order: t itself (a new
// reference) when it already is, else a copy made by one strided-copy
// kernel.
func (t *Tensor) Contiguous() *Tensor {
	const op = "Contiguous"
	t.checkLive(op)
	checkOp(op, t.dev, t.dtype)
	if t.IsContiguous() {
		return t.alias()
	}
	return t.copy(op)
}

// copy returns a contiguous copy of t that owns its buffer.
func (t *Tensor) copy(op string) *Tensor {
	t.dev.requireKernel(op, t.dtype, hal.KernelCopy, t.dtype)
	return compute(op, t.dev, t.dtype, slices.Clone(t.shape), []*Tensor{t}, func(dst hal.View) error {
		return t.dev.hal.Copy(dst, t.view())
	})
}

var _ = registerOps(elementwiseOps()...)

// elementwiseOps is the op table's part for this file.
func elementwiseOps() []Op {
	var ops []Op
	for _, b := range []struct {
		name   string
		kernel hal.BinaryOp
	}{
		{"Add", hal.Add}, {"Sub", hal.Sub}, {"Mul", hal.Mul}, {"Div", hal.Div}, {"Pow", hal.Pow},
		{"Maximum", hal.Maximum}, {"Minimum", hal.Minimum},
		{"Eq", hal.Eq}, {"Ne", hal.Ne}, {"Lt", hal.Lt}, {"Le", hal.Le}, {"Gt", hal.Gt}, {"Ge", hal.Ge},
	} {
		dtypes := allTypes
		if b.kernel == hal.Pow {
			dtypes = floatTypes
		}
		ops = append(ops, Op{Name: b.name, Family: FamilyBinary, DTypes: dtypes, Kernels: binaryKernels(b.kernel, false)})
		ops = append(ops, Op{Name: b.name + "Scalar", Family: FamilyScalar, DTypes: dtypes, Kernels: binaryKernels(b.kernel, true)})
	}
	for _, u := range []struct {
		name   string
		kernel hal.UnaryOp
	}{
		{"Neg", hal.Neg}, {"Abs", hal.Abs}, {"Sign", hal.Sign}, {"Reciprocal", hal.Reciprocal}, {"Sqrt", hal.Sqrt},
		{"Rsqrt", hal.Rsqrt}, {"Square", hal.Square}, {"Exp", hal.Exp}, {"Log", hal.Log}, {"Log1p", hal.Log1p},
		{"Sin", hal.Sin}, {"Cos", hal.Cos}, {"Tan", hal.Tan}, {"Tanh", hal.Tanh}, {"Sigmoid", hal.Sigmoid},
		{"ReLU", hal.ReLU}, {"LeakyReLU", hal.LeakyReLU}, {"ELU", hal.ELU}, {"GELU", hal.GELU},
		{"GELUTanh", hal.GELUTanh}, {"SiLU", hal.SiLU}, {"Softplus", hal.Softplus}, {"Clamp", hal.Clamp},
		{"Erf", hal.Erf},
	} {
		dtypes := floatTypes
		if intPromoted[u.kernel] || intUnary[u.kernel] {
			dtypes = allTypes
		}
		kernel := u.kernel
		ops = append(ops, Op{Name: u.name, Family: FamilyUnary, DTypes: dtypes, Kernels: func(t DType) []Kernel {
			if t == Int32 && intPromoted[kernel] {
				return kernels(k(hal.KernelCopy, Float32), k(kernel.Kernel(), Float32))
			}
			return kernels(k(kernel.Kernel(), t))
		}})
	}
	return append(ops,
		Op{Name: "Where", Family: FamilyUnary, DTypes: allTypes, Kernels: func(t DType) []Kernel {
			return kernels(k(hal.KernelWhere, t))
		}},
		Op{Name: "Cast", Family: FamilyUnary, DTypes: allTypes, Kernels: none},
		Op{Name: "Contiguous", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	)
}

// intUnary lists the unary kernels hal runs on Int32 itself.
var intUnary = map[hal.UnaryOp]bool{hal.Neg: true, hal.Abs: true, hal.Sign: true, hal.Square: true, hal.ReLU: true, hal.Clamp: true}

// binaryKernels is what a binary op (or its scalar form, which fills a
// scalar first) runs: Int32 Div casts both sides to Float32.
func binaryKernels(kernel hal.BinaryOp, withScalar bool) func(DType) []Kernel {
	return func(t DType) []Kernel {
		ct := t
		var ks []Kernel
		if kernel == hal.Div && t == Int32 {
			ct = Float32
			ks = append(ks, k(hal.KernelCopy, Float32))
		}
		if withScalar {
			ks = append(ks, k(hal.KernelFill, ct))
		}
		return append(ks, k(kernel.Kernel(), ct))
	}
}
