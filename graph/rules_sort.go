package graph

import (
	"math"

	"github.com/webtensor/webtensor/tensor"
)

// sortRules are the rules of ops_sort.go, which rules.go adds to the
// table.
var sortRules = map[string]*rule{
	"Sort":         {vjp: vjpSelectAlong},
	"TopK":         {vjp: vjpSelectAlong},
	"KthValue":     {vjp: vjpSelectAlong},
	"Cumsum":       {vjp: vjpCumsum},
	"Cumprod":      {saves: []int{0}, saveOutput: true, vjp: vjpCumprod},
	"LogCumSumExp": {saves: []int{0}, saveOutput: true, vjp: vjpLogCumSumExp},
	// Argsort is absent: not differentiable.
}

// vjpSelectAlong scatters g back to the positions the selected values
// came from (the saved indices) in zeros of the input's shape. The
// indices are distinct along the axis, so nothing adds up.
func vjpSelectAlong(c *ctx, g *Value) []*Value {
	a := attrs[selectAttrs](c)
	shape := c.shape(0)
	if len(shape) == 0 {
		return grads(g) // a scalar selects itself
	}
	idx := c.extra(0)
	if !a.keepDim {
		g, idx = g.Unsqueeze(a.axis), idx.Unsqueeze(a.axis)
	}
	zeros := fill(c, g, 0, 0, shape...)
	return grads(zeros.ScatterAdd(a.axis, idx, g))
}

// reverseAlong is v with the order along axis a reversed (an IndexSelect
// of n−1 … 0, which is differentiable again).
func reverseAlong(c *ctx, v *Value, a int) *Value {
	n := v.Shape()[a]
	idx := c.constant(tensor.Arange(v.Device(), tensor.Int32, float64(n-1), -1, -1))
	return v.IndexSelect(a, idx)
}

// reverseCumsum is Σ_{j ≥ i} v_j along axis a.
func reverseCumsum(c *ctx, v *Value, a int) *Value {
	return reverseAlong(c, reverseAlong(c, v, a).Cumsum(a), a)
}

// vjpCumsum: output j sums inputs 0 … j, so input i gets Σ_{j ≥ i} g_j.
func vjpCumsum(c *ctx, g *Value) []*Value {
	if len(c.shape(0)) == 0 {
		return grads(g)
	}
	return grads(reverseCumsum(c, g, attrs[int](c)))
}

// vjpCumprod is torch's cumprod_backward. With k a row's first zero (n
// when it has none), ∂y_j/∂x_i = Π_{m ≤ j, m ≠ i} x_m is y_j/x_i for
// i < k, the product that skips x_k for i = k (y′ below: the cumprod of x
// with x_k set to 1), and 0 for i > k (a zero other than x_i is in every
// such product).
func vjpCumprod(c *ctx, g *Value) []*Value {
	if len(c.shape(0)) == 0 {
		return grads(g)
	}
	a := attrs[int](c)
	x, y := c.in(0), c.out()
	zero, one := fill(c, g, 0, 0), fill(c, g, 0, 1)
	isZero := x.EqScalar(0)
	zerosSoFar := isZero.Cumsum(a)
	before := zerosSoFar.EqScalar(0)
	first := Mul(isZero, zerosSoFar.EqScalar(1))
	atBefore := Div(reverseCumsum(c, Mul(g, y), a), Where(before, x, one))
	skipping := Where(first, one, x).Cumprod(a)
	atFirst := reverseCumsum(c, Mul(g, skipping), a)
	return grads(Where(before, atBefore, Where(first, atFirst, zero)))
}

// lowest is the most negative finite value of dtype, the ln of a zero
// weight in vjpLogCumSumExp (−Inf would make −Inf − (−Inf) there).
func lowest(dtype tensor.DType) float64 {
	switch dtype {
	case tensor.Float64:
		return -math.MaxFloat64
	case tensor.Float16:
		return -65504
	}
	return -math.MaxFloat32
}

// vjpLogCumSumExp is torch's logcumsumexp_backward: input i gets
// Σ_{j ≥ i} g_j·e^(x_i − y_j), split by the sign of g_j into two sums of
// positive terms, each e^(x_i + ln Σ_{j ≥ i} e^(ln|g_j| − y_j)): a reversed
// logcumsumexp, which does not overflow where e^(−y_j) would.
func vjpLogCumSumExp(c *ctx, g *Value) []*Value {
	if len(c.shape(0)) == 0 {
		return grads(g)
	}
	a := attrs[int](c)
	x, y := c.in(0), c.out()
	low := fill(c, g, 0, lowest(c.dtype(0)))
	logAbs := g.Abs().Log()
	part := func(mask *Value) *Value {
		w := Sub(Where(mask, logAbs, low), y)
		return Add(reverseAlong(c, reverseAlong(c, w, a).LogCumSumExp(a), a), x).Exp()
	}
	return grads(Sub(part(g.GtScalar(0)), part(g.LtScalar(0))))
}
