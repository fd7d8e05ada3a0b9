package graph

import "github.com/webtensor/webtensor/tensor"

// binary records a broadcasting op of two values.
func binary(op string, f func(a, b *tensor.Tensor) *tensor.Tensor, a, b *Value) *Value {
	t := live(op, a, b)
	return record(op, f(t[0], t[1]), []*Value{a, b}, nil)
}

// scalar records op, a method of x's tensor taking one number; the number
// is the node's attrs.
func scalar(op string, f func(t *tensor.Tensor, s float64) *tensor.Tensor, x *Value, s float64) *Value {
	t := live(op, x)
	return unary(op, x, f(t[0], s), s)
}

// unaryOp records op, a tensor function of one argument.
func unaryOp(op string, f func(*tensor.Tensor) *tensor.Tensor, x *Value) *Value {
	t := live(op, x)
	return unary(op, x, f(t[0]), nil)
}

// Add is tensor.Add (a + b, broadcasting), recorded.
func Add(a, b *Value) *Value { return binary("Add", tensor.Add, a, b) }

// Sub is tensor.Sub (a − b, broadcasting), recorded.
func Sub(a, b *Value) *Value { return binary("Sub", tensor.Sub, a, b) }

// Mul is tensor.Mul (a · b, broadcasting), recorded.
func Mul(a, b *Value) *Value { return binary("Mul", tensor.Mul, a, b) }

// Div is tensor.Div (a / b, broadcasting), recorded.
func Div(a, b *Value) *Value { return binary("Div", tensor.Div, a, b) }

// Pow is tensor.Pow (aᵇ, broadcasting), recorded. As PyTorch, the gradient
// with respect to a is 0 where b = 0, and with respect to b is 0 where
// a = 0 and b ≥ 0 (instead of 0·log 0).
func Pow(a, b *Value) *Value { return binary("Pow", tensor.Pow, a, b) }

// Maximum is tensor.Maximum, recorded. Where a = b the gradient is split
// equally between them (g/2 each), as PyTorch's maximum.
func Maximum(a, b *Value) *Value { return binary("Maximum", tensor.Maximum, a, b) }

// Minimum is tensor.Minimum, recorded. Where a = b the gradient is split
// equally between them (g/2 each), as PyTorch's minimum.
func Minimum(a, b *Value) *Value { return binary("Minimum", tensor.Minimum, a, b) }

// Eq is tensor.Eq: an Int32 mask, not differentiable.
func Eq(a, b *Value) *Value { return binary("Eq", tensor.Eq, a, b) }

// Ne is tensor.Ne: an Int32 mask, not differentiable.
func Ne(a, b *Value) *Value { return binary("Ne", tensor.Ne, a, b) }

// Lt is tensor.Lt: an Int32 mask, not differentiable.
func Lt(a, b *Value) *Value { return binary("Lt", tensor.Lt, a, b) }

// Le is tensor.Le: an Int32 mask, not differentiable.
func Le(a, b *Value) *Value { return binary("Le", tensor.Le, a, b) }

// Gt is tensor.Gt: an Int32 mask, not differentiable.
func Gt(a, b *Value) *Value { return binary("Gt", tensor.Gt, a, b) }

// Ge is tensor.Ge: an Int32 mask, not differentiable.
func Ge(a, b *Value) *Value { return binary("Ge", tensor.Ge, a, b) }

// Add is the package function Add.
func (x *Value) Add(b *Value) *Value { return Add(x, b) }

// Sub is the package function Sub.
func (x *Value) Sub(b *Value) *Value { return Sub(x, b) }

// Mul is the package function Mul.
func (x *Value) Mul(b *Value) *Value { return Mul(x, b) }

// Div is the package function Div.
func (x *Value) Div(b *Value) *Value { return Div(x, b) }

// Pow is the package function Pow.
func (x *Value) Pow(b *Value) *Value { return Pow(x, b) }

// Maximum is the package function Maximum.
func (x *Value) Maximum(b *Value) *Value { return Maximum(x, b) }

// Minimum is the package function Minimum.
func (x *Value) Minimum(b *Value) *Value { return Minimum(x, b) }

// Eq is the package function Eq.
func (x *Value) Eq(b *Value) *Value { return Eq(x, b) }

// Ne is the package function Ne.
func (x *Value) Ne(b *Value) *Value { return Ne(x, b) }

// Lt is the package function Lt.
func (x *Value) Lt(b *Value) *Value { return Lt(x, b) }

// Le is the package function Le.
func (x *Value) Le(b *Value) *Value { return Le(x, b) }

// Gt is the package function Gt.
func (x *Value) Gt(b *Value) *Value { return Gt(x, b) }

// Ge is the package function Ge.
func (x *Value) Ge(b *Value) *Value { return Ge(x, b) }

// AddScalar is tensor.Tensor.AddScalar, recorded.
func (x *Value) AddScalar(s float64) *Value {
	return scalar("AddScalar", (*tensor.Tensor).AddScalar, x, s)
}

// SubScalar is tensor.Tensor.SubScalar, recorded.
func (x *Value) SubScalar(s float64) *Value {
	return scalar("SubScalar", (*tensor.Tensor).SubScalar, x, s)
}

// MulScalar is tensor.Tensor.MulScalar, recorded.
func (x *Value) MulScalar(s float64) *Value {
	return scalar("MulScalar", (*tensor.Tensor).MulScalar, x, s)
}

// DivScalar is tensor.Tensor.DivScalar, recorded.
func (x *Value) DivScalar(s float64) *Value {
	return scalar("DivScalar", (*tensor.Tensor).DivScalar, x, s)
}

// PowScalar is tensor.Tensor.PowScalar, recorded. As PyTorch, the
// gradient of x⁰ is 0 everywhere, x = 0 included.
func (x *Value) PowScalar(s float64) *Value {
	return scalar("PowScalar", (*tensor.Tensor).PowScalar, x, s)
}

// MaximumScalar is tensor.Tensor.MaximumScalar, recorded. Where x = s, x
// gets half the gradient, as Maximum against a tensor of s.
func (x *Value) MaximumScalar(s float64) *Value {
	return scalar("MaximumScalar", (*tensor.Tensor).MaximumScalar, x, s)
}

// MinimumScalar is tensor.Tensor.MinimumScalar, recorded. Where x = s, x
// gets half the gradient, as Minimum against a tensor of s.
func (x *Value) MinimumScalar(s float64) *Value {
	return scalar("MinimumScalar", (*tensor.Tensor).MinimumScalar, x, s)
}

// EqScalar is tensor.Tensor.EqScalar: an Int32 mask, not differentiable.
func (x *Value) EqScalar(s float64) *Value {
	return scalar("EqScalar", (*tensor.Tensor).EqScalar, x, s)
}

// NeScalar is tensor.Tensor.NeScalar: an Int32 mask, not differentiable.
func (x *Value) NeScalar(s float64) *Value {
	return scalar("NeScalar", (*tensor.Tensor).NeScalar, x, s)
}

// LtScalar is tensor.Tensor.LtScalar: an Int32 mask, not differentiable.
func (x *Value) LtScalar(s float64) *Value {
	return scalar("LtScalar", (*tensor.Tensor).LtScalar, x, s)
}

// LeScalar is tensor.Tensor.LeScalar: an Int32 mask, not differentiable.
func (x *Value) LeScalar(s float64) *Value {
	return scalar("LeScalar", (*tensor.Tensor).LeScalar, x, s)
}

// GtScalar is tensor.Tensor.GtScalar: an Int32 mask, not differentiable.
func (x *Value) GtScalar(s float64) *Value {
	return scalar("GtScalar", (*tensor.Tensor).GtScalar, x, s)
}

// GeScalar is tensor.Tensor.GeScalar: an Int32 mask, not differentiable.
func (x *Value) GeScalar(s float64) *Value {
	return scalar("GeScalar", (*tensor.Tensor).GeScalar, x, s)
}

// Where is tensor.Where (cond ≠ 0 ? a : b, broadcasting), recorded. cond
// is an Int32 mask and gets no gradient.
func Where(cond, a, b *Value) *Value {
	t := live("Where", cond, a, b)
	return record("Where", tensor.Where(t[0], t[1], t[2]), []*Value{cond, a, b}, nil)
}

// Neg is tensor.Neg, recorded.
func Neg(x *Value) *Value { return unaryOp("Neg", tensor.Neg, x) }

// Abs is tensor.Abs, recorded. Its gradient at 0 is 0, as PyTorch's.
func Abs(x *Value) *Value { return unaryOp("Abs", tensor.Abs, x) }

// Sign is tensor.Sign, recorded. Its gradient is 0 everywhere, as
// PyTorch's.
func Sign(x *Value) *Value { return unaryOp("Sign", tensor.Sign, x) }

// Reciprocal is tensor.Reciprocal, recorded.
func Reciprocal(x *Value) *Value { return unaryOp("Reciprocal", tensor.Reciprocal, x) }

// Sqrt is tensor.Sqrt, recorded.
func Sqrt(x *Value) *Value { return unaryOp("Sqrt", tensor.Sqrt, x) }

// Rsqrt is tensor.Rsqrt, recorded.
func Rsqrt(x *Value) *Value { return unaryOp("Rsqrt", tensor.Rsqrt, x) }

// Square is tensor.Square, recorded.
func Square(x *Value) *Value { return unaryOp("Square", tensor.Square, x) }

// Exp is tensor.Exp, recorded.
func Exp(x *Value) *Value { return unaryOp("Exp", tensor.Exp, x) }

// Log is tensor.Log, recorded.
func Log(x *Value) *Value { return unaryOp("Log", tensor.Log, x) }

// Log1p is tensor.Log1p, recorded.
func Log1p(x *Value) *Value { return unaryOp("Log1p", tensor.Log1p, x) }

// Sin is tensor.Sin, recorded.
func Sin(x *Value) *Value { return unaryOp("Sin", tensor.Sin, x) }

// Cos is tensor.Cos, recorded.
func Cos(x *Value) *Value { return unaryOp("Cos", tensor.Cos, x) }

// Tan is tensor.Tan, recorded.
func Tan(x *Value) *Value { return unaryOp("Tan", tensor.Tan, x) }

// Tanh is tensor.Tanh, recorded.
func Tanh(x *Value) *Value { return unaryOp("Tanh", tensor.Tanh, x) }

// Sigmoid is tensor.Sigmoid, recorded.
func Sigmoid(x *Value) *Value { return unaryOp("Sigmoid", tensor.Sigmoid, x) }

// Erf is tensor.Erf, recorded.
func Erf(x *Value) *Value { return unaryOp("Erf", tensor.Erf, x) }

// ReLU is tensor.ReLU, recorded. Its gradient at 0 is 0, as PyTorch's.
func ReLU(x *Value) *Value { return unaryOp("ReLU", tensor.ReLU, x) }

// LeakyReLU is tensor.LeakyReLU, recorded. Its gradient at 0 is alpha,
// as PyTorch's.
func LeakyReLU(x *Value, alpha float64) *Value {
	t := live("LeakyReLU", x)
	return unary("LeakyReLU", x, tensor.LeakyReLU(t[0], alpha), alpha)
}

// ELU is tensor.ELU, recorded. Its gradient at 0 is alpha, as PyTorch's.
func ELU(x *Value, alpha float64) *Value {
	t := live("ELU", x)
	return unary("ELU", x, tensor.ELU(t[0], alpha), alpha)
}

// GELU is tensor.GELU (the exact, erf form), recorded.
func GELU(x *Value) *Value { return unaryOp("GELU", tensor.GELU, x) }

// GELUTanh is tensor.GELUTanh (the tanh approximation), recorded.
func GELUTanh(x *Value) *Value { return unaryOp("GELUTanh", tensor.GELUTanh, x) }

// SiLU is tensor.SiLU, recorded.
func SiLU(x *Value) *Value { return unaryOp("SiLU", tensor.SiLU, x) }

// softplusAttrs are Softplus's parameters.
type softplusAttrs struct{ beta, threshold float64 }

// Softplus is tensor.Softplus, recorded. Where beta·x > threshold, where
// the forward pass returns x, the gradient is g, as PyTorch's.
func Softplus(x *Value, beta, threshold float64) *Value {
	t := live("Softplus", x)
	return unary("Softplus", x, tensor.Softplus(t[0], beta, threshold), softplusAttrs{beta, threshold})
}

// clampAttrs are Clamp's bounds.
type clampAttrs struct{ lo, hi float64 }

// Clamp is tensor.Clamp, recorded. The gradient passes where
// lo ≤ x ≤ hi, bounds included, as PyTorch's clamp.
func Clamp(x *Value, lo, hi float64) *Value {
	t := live("Clamp", x)
	return unary("Clamp", x, tensor.Clamp(t[0], lo, hi), clampAttrs{lo, hi})
}

// Neg is the package function Neg.
func (x *Value) Neg() *Value { return Neg(x) }

// Abs is the package function Abs.
func (x *Value) Abs() *Value { return Abs(x) }

// Sign is the package function Sign.
func (x *Value) Sign() *Value { return Sign(x) }

// Reciprocal is the package function Reciprocal.
func (x *Value) Reciprocal() *Value { return Reciprocal(x) }

// Sqrt is the package function Sqrt.
func (x *Value) Sqrt() *Value { return Sqrt(x) }

// Rsqrt is the package function Rsqrt.
func (x *Value) Rsqrt() *Value { return Rsqrt(x) }

// Square is the package function Square.
func (x *Value) Square() *Value { return Square(x) }

// Exp is the package function Exp.
func (x *Value) Exp() *Value { return Exp(x) }

// Log is the package function Log.
func (x *Value) Log() *Value { return Log(x) }

// Log1p is the package function Log1p.
func (x *Value) Log1p() *Value { return Log1p(x) }

// Sin is the package function Sin.
func (x *Value) Sin() *Value { return Sin(x) }

// Cos is the package function Cos.
func (x *Value) Cos() *Value { return Cos(x) }

// Tan is the package function Tan.
func (x *Value) Tan() *Value { return Tan(x) }

// Tanh is the package function Tanh.
func (x *Value) Tanh() *Value { return Tanh(x) }

// Sigmoid is the package function Sigmoid.
func (x *Value) Sigmoid() *Value { return Sigmoid(x) }

// Erf is the package function Erf.
func (x *Value) Erf() *Value { return Erf(x) }

// ReLU is the package function ReLU.
func (x *Value) ReLU() *Value { return ReLU(x) }

// LeakyReLU is the package function LeakyReLU.
func (x *Value) LeakyReLU(alpha float64) *Value { return LeakyReLU(x, alpha) }

// ELU is the package function ELU.
func (x *Value) ELU(alpha float64) *Value { return ELU(x, alpha) }

// GELU is the package function GELU.
func (x *Value) GELU() *Value { return GELU(x) }

// GELUTanh is the package function GELUTanh.
func (x *Value) GELUTanh() *Value { return GELUTanh(x) }

// SiLU is the package function SiLU.
func (x *Value) SiLU() *Value { return SiLU(x) }

// Softplus is the package function Softplus.
func (x *Value) Softplus(beta, threshold float64) *Value { return Softplus(x, beta, threshold) }

// Clamp is the package function Clamp.
func (x *Value) Clamp(lo, hi float64) *Value { return Clamp(x, lo, hi) }

// Cast is tensor.Tensor.Cast, recorded. Between floating dtypes the
// gradient is cast back to x's dtype; a cast to Int32 is not
// differentiable.
func (x *Value) Cast(dtype tensor.DType) *Value {
	t := live("Cast", x)
	op := "Cast"
	if !dtype.IsFloat() {
		op = "Cast to " + dtype.String()
	}
	return unary(op, x, t[0].Cast(dtype), nil)
}

// Contiguous is tensor.Tensor.Contiguous, recorded.
func (x *Value) Contiguous() *Value {
	t := live("Contiguous", x)
	return unary("Contiguous", x, t[0].Contiguous(), nil)
}
