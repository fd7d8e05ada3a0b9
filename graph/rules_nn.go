package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// softmaxDims is the reduction of a softmax rule: its axis, or every axis
// (nil) for a scalar.
func softmaxDims(c *ctx) []int {
	if a := attrs[axisAttrs](c); a.axis >= 0 {
		return []int{a.axis}
	}
	return nil
}

// vjpSoftmax: dx = y·(g − Σ g·y).
func vjpSoftmax(c *ctx, g *Value) []*Value {
	y := c.out()
	gy := Mul(g, y)
	return grads(Sub(gy, Mul(y, gy.Sum(softmaxDims(c), true))))
}

// vjpLogSoftmax: dx = g − exp(y)·Σ g.
func vjpLogSoftmax(c *ctx, g *Value) []*Value {
	return grads(Sub(g, Mul(Exp(c.out()), g.Sum(softmaxDims(c), true))))
}

// batch4 views an unbatched image [C, H, W] as a batch of one.
func batch4(v *Value) *Value {
	if v.Rank() == 3 {
		return v.Reshape(append([]int{1}, v.Shape()...)...)
	}
	return v
}

// fitTo slices the trailing two axes of v down to h×w: the adjoint
// convolutions can produce a few rows and columns more, the ones the
// forward's floor division dropped.
func fitTo(v *Value, h, w int) *Value {
	s := v.Shape()
	if s[len(s)-2] > h {
		v = v.Slice(len(s)-2, 0, h, 1)
	}
	if s[len(s)-1] > w {
		v = v.Slice(len(s)-1, 0, w, 1)
	}
	return v
}

// vjpConv2d: the input's gradient is the transposed convolution of g by
// the weight (the adjoint, with the output padding that restores the
// input's size); the weight's is the convolution of the input by g with
// stride and dilation swapped, batch and channels exchanged so that one
// grouped convolution sums over the batch.
func vjpConv2d(c *ctx, g *Value) []*Value {
	a := attrs[convAttrs](c)
	xs, ws := c.shape(0), c.shape(1)
	g4 := batch4(g)
	gs := g4.Shape()
	h, w := xs[len(xs)-2], xs[len(xs)-1]
	var gx, gw, gb *Value
	if c.needs(0) {
		var op [2]int
		for i, in := range [2]int{h, w} {
			op[i] = in - ((gs[2+i]-1)*a.Stride[i] - 2*a.Padding[i] + a.Dilation[i]*(ws[2+i]-1) + 1)
		}
		gx = ConvTranspose2d(g4, c.in(1), nil, tensor.ConvTransposeOptions{
			Stride: a.Stride, Padding: a.Padding, OutputPadding: op, Dilation: a.Dilation, Groups: a.Groups})
		if len(xs) == 3 {
			gx = gx.Reshape(xs...)
		}
	}
	if c.needs(1) {
		gw = correlateOverBatch(batch4(c.in(0)), g4, a, ws[2], ws[3])
	}
	if c.needs(2) {
		gb = g4.Sum([]int{0, 2, 3}, false)
	}
	return grads(gx, gw, gb)
}

// vjpConvTranspose2d: the input's gradient is the convolution of g by the
// weight (ConvTranspose2d is its adjoint), the weight's the convolution of
// g by the input, with stride and dilation swapped as for Conv2d.
func vjpConvTranspose2d(c *ctx, g *Value) []*Value {
	a := attrs[convAttrs](c)
	xs, ws := c.shape(0), c.shape(1)
	g4 := batch4(g)
	h, w := xs[len(xs)-2], xs[len(xs)-1]
	var gx, gw, gb *Value
	if c.needs(0) {
		gx = Conv2d(g4, c.in(1), nil, tensor.ConvOptions{
			Stride: a.Stride, Padding: a.Padding, Dilation: a.Dilation, Groups: a.Groups})
		gx = fitTo(gx, h, w)
		if len(xs) == 3 {
			gx = gx.Reshape(xs...)
		}
	}
	if c.needs(1) {
		gw = correlateOverBatch(g4, batch4(c.in(0)), a, ws[2], ws[3])
	}
	if c.needs(2) {
		gb = g4.Sum([]int{0, 2, 3}, false)
	}
	return grads(gx, gw, gb)
}

// correlateOverBatch is a convolution's weight gradient: the correlation
// of src [N, A, H, W] (the input; for a transposed convolution, g) with
// filter [N, B, OH, OW] (g; the input), summed over the batch, as
// [B, A/G, KH, KW]. It is one grouped convolution with batch and channels
// exchanged and stride and dilation swapped; src viewed as [A/G, G·N, H, W]
// puts group gi's channels over the batch in input channel block gi.
// Its output is small and its K (N·OH·OW) long: a backend spreads that K
// over the device (WebGPU's Conv2D in slices side by side, summed after).
func correlateOverBatch(src, filter *Value, a convAttrs, kh, kw int) *Value {
	s := src.Shape()
	n, groups := s[0], a.Groups
	sv := src.Reshape(n, groups, s[1]/groups, s[2], s[3]).Permute(2, 1, 0, 3, 4).Reshape(s[1]/groups, groups*n, s[2], s[3])
	fv := filter.Permute(1, 0, 2, 3)
	r := Conv2d(sv, fv, nil, tensor.ConvOptions{Stride: a.Dilation, Padding: a.Padding, Dilation: a.Stride, Groups: groups})
	return fitTo(r.Permute(1, 0, 2, 3), kh, kw)
}

// vjpMaxPool2d adds each window's gradient at its maximum's position in
// the plane.
func vjpMaxPool2d(c *ctx, g *Value) []*Value {
	xs, gs := c.shape(0), g.Shape()
	r := len(gs)
	lead := slices.Clone(gs[:r-2])
	flat := func(n int) []int { return append(slices.Clone(lead), n) }
	gf := g.Reshape(flat(gs[r-2] * gs[r-1])...)
	idx := c.extra(0).Reshape(flat(gs[r-2] * gs[r-1])...)
	// One zero broadcast over the planes: ScatterAdd's copy of it is the
	// only pass that writes the zeros (a dense Full would be filled, then
	// copied).
	zero := tensor.Full(g.Device(), c.dtype(0), 0)
	defer zero.Release()
	zeros := c.constant(zero.Expand(flat(xs[r-2] * xs[r-1])...))
	return grads(zeros.ScatterAdd(r-2, idx, gf).Reshape(xs...))
}

// vjpAvgPool2d: the pooling is y = A_h·x·A_wᵀ per plane, so
// dx = A_hᵀ·g·A_w, two batched products with the host-built matrices.
func vjpAvgPool2d(c *ctx, g *Value) []*Value {
	a := attrs[poolAttrs](c)
	ahT := c.constant(hostTensor(g.Device(), c.dtype(0), a.ahT, a.h, a.oh))
	aw := c.constant(hostTensor(g.Device(), c.dtype(0), a.aw, a.ow, a.w))
	return grads(MatMul(MatMul(ahT, g), aw))
}

// hostTensor makes a tensor of dtype from host data, a write only.
func hostTensor(dev *tensor.Device, dtype tensor.DType, data []float64, shape ...int) *tensor.Tensor {
	if dtype == tensor.Float64 {
		return tensor.FromFloat64(dev, data, shape...)
	}
	f := make([]float32, len(data))
	for i, v := range data {
		f[i] = float32(v)
	}
	t := tensor.FromFloat32(dev, f, shape...)
	if dtype == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(dtype)
}

// normStats recomputes a normalization's x̂ = (x − mean)·invstd and
// invstd from x with recorded operations, so that the gradient is itself
// differentiable through the statistics.
func normStats(x *Value, a normAttrs) (xhat, invstd *Value) {
	xc := Sub(x, x.Mean(a.reduced, true))
	invstd = Rsqrt(Square(xc).Mean(a.reduced, true).AddScalar(a.eps))
	return Mul(xc, invstd), invstd
}

// normInputGrad is the gradient through normalization by batch
// statistics: dx = (invstd/M)·(M·ĝ − Σĝ − x̂·Σ ĝ·x̂), with ĝ the gradient
// of x̂ and M the number of values each statistic covers.
func normInputGrad(gh, xhat, invstd *Value, a normAttrs) *Value {
	m := float64(a.count)
	sg := gh.Sum(a.reduced, true)
	sgx := Mul(gh, xhat).Sum(a.reduced, true)
	inner := Sub(Sub(gh.MulScalar(m), sg), Mul(xhat, sgx))
	return Mul(invstd.MulScalar(1/m), inner)
}

func vjpBatchNorm(c *ctx, g *Value) []*Value {
	a := attrs[normAttrs](c)
	ch := c.shape(0)[1]
	var w *Value
	if c.shape(1) != nil {
		w = c.in(1).Reshape(a.statShape...)
	}
	var gx, gw, gb *Value
	if a.training {
		xhat, invstd := normStats(c.in(0), a)
		if c.needs(0) {
			gh := g
			if w != nil {
				gh = Mul(g, w)
			}
			gx = normInputGrad(gh, xhat, invstd, a)
		}
		if c.needs(1) {
			gw = Mul(g, xhat).Sum(a.reduced, false).Reshape(ch)
		}
	} else {
		mean, invstd := c.extra(0), c.extra(1)
		if c.needs(0) {
			scale := invstd
			if w != nil {
				scale = Mul(invstd, w)
			}
			gx = Mul(g, scale)
		}
		if c.needs(1) {
			xhat := Mul(Sub(c.in(0), mean), invstd)
			gw = Mul(g, xhat).Sum(a.reduced, false).Reshape(ch)
		}
	}
	if c.needs(2) {
		gb = g.Sum(a.reduced, false).Reshape(ch)
	}
	return grads(gx, gw, gb)
}

func vjpLayerNorm(c *ctx, g *Value) []*Value {
	a := attrs[normAttrs](c)
	xhat, invstd := normStats(c.in(0), a)
	var gx, gw, gb *Value
	if c.needs(0) {
		gh := g
		if c.shape(1) != nil {
			gh = Mul(g, c.in(1))
		}
		gx = normInputGrad(gh, xhat, invstd, a)
	}
	if c.needs(1) {
		gw = c.sumTo(Mul(g, xhat), 1)
	}
	if c.needs(2) {
		gb = c.sumTo(g, 2)
	}
	return grads(gx, gw, gb)
}

// vjpRBFKernel: with G = g·K, dx = 2γ·(G·y − (Σⱼ G)·x) and
// dy = 2γ·(Gᵀ·x − (Σᵢ G)·y), from the saved kernel matrix.
func vjpRBFKernel(c *ctx, g *Value) []*Value {
	gamma := attrs[float64](c)
	gk := Mul(g, c.out())
	var gx, gy *Value
	if c.needs(0) {
		gx = Sub(MatMul(gk, c.in(1)), Mul(gk.Sum([]int{1}, true), c.in(0))).MulScalar(2 * gamma)
	}
	if c.needs(1) {
		m := c.shape(1)[0]
		gy = Sub(MatMul(gk.Transpose(0, 1), c.in(0)), Mul(gk.Sum([]int{0}, false).Reshape(m, 1), c.in(1))).MulScalar(2 * gamma)
	}
	return grads(gx, gy)
}

// vjpAffineGrid: grid[n] = base·θ[n]ᵀ with base [H·W, 3] the rows
// (x_w, y_h, 1), so dθ[n] = g[n]ᵀ·base. base is the tensor op's own
// coordinates: its grid for the identity map, with a column of ones.
func vjpAffineGrid(c *ctx, g *Value) []*Value {
	a := attrs[gridAttrs](c)
	n, h, w := a.size[0], a.size[2], a.size[3]
	dev, dt := g.Device(), c.dtype(0)
	id := hostTensor(dev, dt, []float64{1, 0, 0, 0, 1, 0}, 1, 2, 3)
	defer id.Release()
	coords := tensor.AffineGrid(id, []int{1, 1, h, w}, a.alignCorners)
	defer coords.Release()
	flat := coords.Reshape(h*w, 2)
	defer flat.Release()
	ones := tensor.Full(dev, dt, 1, h*w, 1)
	defer ones.Release()
	base := c.constant(tensor.Concat(1, flat, ones))
	return grads(MatMul(g.Reshape(n, h*w, 2).Transpose(1, 2), base))
}

// tensors collects a rule's raw temporaries (constants computed from
// saved data: indices and masks, which carry no gradient).
type tensors []*tensor.Tensor

func (s *tensors) add(t *tensor.Tensor) *tensor.Tensor {
	*s = append(*s, t)
	return t
}

func (s *tensors) release() { releaseTensors(*s) }

// gridAxis is one coordinate of GridSample's sample points as a rule sees
// it: the fraction f of the pixel coordinate above its floor (recorded,
// differentiable in the grid), the dgrid/dcoordinate factor (the
// unnormalizing scale, zero where border padding clamps), and per corner
// (floor, floor+1) the clamped pixel index and a 0/1 mask of lying inside
// the input.
type gridAxis struct {
	f      *Value
	factor *Value
	index  [2]*tensor.Tensor // float, clamped into the input
	inside [2]*Value
}

func gridCoordinate(c *ctx, tmp *tensors, grid *Value, axis, size int, a gridAttrs) gridAxis {
	gs := grid.Shape()
	n, p := gs[0], gs[1]*gs[2]
	dt := grid.DType()
	scale, off := float64(size)/2, float64(size-1)/2
	if a.alignCorners {
		scale = float64(size-1) / 2
	}
	var ga gridAxis
	i := grid.Slice(3, axis, axis+1, 1).Reshape(n, 1, p).MulScalar(scale).AddScalar(off)
	it := i.Tensor()
	if a.padding == tensor.GridBorder {
		// PyTorch's clip_coordinates_set_grad: no gradient at or past
		// either border.
		ga.factor = c.constant(tmp.add(mask(tmp, it.GtScalar(0), it.LtScalar(float64(size-1)), dt)).MulScalar(scale))
		i = Clamp(i, 0, float64(size-1))
		it = i.Tensor()
	} else {
		ga.factor = c.constant(tensor.Full(grid.Device(), dt, scale, 1))
	}
	// floor(i) = trunc(i) − (trunc(i) > i), as the Int32 cast truncates.
	trunc := tmp.add(tmp.add(it.Cast(tensor.Int32)).Cast(dt))
	fl := tmp.add(trunc.Sub(tmp.add(tmp.add(trunc.Gt(it)).Cast(dt))))
	ga.f = Sub(i, c.constant(alias(fl)))
	for k := range 2 {
		corner := fl
		if k == 1 {
			corner = tmp.add(fl.AddScalar(1))
		}
		ga.inside[k] = c.constant(mask(tmp, corner.GeScalar(0), corner.LeScalar(float64(size-1)), dt))
		ga.index[k] = tmp.add(corner.Clamp(0, float64(size-1)))
	}
	return ga
}

// mask is the conjunction of two Int32 comparison results as 0/1 of
// dtype; it takes over both.
func mask(tmp *tensors, a, b *tensor.Tensor, dtype tensor.DType) *tensor.Tensor {
	tmp.add(a)
	tmp.add(b)
	return tmp.add(a.Cast(dtype)).Mul(tmp.add(b.Cast(dtype)))
}

// vjpGridSample differentiates the bilinear interpolation
// out = Σ_corners wx·wy·x[corner] (corners outside the input read 0):
// dx scatters g·wx·wy to the four corners, and dgrid is g times the
// derivative of the weights (±wy for x, ±wx for y) times the corner
// values, by the unnormalizing scale.
func vjpGridSample(c *ctx, g *Value) []*Value {
	a := attrs[gridAttrs](c)
	xs, gs := c.shape(0), c.shape(1)
	n, ch, h, w := xs[0], xs[1], xs[2], xs[3]
	p := gs[1] * gs[2]
	var tmp tensors
	defer tmp.release()
	grid := c.in(1)
	cx := gridCoordinate(c, &tmp, grid, 0, w, a)
	cy := gridCoordinate(c, &tmp, grid, 1, h, a)
	// The masked weights of the low and high corner along each axis.
	wx := [2]*Value{Mul(cx.f.MulScalar(-1).AddScalar(1), cx.inside[0]), Mul(cx.f, cx.inside[1])}
	wy := [2]*Value{Mul(cy.f.MulScalar(-1).AddScalar(1), cy.inside[0]), Mul(cy.f, cy.inside[1])}
	var index [2][2]*Value // [y corner][x corner], [N, C, P] Int32
	for ky := range 2 {
		for kx := range 2 {
			rows := tmp.add(cy.index[ky].MulScalar(float64(w)))
			flat := tmp.add(tmp.add(rows.Add(cx.index[kx])).Cast(tensor.Int32))
			index[ky][kx] = c.constant(flat.Expand(n, ch, p))
		}
	}
	gf := g.Reshape(n, ch, p)
	var gx, ggrid *Value
	if c.needs(0) {
		gx = c.constant(tensor.Full(g.Device(), c.dtype(0), 0, n, ch, h*w))
		for ky := range 2 {
			for kx := range 2 {
				gx = gx.ScatterAdd(2, index[ky][kx], Mul(gf, Mul(wx[kx], wy[ky])))
			}
		}
		gx = gx.Reshape(xs...)
	}
	if c.needs(1) {
		xf := c.in(0).Reshape(n, ch, h*w)
		var v [2][2]*Value
		for ky := range 2 {
			for kx := range 2 {
				v[ky][kx] = xf.Gather(2, index[ky][kx])
			}
		}
		// ∂wx/∂f is (−inside₀, +inside₁), likewise for y.
		dWx := [2]*Value{cx.inside[0].MulScalar(-1), cx.inside[1]}
		dWy := [2]*Value{cy.inside[0].MulScalar(-1), cy.inside[1]}
		var dfx, dfy *Value
		for ky := range 2 {
			for kx := range 2 {
				tx := Mul(v[ky][kx], Mul(dWx[kx], wy[ky]))
				ty := Mul(v[ky][kx], Mul(wx[kx], dWy[ky]))
				if dfx == nil {
					dfx, dfy = tx, ty
				} else {
					dfx, dfy = Add(dfx, tx), Add(dfy, ty)
				}
			}
		}
		dgx := Mul(Mul(gf, dfx).Sum([]int{1}, true), cx.factor).Reshape(n, gs[1], gs[2], 1)
		dgy := Mul(Mul(gf, dfy).Sum([]int{1}, true), cy.factor).Reshape(n, gs[1], gs[2], 1)
		ggrid = Concat(3, dgx, dgy)
	}
	return grads(gx, ggrid)
}
