package graph

import (
	"github.com/webtensor/webtensor/tensor"
)

// The gradients of the linalg ops (ops_linalg.go), as PyTorch 1.13's
// FunctionsManual computes them for real matrices. They compute with this
// package's operations, so with CreateGraph they are differentiable again.
// The triangular solves of PyTorch's formulas are general solves here
// (Solve on a triangular matrix): the same values, a few more flops.
var linalgRules = map[string]*rule{
	"Solve":    {saves: []int{0}, saveOutput: true, vjp: vjpSolve},
	"Inv":      {saveOutput: true, vjp: vjpInv},
	"Cholesky": {saveOutput: true, vjp: vjpCholesky},
	"QR":       {saves: []int{0}, saveOutput: true, vjp: vjpQR},
	"SVD":      {saveOutput: true, vjp: vjpSVD},
	"Eigh":     {saveOutput: true, vjp: vjpEigh},
}

// mT transposes the last two axes.
func mT(x *Value) *Value { return x.Transpose(-2, -1) }

// skew is X − Xᵀ.
func skew(x *Value) *Value { return Sub(x, mT(x)) }

// triangle is a constant n×n mask of ones on and below the diagonal
// (lower; strictly below with strict), or on and above it, in like's
// dtype on like's device.
func triangle(c *ctx, like *Value, n int, lower, strict bool) *Value {
	data := make([]float32, n*n)
	for i := range n {
		for j := range n {
			in := j <= i
			if !lower {
				in = j >= i
			}
			if in && !(strict && i == j) {
				data[i*n+j] = 1
			}
		}
	}
	return c.constant(maskTensor(like, data, n))
}

// eyeConstant is a constant n×n identity in like's dtype on like's device.
func eyeConstant(c *ctx, like *Value, n int) *Value {
	data := make([]float32, n*n)
	for i := range n {
		data[i*n+i] = 1
	}
	return c.constant(maskTensor(like, data, n))
}

func maskTensor(like *Value, data []float32, n int) *tensor.Tensor {
	t := tensor.FromFloat32(like.Device(), data, n, n)
	if like.DType() == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(like.DType())
}

func lastDim(x *Value) int { s := x.Shape(); return s[len(s)-1] }

// vjpSolve: X = A⁻¹B, so gB = A⁻ᵀ·gX and gA = −gB·Xᵀ.
func vjpSolve(c *ctx, g *Value) []*Value {
	gb := Solve(mT(c.in(0)), g)
	out := []*Value{nil, gb}
	if c.needs(0) {
		out[0] = Neg(MatMul(gb, mT(c.out())))
	}
	return out
}

// vjpInv: gA = −Xᵀ·gX·Xᵀ with X = A⁻¹.
func vjpInv(c *ctx, g *Value) []*Value {
	xt := mT(c.out())
	return []*Value{Neg(MatMul(MatMul(xt, g), xt))}
}

// vjpCholesky (Murray 2016, as PyTorch): with M = tril(Lᵀ·gL) and
// Φ = (M + tril(M, −1)ᵀ)/2, gA = L⁻ᵀ·Φ·L⁻¹, a symmetric matrix.
func vjpCholesky(c *ctx, g *Value) []*Value {
	l, gl := c.out(), g
	if attrs[choleskyAttrs](c).upper {
		l, gl = mT(l), mT(g)
	}
	n := lastDim(l)
	m := Mul(MatMul(mT(l), gl), triangle(c, g, n, true, false))
	phi := Add(m, mT(Mul(m, triangle(c, g, n, true, true)))).MulScalar(0.5)
	y := Solve(mT(l), phi)                   // L⁻ᵀ·Φ
	return []*Value{mT(Solve(mT(l), mT(y)))} // (L⁻ᵀ·(L⁻ᵀΦ)ᵀ)ᵀ = L⁻ᵀΦL⁻¹
}

// vjpQR: for m ≥ n (R square), with M = gR·Rᵀ − Qᵀ·gQ and S = triu(M) +
// triu(M, 1)ᵀ, gA = (Q·S + gQ)·R⁻ᵀ. For m < n, A = [X | Y] with X square:
// X = Q·R₁ is a square QR and R₂ = Qᵀ·Y, so gY = Q·gR₂ and gX is the
// square case's gradient with gQ + Y·gR₂ᵀ for gQ (Liao et al. 2019, as
// PyTorch).
func vjpQR(c *ctx, g *Value) []*Value {
	p := attrs[packed](c)
	res, grads := p.unpack(c.out()), p.unpack(g)
	q, r, gq, gr := res[0], res[1], grads[0], grads[1]
	qs, rs := q.Shape(), r.Shape()
	m, k, n := qs[len(qs)-2], qs[len(qs)-1], rs[len(rs)-1]
	if k != min(m, n) {
		misuse("QR", "QR is not differentiable when mode is complete and m > n (got %d×%d), as in PyTorch", m, n)
	}
	if m >= n {
		return []*Value{qrSquareGrad(c, g, q, r, gq, gr)}
	}
	a := c.in(0)
	y := a.Slice(-1, m, n, 1)
	r1, gr1, gr2 := r.Slice(-1, 0, m, 1), gr.Slice(-1, 0, m, 1), gr.Slice(-1, m, n, 1)
	gx := qrSquareGrad(c, g, q, r1, Add(gq, MatMul(y, mT(gr2))), gr1)
	return []*Value{Concat(-1, gx, MatMul(q, gr2))}
}

// qrSquareGrad is the gradient of a QR with a square R (m ≥ n).
func qrSquareGrad(c *ctx, like, q, r, gq, gr *Value) *Value {
	n := lastDim(r)
	mm := Sub(MatMul(gr, mT(r)), MatMul(mT(q), gq))
	t := Mul(mm, triangle(c, like, n, false, false))
	s := Add(t, mT(Mul(t, triangle(c, like, n, false, true))))
	y := Add(MatMul(q, s), gq)
	return mT(Solve(r, mT(y))) // Y·R⁻ᵀ
}

// vjpSVD (PyTorch's svd_backward): with E_ij = S_j² − S_i² off the
// diagonal, gA = U·[(skew(Uᵀ·gU)·S + S·skew(Vᵀ·gV))/E + diag(gS)]·Vh,
// plus, for m > n, (I − U·Uᵀ)·gU·S⁻¹·Vh and, for m < n,
// U·S⁻¹·gVh·(I − V·Vh). Full matrices are narrowed to their first k
// vectors first, as PyTorch does.
func vjpSVD(c *ctx, g *Value) []*Value {
	p := attrs[packed](c)
	res, grads := p.unpack(c.out()), p.unpack(g)
	u, s, vh := res[0], res[1], res[2]
	gu, gs, gvh := grads[0], grads[1], grads[2]
	us, vs := u.Shape(), vh.Shape()
	m, n, k := us[len(us)-2], vs[len(vs)-1], lastDim(s)
	if lastDim(u) != k {
		u, gu = u.Slice(-1, 0, k, 1), gu.Slice(-1, 0, k, 1)
	}
	if vs[len(vs)-2] != k {
		vh, gvh = vh.Slice(-2, 0, k, 1), gvh.Slice(-2, 0, k, 1)
	}
	eye := eyeConstant(c, g, k)
	s2 := Mul(s, s)
	e := Add(Sub(s2.Unsqueeze(-2), s2.Unsqueeze(-1)), eye)
	uhgu := skew(MatMul(mT(u), gu))
	vhgv := skew(MatMul(vh, mT(gvh)))
	ga := Div(Add(Mul(uhgu, s.Unsqueeze(-2)), Mul(s.Unsqueeze(-1), vhgv)), e)
	ga = Add(ga, Mul(gs.Unsqueeze(-2), eye))
	switch {
	case m > n:
		ga = MatMul(u, ga)
		gusinv := Div(gu, s.Unsqueeze(-2))
		ga = Add(ga, Sub(gusinv, MatMul(u, MatMul(mT(u), gusinv))))
		ga = MatMul(ga, vh)
	case m < n:
		ga = MatMul(ga, vh)
		sinvgvh := Div(gvh, s.Unsqueeze(-1))
		ga = Add(ga, Sub(sinvgvh, MatMul(MatMul(sinvgvh, mT(vh)), vh)))
		ga = MatMul(u, ga)
	default:
		ga = MatMul(MatMul(u, ga), vh)
	}
	return []*Value{ga}
}

// vjpEigh (PyTorch's linalg_eig_backward for a symmetric a): with
// E_ij = w_j − w_i off the diagonal, gA = V·[skew(Vᵀ·gV)/(2E) +
// diag(gw)]·Vᵀ, a symmetric matrix.
func vjpEigh(c *ctx, g *Value) []*Value {
	p := attrs[packed](c)
	res, grads := p.unpack(c.out()), p.unpack(g)
	w, v, gw, gv := res[0], res[1], grads[0], grads[1]
	eye := eyeConstant(c, g, lastDim(w))
	e := Add(Sub(w.Unsqueeze(-2), w.Unsqueeze(-1)), eye)
	inner := Add(Div(skew(MatMul(mT(v), gv)).MulScalar(0.5), e), Mul(gw.Unsqueeze(-2), eye))
	return []*Value{MatMul(MatMul(v, inner), mT(v))}
}
