package graph

import "github.com/webtensor/webtensor/tensor"

// axisAttrs is the axis of Softmax and LogSoftmax, resolved (−1 for a
// scalar input).
type axisAttrs struct{ axis int }

func resolveAxis(x *tensor.Tensor, dim int) int {
	if x.Rank() == 0 {
		return -1
	}
	if dim < 0 {
		dim += x.Rank()
	}
	return dim
}

// Softmax is tensor.Softmax, recorded. Its gradient reads only the result.
func Softmax(x *Value, dim int) *Value {
	live("Softmax", x)
	xs, done := autocast("Softmax", x)
	defer done()
	x = xs[0]
	t := live("Softmax", x)
	out := tensor.Softmax(t[0], dim)
	return unary("Softmax", x, out, axisAttrs{resolveAxis(t[0], dim)})
}

// LogSoftmax is tensor.LogSoftmax, recorded. Its gradient reads only the
// result.
func LogSoftmax(x *Value, dim int) *Value {
	live("LogSoftmax", x)
	xs, done := autocast("LogSoftmax", x)
	defer done()
	x = xs[0]
	t := live("LogSoftmax", x)
	out := tensor.LogSoftmax(t[0], dim)
	return unary("LogSoftmax", x, out, axisAttrs{resolveAxis(t[0], dim)})
}

// Softmax is the package function Softmax on x.
func (x *Value) Softmax(dim int) *Value { return Softmax(x, dim) }

// LogSoftmax is the package function LogSoftmax on x.
func (x *Value) LogSoftmax(dim int) *Value { return LogSoftmax(x, dim) }

// convAttrs is a convolution's geometry with the zero values resolved,
// in the transposed convolution's terms (Conv2d's has no output padding).
type convAttrs = tensor.ConvTransposeOptions

// Conv2d is tensor.Conv2d, recorded. The input's gradient is a transposed
// convolution of the output's gradient, the weight's a convolution of the
// input by it: both are recorded convolutions themselves, so gradients of
// any order are available.
func Conv2d(x, w, b *Value, o tensor.ConvOptions) *Value {
	live("Conv2d", x, w, b)
	xs, done := autocast("Conv2d", x, w, b)
	defer done()
	x, w, b = xs[0], xs[1], xs[2]
	t := live("Conv2d", x, w, b)
	out := tensor.Conv2d(t[0], t[1], t[2], o)
	a := tensor.ConvTransposeOptions{Stride: o.Stride, Padding: o.Padding, Dilation: o.Dilation, Groups: o.Groups}.Resolved()
	return record("Conv2d", out, []*Value{x, w, b}, a)
}

// Conv3d is tensor.Conv3d, recorded as the composition it runs
// (tensor.Conv3dPlan: a depth padding, a gather of the depth slices, a
// Conv2d, layout views and the bias), so its gradients are those parts'
// gradients: transposed 2-D convolutions, and a scatter-add of the
// gathered slices' gradients back onto the input depth slices they came
// from, which sums the taps that read one slice.
func Conv3d(x, w, b *Value, o tensor.Conv3dOptions) *Value {
	const op = "Conv3d"
	t := live(op, x, w, b)
	p := o.Plan(t[0], t[1], t[2])
	n, cin, d, h, wd := p.Input[0], p.Input[1], p.Input[2], p.Input[3], p.Input[4]
	cout, od, oh, ow := p.Output[1], p.Output[2], p.Output[3], p.Output[4]
	kd, g := p.Kernel[0], p.Options.Groups
	cinG := cin / g
	var tmp []*Value
	keep := func(v *Value) *Value { tmp = append(tmp, v); return v }
	defer func() { releaseAllValues(tmp...) }()
	if p.Pointwise && n > 0 && cout > 0 && cin > 0 && h > 0 && wd > 0 {
		images := keep(x.Reshape(n, cin, d*h, wd))
		w2 := keep(w.Reshape(cout, cinG, 1, 1))
		y := keep(Conv2d(images, w2, b, tensor.ConvOptions{Groups: g}))
		out := y.Reshape(p.Output[:]...)
		if p.Unbatched {
			defer out.Release()
			return out.Squeeze(0)
		}
		return out
	}
	var y *Value // [N, Cout, OD, OH, OW], maybe a view
	if n == 0 || cout == 0 || cin == 0 || h == 0 || wd == 0 {
		y = keep(Constant(tensor.Full(x.Device(), x.DType(), 0, p.Output[:]...)))
	} else {
		x5 := keep(x.Reshape(n, cin, d, h, wd))
		if pd := p.Options.Padding[0]; pd > 0 {
			x5 = keep(x5.Pad([]int{0, 0, 0, 0, pd, pd}, tensor.PadConstant, 0))
			d += 2 * pd
		}
		slicesView := keep(keep(x5.Reshape(n, g, cinG, d, h, wd)).Permute(0, 3, 1, 2, 4, 5))
		var y2 *Value
		switch p.Variant {
		case tensor.Conv3dTaps:
			for tap := range kd {
				start := int(p.DepthIndex[tap])
				taps := keep(slicesView.Slice(1, start, start+(od-1)*p.Options.Stride[0]+1, p.Options.Stride[0]))
				images := keep(taps.Reshape(n*od, cin, h, wd))
				wt := keep(keep(w.Slice(2, tap, tap+1, 1)).Reshape(cout, cinG, p.Kernel[1], p.Kernel[2]))
				yt := keep(Conv2d(images, wt, nil, p.Conv2d))
				if y2 == nil {
					y2 = yt
				} else {
					y2 = keep(Add(y2, yt))
				}
			}
		default:
			idx := keep(Constant(tensor.FromInt32(x.Device(), p.DepthIndex)))
			stacked := keep(slicesView.IndexSelect(1, idx))
			if g > 1 && kd > 1 {
				stacked = keep(keep(stacked.Reshape(n*od, kd, g, cinG, h, wd)).Permute(0, 2, 1, 3, 4, 5))
			}
			images := keep(stacked.Reshape(n*od, kd*cin, h, wd))
			w2 := keep(keep(w.Permute(0, 2, 1, 3, 4)).Reshape(cout, kd*cinG, p.Kernel[1], p.Kernel[2]))
			y2 = keep(Conv2d(images, w2, nil, p.Conv2d))
		}
		y = keep(keep(y2.Reshape(n, od, cout, oh, ow)).Permute(0, 2, 1, 3, 4))
	}
	var out *Value
	if b == nil {
		out = y.Contiguous()
	} else {
		out = Add(y, keep(b.Reshape(1, cout, 1, 1, 1)))
	}
	if p.Unbatched {
		defer out.Release()
		return out.Squeeze(0)
	}
	return out
}

// ConvTranspose2d is tensor.ConvTranspose2d, recorded. Its gradients are
// recorded convolutions, as Conv2d's.
func ConvTranspose2d(x, w, b *Value, o tensor.ConvTransposeOptions) *Value {
	live("ConvTranspose2d", x, w, b)
	xs, done := autocast("ConvTranspose2d", x, w, b)
	defer done()
	x, w, b = xs[0], xs[1], xs[2]
	t := live("ConvTranspose2d", x, w, b)
	out := tensor.ConvTranspose2d(t[0], t[1], t[2], o)
	a := o.Resolved()
	return record("ConvTranspose2d", out, []*Value{x, w, b}, a)
}

// MaxPool2d is tensor.MaxPool2d, recorded. The gradient goes to the
// position of each window's maximum (the first one on ties, as the
// forward picks it and as PyTorch does), summed where windows overlap.
// The indices are an Int32 value that needs no gradient.
func MaxPool2d(x *Value, o tensor.PoolOptions) (values, indices *Value) {
	t := live("MaxPool2d", x)
	v, idx := tensor.MaxPool2d(t[0], o)
	values = record("MaxPool2d", v, []*Value{x}, nil, alias(idx))
	return values, Constant(idx)
}

// poolAttrs are an average pooling's two averaging matrices, transposed
// (A_hᵀ [H, OH] and A_w [OW, W]), kept on the host until a backward pass
// needs them.
type poolAttrs struct {
	ahT, aw      []float64
	h, w, oh, ow int
}

// AvgPool2d is tensor.AvgPool2d, recorded. With countIncludePad the
// padding counts in each window's divisor, else only the input elements
// do; the gradient divides by the same counts, as PyTorch's.
func AvgPool2d(x *Value, o tensor.PoolOptions, countIncludePad bool) *Value {
	t := live("AvgPool2d", x)
	out := tensor.AvgPool2d(t[0], o, countIncludePad)
	if !wantsGrad(x) {
		return unary("AvgPool2d", x, out, nil)
	}
	r := o.Resolved()
	k, s, p := r.Kernel, r.Stride, r.Padding
	xs, ys := t[0].Shape(), out.Shape()
	h, w := xs[len(xs)-2], xs[len(xs)-1]
	oh, ow := ys[len(ys)-2], ys[len(ys)-1]
	// The windows clipped to the input, each with its divisor: the
	// positions inside the padded input, or inside the input alone.
	pooled := func(in, n, k, s, p int) []window {
		ws := make([]window, n)
		for i := range ws {
			lo, hi := i*s-p, i*s-p+k
			div := min(hi, in+p) - lo
			if !countIncludePad {
				div = min(hi, in) - max(lo, 0)
			}
			ws[i] = window{max(lo, 0), min(hi, in), div}
		}
		return ws
	}
	a := avgPoolAttrs(h, w, oh, ow, pooled(h, oh, k[0], s[0], p[0]), pooled(w, ow, k[1], s[1], p[1]))
	return unary("AvgPool2d", x, out, a)
}

// AdaptiveAvgPool2d is tensor.AdaptiveAvgPool2d, recorded. Output cell i
// averages the input rows ⌊i·H/outH⌋ to ⌈(i+1)·H/outH⌉ − 1, as PyTorch,
// and the gradient spreads back over the same windows.
func AdaptiveAvgPool2d(x *Value, outH, outW int) *Value {
	t := live("AdaptiveAvgPool2d", x)
	out := tensor.AdaptiveAvgPool2d(t[0], outH, outW)
	if !wantsGrad(x) {
		return unary("AdaptiveAvgPool2d", x, out, nil)
	}
	xs := t[0].Shape()
	h, w := xs[len(xs)-2], xs[len(xs)-1]
	adaptive := func(in, n int) []window {
		ws := make([]window, n)
		for i := range ws {
			lo, hi := i*in/n, ((i+1)*in+n-1)/n
			ws[i] = window{lo, hi, hi - lo}
		}
		return ws
	}
	a := avgPoolAttrs(h, w, outH, outW, adaptive(h, outH), adaptive(w, outW))
	return unary("AdaptiveAvgPool2d", x, out, a)
}

// window is one output cell's input range [lo, hi) and divisor.
type window struct{ lo, hi, div int }

// avgPoolAttrs builds the averaging matrices of the row windows wh and
// the column windows ww.
func avgPoolAttrs(h, w, oh, ow int, wh, ww []window) poolAttrs {
	a := poolAttrs{h: h, w: w, oh: oh, ow: ow, ahT: make([]float64, h*oh), aw: make([]float64, ow*w)}
	for i, r := range wh {
		for j := r.lo; j < r.hi; j++ {
			a.ahT[j*oh+i] = 1 / float64(r.div)
		}
	}
	for i, r := range ww {
		for j := r.lo; j < r.hi; j++ {
			a.aw[i*w+j] = 1 / float64(r.div)
		}
	}
	return a
}

// normAttrs are a normalization's parameters: the reduced axes, the
// number of values each statistic covers and the broadcast shape of the
// per-channel parameters (BatchNorm).
type normAttrs struct {
	training  bool
	eps       float64
	reduced   []int
	count     int
	statShape []int
}

// BatchNorm is tensor.BatchNorm, recorded; in training it updates
// runningMean and runningVar in place as the tensor op does (they are
// statistics, not parameters: no gradient reaches them). In training the
// gradient flows through the batch statistics, as PyTorch's; in
// evaluation the running statistics are constants, snapshot at the
// forward pass so that a later update does not change the gradient.
func BatchNorm(x *Value, runningMean, runningVar *tensor.Tensor, weight, bias *Value, training bool, momentum, eps float64) *Value {
	live("BatchNorm", x, weight, bias)
	cast, done := autocast("BatchNorm", x, weight, bias)
	defer done()
	x, weight, bias = cast[0], cast[1], cast[2]
	t := live("BatchNorm", x, weight, bias)
	out := tensor.BatchNorm(t[0], runningMean, runningVar, t[1], t[2], training, momentum, eps)
	if !wantsGrad(x, weight, bias) {
		return record("BatchNorm", out, []*Value{x, weight, bias}, nil)
	}
	xs := t[0].Shape()
	a := normAttrs{training: training, eps: eps, statShape: make([]int, len(xs)), reduced: []int{0}}
	for i := range a.statShape {
		a.statShape[i] = 1
	}
	a.statShape[1] = xs[1]
	for i := 2; i < len(xs); i++ {
		a.reduced = append(a.reduced, i)
	}
	a.count = t[0].Len() / max(xs[1], 1)
	var extra []*tensor.Tensor
	if !training {
		mean := runningMean.Reshape(a.statShape...)
		defer mean.Release()
		v := runningVar.Reshape(a.statShape...)
		defer v.Release()
		ve := v.AddScalar(eps)
		defer ve.Release()
		// The copy of the mean and invstd are snapshots: the running
		// tensors may be updated in place before the backward pass.
		extra = []*tensor.Tensor{mean.AddScalar(0), ve.Rsqrt()}
	}
	return record("BatchNorm", out, []*Value{x, weight, bias}, a, extra...)
}

// LayerNorm is tensor.LayerNorm, recorded. The gradient flows through the
// mean and variance, as PyTorch's.
func LayerNorm(x *Value, normalizedShape []int, weight, bias *Value, eps float64) *Value {
	live("LayerNorm", x, weight, bias)
	xs, done := autocast("LayerNorm", x, weight, bias)
	defer done()
	x, weight, bias = xs[0], xs[1], xs[2]
	t := live("LayerNorm", x, weight, bias)
	out := tensor.LayerNorm(t[0], normalizedShape, t[1], t[2], eps)
	r := t[0].Rank()
	a := normAttrs{training: true, eps: eps, count: 1}
	for i := range normalizedShape {
		a.reduced = append(a.reduced, r-len(normalizedShape)+i)
		a.count *= normalizedShape[i]
	}
	return record("LayerNorm", out, []*Value{x, weight, bias}, a)
}

// Dropout is tensor.Dropout, recorded: it draws the same mask from g (the
// same generator state gives the same result as the tensor op) and the
// gradient is g times that mask, as PyTorch's.
func Dropout(x *Value, p float64, training bool, g *tensor.Generator) *Value {
	const op = "Dropout"
	t := live(op, x)
	if !t[0].DType().IsFloat() || !(p >= 0 && p <= 1) || (training && p > 0 && p < 1 && g == nil) {
		// The tensor op reports the misuse in its words.
		tensor.Dropout(t[0], p, training, g).Release()
	}
	if !training || p == 0 {
		return x.Reshape(x.Shape()...)
	}
	if p == 1 {
		return x.MulScalar(0)
	}
	keep := g.Bernoulli(t[0].Device(), 1-p, t[0].Shape()...)
	if keep.DType() != t[0].DType() {
		k := keep.Cast(t[0].DType())
		keep.Release()
		keep = k
	}
	mask := Constant(keep.DivScalar(1 - p))
	keep.Release()
	defer mask.Release()
	return Mul(x, mask)
}

// RBFKernel is tensor.RBFKernel, recorded. Its gradient is computed from
// the kernel matrix itself, not from the clamped squared distances: where
// the clamp at 0 acts, x_i ≈ y_j and the distance's gradient vanishes
// anyway.
func RBFKernel(x, y *Value, gamma float64) *Value {
	t := live("RBFKernel", x, y)
	return record("RBFKernel", tensor.RBFKernel(t[0], t[1], gamma), []*Value{x, y}, gamma)
}

// gridAttrs are AffineGrid's and GridSample's parameters.
type gridAttrs struct {
	size         []int
	padding      tensor.GridPadding
	alignCorners bool
}

// AffineGrid is tensor.AffineGrid, recorded. The grid is linear in theta.
func AffineGrid(theta *Value, size []int, alignCorners bool) *Value {
	t := live("AffineGrid", theta)
	out := tensor.AffineGrid(t[0], size, alignCorners)
	return unary("AffineGrid", theta, out, gridAttrs{size: append([]int(nil), size...), alignCorners: alignCorners})
}

// GridSample is tensor.GridSample, recorded. The gradient with respect to
// the grid is that of the bilinear weights, as PyTorch's: it jumps where a
// sample point crosses a pixel centre, and border padding gives it zero
// where it clamps a coordinate.
func GridSample(x, grid *Value, padding tensor.GridPadding, alignCorners bool) *Value {
	t := live("GridSample", x, grid)
	out := tensor.GridSample(t[0], t[1], padding, alignCorners)
	return record("GridSample", out, []*Value{x, grid}, gridAttrs{padding: padding, alignCorners: alignCorners})
}
