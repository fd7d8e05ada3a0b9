package graph

import (
	"math"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// The rules of the elementwise kernels of hal's op table, which rules.go
// adds under each op's name (and its Scalar form's). An op the table marks
// Differentiable has one here; TestRulesFollowTheOpTable checks both ways.
var (
	unaryRules = map[hal.UnaryOp]*rule{
		hal.Neg:        {vjp: vjpNeg},
		hal.Abs:        {saves: []int{0}, vjp: vjpAbs},
		hal.Sign:       {vjp: vjpSign},
		hal.Reciprocal: {saveOutput: true, vjp: vjpReciprocal},
		hal.Sqrt:       {saveOutput: true, vjp: vjpSqrt},
		hal.Rsqrt:      {saveOutput: true, vjp: vjpRsqrt},
		hal.Square:     {saves: []int{0}, vjp: vjpSquare},
		hal.Exp:        {saveOutput: true, vjp: vjpExp},
		hal.Log:        {saves: []int{0}, vjp: vjpLog},
		hal.Log1p:      {saves: []int{0}, vjp: vjpLog1p},
		hal.Sin:        {saves: []int{0}, vjp: vjpSin},
		hal.Cos:        {saves: []int{0}, vjp: vjpCos},
		hal.Tan:        {saveOutput: true, vjp: vjpTan},
		hal.Tanh:       {saveOutput: true, vjp: vjpTanh},
		hal.Sigmoid:    {saveOutput: true, vjp: vjpSigmoid},
		hal.Erf:        {saves: []int{0}, vjp: vjpErf},
		hal.ReLU:       {saveOutput: true, vjp: vjpReLU},
		hal.LeakyReLU:  {saves: []int{0}, vjp: vjpLeakyReLU},
		hal.ELU:        {saves: []int{0}, vjp: vjpELU},
		hal.GELU:       {saves: []int{0}, vjp: vjpGELU},
		hal.GELUTanh:   {saves: []int{0}, vjp: vjpGELUTanh},
		hal.SiLU:       {saves: []int{0}, vjp: vjpSiLU},
		hal.Softplus:   {saves: []int{0}, vjp: vjpSoftplus},
		hal.Clamp:      {saves: []int{0}, vjp: vjpClamp},
		hal.Expm1:      {saveOutput: true, vjp: vjpExpm1},
	}
	binaryRules = map[hal.BinaryOp]*rule{
		hal.Add:      {vjp: vjpAdd},
		hal.Sub:      {vjp: vjpSub},
		hal.Mul:      {saves: []int{0, 1}, vjp: vjpMul},
		hal.Div:      {saves: []int{0, 1}, vjp: vjpDiv},
		hal.Pow:      {saves: []int{0, 1}, saveOutput: true, vjp: vjpPow},
		hal.Maximum:  {saves: []int{0, 1}, vjp: vjpMaximum},
		hal.Minimum:  {saves: []int{0, 1}, vjp: vjpMinimum},
		hal.ReLUGrad: {saves: []int{1}, vjp: vjpReLUGrad},
	}
	// scalarRules are the rules of the Scalar forms (AddScalar …).
	scalarRules = map[hal.BinaryOp]*rule{
		hal.Add:      {vjp: vjpAddScalar},
		hal.Sub:      {vjp: vjpSubScalar},
		hal.Mul:      {vjp: vjpMulScalar},
		hal.Div:      {vjp: vjpDivScalar},
		hal.Pow:      {saves: []int{0}, vjp: vjpPowScalar},
		hal.Maximum:  {saves: []int{0}, vjp: vjpMaximumScalar},
		hal.Minimum:  {saves: []int{0}, vjp: vjpMinimumScalar},
		hal.ReLUGrad: {vjp: vjpReLUGradScalar},
	}
)

// scalarLike is v as a rank-0 constant of like's dtype and device, for
// Where and the binary ops to broadcast.
func scalarLike(c *ctx, like *Value, v float64) *Value {
	return c.constant(tensor.Full(like.t.Device(), like.t.DType(), v))
}

// zerosFor is the gradient of input i of an op whose derivative is 0
// everywhere: a constant, so that its own gradient is 0 too.
func zerosFor(c *ctx, g *Value, i int) *Value {
	return c.constant(tensor.Full(g.t.Device(), c.dtype(i), 0, c.shape(i)...))
}

// maskAs casts an Int32 mask to dtype, as 0 and 1.
func maskAs(m *Value, dtype tensor.DType) *Value { return m.Cast(dtype) }

func vjpAdd(c *ctx, g *Value) []*Value {
	return grads(c.sumTo(g, 0), c.sumTo(g, 1))
}

func vjpSub(c *ctx, g *Value) []*Value {
	var gb *Value
	if c.needs(1) {
		gb = c.sumTo(Neg(g), 1)
	}
	return grads(c.sumTo(g, 0), gb)
}

func vjpMul(c *ctx, g *Value) []*Value {
	var ga, gb *Value
	if c.needs(0) {
		ga = c.sumTo(Mul(g, c.in(1)), 0)
	}
	if c.needs(1) {
		gb = c.sumTo(Mul(g, c.in(0)), 1)
	}
	return grads(ga, gb)
}

func vjpDiv(c *ctx, g *Value) []*Value {
	a, b := c.in(0), c.in(1)
	q := Div(g, b)
	var ga, gb *Value
	if c.needs(0) {
		ga = c.sumTo(q, 0)
	}
	if c.needs(1) {
		gb = c.sumTo(Neg(Mul(q, Div(a, b))), 1)
	}
	return grads(ga, gb)
}

// vjpPow follows PyTorch's masks: 0 for a where b = 0 (not 0·a⁻¹, NaN at
// a = 0), and 0 for b where a = 0 and b ≥ 0 (not 0·log 0). For b the
// masked base is replaced by 1 before the log rather than the product
// masked afterwards, so that the second derivative is 0 there instead of
// NaN; the first derivative is PyTorch's.
func vjpPow(c *ctx, g *Value) []*Value {
	a, b := c.in(0), c.in(1)
	var ga, gb *Value
	if c.needs(0) {
		d := Mul(g, Mul(b, Pow(a, b.SubScalar(1))))
		ga = c.sumTo(Where(b.EqScalar(0), scalarLike(c, g, 0), d), 0)
	}
	if c.needs(1) {
		zeroBase := Mul(a.EqScalar(0), b.GeScalar(0))
		safe := Where(zeroBase, scalarLike(c, g, 1), a)
		gb = c.sumTo(Mul(g, Mul(c.out(), Log(safe))), 1)
	}
	return grads(ga, gb)
}

// tieShare is the weight of an operand of Maximum or Minimum: 0 where it
// loses, ½ at a tie, 1 elsewhere (where it wins, and where either is NaN,
// as PyTorch, which masks only losers and ties).
func tieShare(loses, tie *Value, dtype tensor.DType) *Value {
	return Neg(Add(maskAs(loses, dtype), maskAs(tie, dtype).MulScalar(0.5))).AddScalar(1)
}

// vjpMaxMin is Maximum's and Minimum's rule; aLoses tells where a is
// not selected.
func vjpMaxMin(c *ctx, g *Value, aLoses, bLoses func(a, b *Value) *Value) []*Value {
	a, b := c.in(0), c.in(1)
	dt := c.dtype(0)
	tie := Eq(a, b)
	var ga, gb *Value
	if c.needs(0) {
		ga = c.sumTo(Mul(g, tieShare(aLoses(a, b), tie, dt)), 0)
	}
	if c.needs(1) {
		gb = c.sumTo(Mul(g, tieShare(bLoses(a, b), tie, dt)), 1)
	}
	return grads(ga, gb)
}

func vjpMaximum(c *ctx, g *Value) []*Value { return vjpMaxMin(c, g, Lt, Gt) }

func vjpMinimum(c *ctx, g *Value) []*Value { return vjpMaxMin(c, g, Gt, Lt) }

func vjpAddScalar(c *ctx, g *Value) []*Value { return grads(g) }

func vjpSubScalar(c *ctx, g *Value) []*Value { return grads(g) }

func vjpMulScalar(c *ctx, g *Value) []*Value { return grads(g.MulScalar(attrs[float64](c))) }

func vjpDivScalar(c *ctx, g *Value) []*Value { return grads(g.DivScalar(attrs[float64](c))) }

// vjpPowScalar gives x⁰ a zero gradient, as PyTorch (not 0·x⁻¹, NaN at 0).
func vjpPowScalar(c *ctx, g *Value) []*Value {
	s := attrs[float64](c)
	if s == 0 {
		return grads(zerosFor(c, g, 0))
	}
	return grads(Mul(g, c.in(0).PowScalar(s-1).MulScalar(s)))
}

func vjpMaximumScalar(c *ctx, g *Value) []*Value {
	x, s := c.in(0), attrs[float64](c)
	return grads(Mul(g, tieShare(x.LtScalar(s), x.EqScalar(s), c.dtype(0))))
}

func vjpMinimumScalar(c *ctx, g *Value) []*Value {
	x, s := c.in(0), attrs[float64](c)
	return grads(Mul(g, tieShare(x.GtScalar(s), x.EqScalar(s), c.dtype(0))))
}

func vjpWhere(c *ctx, g *Value) []*Value {
	cond, zero := c.in(0), scalarLike(c, g, 0)
	var ga, gb *Value
	if c.needs(1) {
		ga = c.sumTo(Where(cond, g, zero), 1)
	}
	if c.needs(2) {
		gb = c.sumTo(Where(cond, zero, g), 2)
	}
	return grads(nil, ga, gb)
}

func vjpNeg(c *ctx, g *Value) []*Value { return grads(Neg(g)) }

// vjpAbs uses sign(x), 0 at 0, as PyTorch.
func vjpAbs(c *ctx, g *Value) []*Value { return grads(Mul(g, Sign(c.in(0)))) }

func vjpSign(c *ctx, g *Value) []*Value { return grads(zerosFor(c, g, 0)) }

func vjpReciprocal(c *ctx, g *Value) []*Value {
	return grads(Neg(Mul(g, Square(c.out()))))
}

func vjpSqrt(c *ctx, g *Value) []*Value { return grads(Div(g, c.out().MulScalar(2))) }

func vjpRsqrt(c *ctx, g *Value) []*Value {
	y := c.out()
	return grads(Mul(g, Mul(Square(y), y)).MulScalar(-0.5))
}

func vjpSquare(c *ctx, g *Value) []*Value { return grads(Mul(g, c.in(0)).MulScalar(2)) }

func vjpExp(c *ctx, g *Value) []*Value { return grads(Mul(g, c.out())) }

// vjpExpm1 is eˣ = y + 1, as PyTorch's expm1 backward.
func vjpExpm1(c *ctx, g *Value) []*Value { return grads(Mul(g, c.out().AddScalar(1))) }

func vjpLog(c *ctx, g *Value) []*Value { return grads(Div(g, c.in(0))) }

func vjpLog1p(c *ctx, g *Value) []*Value { return grads(Div(g, c.in(0).AddScalar(1))) }

func vjpSin(c *ctx, g *Value) []*Value { return grads(Mul(g, Cos(c.in(0)))) }

func vjpCos(c *ctx, g *Value) []*Value { return grads(Neg(Mul(g, Sin(c.in(0))))) }

func vjpTan(c *ctx, g *Value) []*Value { return grads(Mul(g, Square(c.out()).AddScalar(1))) }

func vjpTanh(c *ctx, g *Value) []*Value {
	return grads(Mul(g, Neg(Square(c.out())).AddScalar(1)))
}

func vjpSigmoid(c *ctx, g *Value) []*Value {
	y := c.out()
	return grads(Mul(g, Mul(y, Neg(y).AddScalar(1))))
}

func vjpErf(c *ctx, g *Value) []*Value {
	return grads(Mul(g, Exp(Neg(Square(c.in(0)))).MulScalar(2/math.SqrtPi)))
}

// vjpReLU masks with y ≤ 0, as PyTorch's threshold_backward: 0 at 0, in
// one fused kernel.
func vjpReLU(c *ctx, g *Value) []*Value { return grads(ReLUGrad(g, c.out())) }

// vjpReLUGrad: ReLUGrad is linear in a, masked by b, and constant in b
// where it is differentiable (everywhere but b = 0).
func vjpReLUGrad(c *ctx, g *Value) []*Value {
	var ga, gb *Value
	if c.needs(0) {
		ga = c.sumTo(ReLUGrad(g, c.in(1)), 0)
	}
	if c.needs(1) {
		gb = zerosFor(c, g, 1)
	}
	return grads(ga, gb)
}

// vjpReLUGradScalar: the mask is the scalar's, the same for every element.
func vjpReLUGradScalar(c *ctx, g *Value) []*Value {
	return grads(g.ReLUGradScalar(attrs[float64](c)))
}

// vjpLeakyReLU gives alpha·g at 0, as PyTorch.
func vjpLeakyReLU(c *ctx, g *Value) []*Value {
	alpha := attrs[float64](c)
	return grads(Where(c.in(0).GtScalar(0), g, g.MulScalar(alpha)))
}

// vjpELU gives alpha·g at 0, as PyTorch (α·eˣ, its derivative for x ≤ 0).
func vjpELU(c *ctx, g *Value) []*Value {
	x, alpha := c.in(0), attrs[float64](c)
	return grads(Where(x.LeScalar(0), Mul(g, Exp(x).MulScalar(alpha)), g))
}

// vjpGELU is Φ(x) + x·φ(x).
func vjpGELU(c *ctx, g *Value) []*Value {
	x := c.in(0)
	cdf := Erf(x.MulScalar(math.Sqrt2 / 2)).AddScalar(1).MulScalar(0.5)
	pdf := Exp(Square(x).MulScalar(-0.5)).MulScalar(1 / math.Sqrt(2*math.Pi))
	return grads(Mul(g, Add(cdf, Mul(x, pdf))))
}

// vjpGELUTanh differentiates ½x(1 + tanh(β(x + κx³))) as PyTorch writes it.
func vjpGELUTanh(c *ctx, g *Value) []*Value {
	const kappa = 0.044715
	beta := math.Sqrt(2 / math.Pi)
	x := c.in(0)
	x2 := Square(x)
	th := Tanh(Mul(x, x2.MulScalar(kappa).AddScalar(1)).MulScalar(beta))
	left := th.AddScalar(1).MulScalar(0.5)
	right := Mul(Mul(x.MulScalar(0.5), Neg(Square(th)).AddScalar(1)), x2.MulScalar(3*kappa*beta).AddScalar(beta))
	return grads(Mul(g, Add(left, right)))
}

// vjpSiLU is σ(x)(1 + x(1 − σ(x))).
func vjpSiLU(c *ctx, g *Value) []*Value {
	x := c.in(0)
	s := Sigmoid(x)
	return grads(Mul(g, Mul(s, Mul(x, Neg(s).AddScalar(1)).AddScalar(1))))
}

// vjpSoftplus passes g where βx > threshold (the forward pass returns x
// there), as PyTorch; elsewhere it is σ(βx).
func vjpSoftplus(c *ctx, g *Value) []*Value {
	a := attrs[softplusAttrs](c)
	bx := c.in(0).MulScalar(a.beta)
	return grads(Where(bx.GtScalar(a.threshold), g, Mul(g, Sigmoid(bx))))
}

// vjpClamp passes g where lo ≤ x ≤ hi, bounds included, as PyTorch.
func vjpClamp(c *ctx, g *Value) []*Value {
	x, a := c.in(0), attrs[clampAttrs](c)
	inside := Mul(x.GeScalar(a.lo), x.LeScalar(a.hi))
	return grads(Where(inside, g, scalarLike(c, g, 0)))
}

func vjpCast(c *ctx, g *Value) []*Value { return grads(g.Cast(c.dtype(0))) }

func vjpContiguous(c *ctx, g *Value) []*Value { return grads(g) }
