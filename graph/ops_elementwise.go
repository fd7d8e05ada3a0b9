package graph

import "github.com/webtensor/webtensor/tensor"

// binary records a broadcasting op of two values.
func binary(op string, f func(a, b *tensor.Tensor) *tensor.Tensor, a, b *Value) *Value {
	live(op, a, b)
	xs, done := autocast(op, a, b)
	defer done()
	a, b = xs[0], xs[1]
	t := live(op, a, b)
	return record(op, f(t[0], t[1]), []*Value{a, b}, nil)
}

// scalar records op, a method of x's tensor taking one number; the number
// is the node's attrs.
func scalar(op string, f func(t *tensor.Tensor, s float64) *tensor.Tensor, x *Value, s float64) *Value {
	live(op, x)
	xs, done := autocast(op, x)
	defer done()
	x = xs[0]
	t := live(op, x)
	return unary(op, x, f(t[0], s), s)
}

// unaryOp records op, a tensor function of one argument.
func unaryOp(op string, f func(*tensor.Tensor) *tensor.Tensor, x *Value) *Value {
	live(op, x)
	xs, done := autocast(op, x)
	defer done()
	x = xs[0]
	t := live(op, x)
	return unary(op, x, f(t[0]), nil)
}

// Where is tensor.Where (cond ≠ 0 ? a : b, broadcasting), recorded. cond
// is an Int32 mask and gets no gradient.
func Where(cond, a, b *Value) *Value {
	live("Where", cond, a, b)
	xs, done := autocast("Where", a, b)
	defer done()
	a, b = xs[0], xs[1]
	t := live("Where", cond, a, b)
	return record("Where", tensor.Where(t[0], t[1], t[2]), []*Value{cond, a, b}, nil)
}

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

// softplusAttrs are Softplus's parameters.
type softplusAttrs struct{ beta, threshold float64 }

// Softplus is tensor.Softplus, recorded. Where beta·x > threshold, where
// the forward pass returns x, the gradient is g, as PyTorch's.
func Softplus(x *Value, beta, threshold float64) *Value {
	live("Softplus", x)
	xs, done := autocast("Softplus", x)
	defer done()
	x = xs[0]
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
