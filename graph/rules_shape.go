package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// vjpSum broadcasts g back over the reduced axes.
func vjpSum(c *ctx, g *Value) []*Value {
	return grads(keptGrad(c, g).Expand(c.shape(0)...))
}

// keptGrad is a reduction's g with the reduced axes kept as size 1, so
// that it broadcasts against the input.
func keptGrad(c *ctx, g *Value) *Value {
	a := attrs[sumAttrs](c)
	if a.keepDim {
		return g
	}
	return g.Reshape(keptShape(c.shape(0), a.dims)...)
}

// keptShape is shape with the reduced dims kept as size 1 (every axis for
// no dims), the shape keepDim gives.
func keptShape(shape, dims []int) []int {
	out := slices.Clone(shape)
	if len(dims) == 0 || len(shape) == 0 {
		// A scalar reduces nothing, whatever dim (0 or −1) it was given.
		for i := range out {
			out[i] = 1
		}
		return out
	}
	for _, d := range dims {
		if d < 0 {
			d += len(shape)
		}
		out[d] = 1
	}
	return out
}

func vjpReshape(c *ctx, g *Value) []*Value {
	return grads(g.Reshape(c.shape(0)...))
}

func vjpExpand(c *ctx, g *Value) []*Value { return grads(c.sumTo(g, 0)) }

// fill is a constant of value with input i's dtype on g's device: a scalar
// without shape (it broadcasts), else of that shape.
func fill(c *ctx, g *Value, i int, value float64, shape ...int) *Value {
	return c.constant(tensor.Full(g.Device(), c.dtype(i), value, shape...))
}

// vjpProd multiplies g by the product of the slice's other elements. With
// no zero in the slice that is the product over the element; with zeros
// it cannot be, so the masks pick: one zero, the product of the nonzero
// elements at the zero and 0 elsewhere; more, 0. Those zeros are written
// as products with the zero elements themselves (whose sum s is 0 in
// value), so that the gradient's own derivative is right too.
func vjpProd(c *ctx, g *Value) []*Value {
	a := attrs[sumAttrs](c)
	x := c.in(0)
	g = keptGrad(c, g)
	zero, one := fill(c, g, 0, 0), fill(c, g, 0, 1)
	isZero := x.EqScalar(0)
	count := isZero.Sum(a.dims, true)
	nonzero := Where(isZero, one, x)
	p := nonzero.Prod(a.dims, true) // the product of the nonzero elements
	s := Where(isZero, x, zero).Sum(a.dims, true)
	noZero := Div(p, nonzero)
	oneZero := Where(isZero, p, Mul(s, noZero))
	twoZeros := Where(isZero, Mul(Sub(s, x), p), zero)
	others := Where(count.EqScalar(0), noZero,
		Where(count.EqScalar(1), oneZero,
			Where(count.EqScalar(2), twoZeros, zero)))
	return grads(Mul(g, others))
}

// vjpExtremum (Max, Min) splits g evenly among the elements equal to the
// result, as torch.amax and amin do.
func vjpExtremum(c *ctx, g *Value) []*Value {
	a := attrs[sumAttrs](c)
	x, y := c.in(0), c.out()
	g = keptGrad(c, g)
	if !a.keepDim {
		y = y.Reshape(keptShape(c.shape(0), a.dims)...)
	}
	mask := Eq(x, y).Cast(c.dtype(0))
	count := mask.Sum(a.dims, true)
	return grads(Mul(Div(g, count), mask))
}

// vjpLogSumExp is g·exp(x − y), the softmax of the slice times g.
func vjpLogSumExp(c *ctx, g *Value) []*Value {
	a := attrs[sumAttrs](c)
	x, y := c.in(0), c.out()
	g = keptGrad(c, g)
	if !a.keepDim {
		y = y.Reshape(keptShape(c.shape(0), a.dims)...)
	}
	return grads(Mul(g, Sub(x, y).Exp()))
}

// vjpGemm differentiates alpha·op(a)·op(b) + beta·c (and MatMul, its
// two-input case): g·op(b)ᵀ and op(a)ᵀ·g, each scaled by alpha, written as
// Gemms whose transposes put them in a's and b's own layout, then summed
// over broadcast batch axes.
func vjpGemm(c *ctx, g *Value) []*Value {
	at := attrs[gemmAttrs](c)
	out := make([]*Value, len(c.n.inputs))
	if c.needs(0) {
		b := c.in(1)
		var ga *Value
		if at.transA {
			ga = Gemm(at.alpha, b, at.transB, g, true, 0, nil)
		} else {
			ga = Gemm(at.alpha, g, false, b, !at.transB, 0, nil)
		}
		out[0] = c.sumTo(ga, 0)
	}
	if c.needs(1) {
		a := c.in(0)
		var gb *Value
		if at.transB {
			gb = Gemm(at.alpha, g, true, a, at.transA, 0, nil)
		} else {
			gb = Gemm(at.alpha, a, !at.transA, g, false, 0, nil)
		}
		out[1] = c.sumTo(gb, 1)
	}
	if len(out) > 2 && c.needs(2) {
		gc := g
		if at.beta != 1 {
			gc = g.MulScalar(at.beta)
		}
		out[2] = c.sumTo(gc, 2)
	}
	return out
}

// vjpSlice puts g back at the sliced positions of zeros of the input's
// shape: a step s spreads g's elements s apart first (a pad of s − 1 zeros
// after each along a new axis, merged), then a pad places the result at
// start (cropping what runs past the end).
func vjpSlice(c *ctx, g *Value) []*Value {
	at := attrs[sliceAttrs](c)
	shape := c.shape(0)
	r, a := len(shape), at.axis
	span := at.length
	if at.step > 1 && at.length > 0 {
		spread := g.Unsqueeze(a+1).Pad(axisPads(r+1, a+1, 0, at.step-1), tensor.PadConstant, 0)
		merged := spread.Shape()
		merged[a] *= at.step
		merged = slices.Delete(merged, a+1, a+2)
		g = spread.Reshape(merged...)
		span = at.length * at.step
	}
	return grads(g.Pad(axisPads(r, a, at.start, shape[a]-at.start-span), tensor.PadConstant, 0))
}

// axisPads is Pad's list padding axis a of a rank-r tensor.
func axisPads(r, a, before, after int) []int {
	pads := make([]int, 2*(r-a))
	pads[2*(r-1-a)], pads[2*(r-1-a)+1] = before, after
	return pads
}

// vjpPermute permutes g back with the inverse permutation.
func vjpPermute(c *ctx, g *Value) []*Value {
	perm := attrs[permuteAttrs](c).perm
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return grads(g.Permute(inv...))
}

// vjpConcat hands each input its slice of g.
func vjpConcat(c *ctx, g *Value) []*Value {
	at := attrs[concatAttrs](c)
	out := make([]*Value, len(at.sizes))
	at0 := 0
	for i, n := range at.sizes {
		if c.needs(i) {
			out[i] = g.Slice(at.axis, at0, at0+n, 1)
		}
		at0 += n
	}
	return out
}

// vjpPad undoes a constant pad with the opposite pad: it crops the border
// and puts zeros where the pad cropped.
func vjpPad(c *ctx, g *Value) []*Value {
	pads := slices.Clone(attrs[padAttrs](c).pads)
	for i := range pads {
		pads[i] = -pads[i]
	}
	return grads(g.Pad(pads, tensor.PadConstant, 0))
}

// vjpGather adds g into zeros at the gathered positions.
func vjpGather(c *ctx, g *Value) []*Value {
	a := attrs[int](c)
	zeros := fill(c, g, 0, 0, c.shape(0)...)
	return grads(zeros.ScatterAdd(a, c.in(1), g), nil)
}

// vjpIndexSelect is Gather's rule with the index vector spread over the
// other axes (stride 0, not copied).
func vjpIndexSelect(c *ctx, g *Value) []*Value {
	a := attrs[int](c)
	gs := g.Shape()
	at := make([]int, len(gs))
	for i := range at {
		at[i] = 1
	}
	at[a] = gs[a]
	index := c.in(1).Reshape(at...).Expand(gs...)
	zeros := fill(c, g, 0, 0, c.shape(0)...)
	return grads(zeros.ScatterAdd(a, index, g), nil)
}

// vjpScatterAdd passes g to the base and gathers src's share at index;
// src elements outside index's extent were not added and get zeros.
func vjpScatterAdd(c *ctx, g *Value) []*Value {
	a := attrs[int](c)
	var gsrc *Value
	if c.needs(2) {
		index := c.in(1)
		gsrc = g.Gather(a, index)
		is, ss := index.Shape(), c.shape(2)
		if !slices.Equal(is, ss) {
			pads := make([]int, 0, 2*len(ss))
			for i := len(ss) - 1; i >= 0; i-- {
				pads = append(pads, 0, ss[i]-is[i])
			}
			gsrc = gsrc.Pad(pads, tensor.PadConstant, 0)
		}
	}
	return grads(g, nil, gsrc)
}
