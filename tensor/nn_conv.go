package tensor

import (
	"github.com/webtensor/webtensor/hal"
)

// ConvOptions configures Conv2d. Each pair is (height, width). Zero values
// mean stride 1, padding 0, dilation 1 and one group, so ConvOptions{} is a
// plain convolution, as torch.nn.functional.conv2d's defaults.
type ConvOptions struct {
	Stride, Padding, Dilation [2]int
	// Groups splits the input and output channels into this many
	// independent convolutions; Groups = channels is a depthwise
	// convolution.
	Groups int
}

// ConvTransposeOptions configures ConvTranspose2d, with the same zero
// values as ConvOptions (output padding 0).
type ConvTransposeOptions struct {
	Stride, Padding, OutputPadding, Dilation [2]int
	Groups                                   int
}

// convParams is a convolution's geometry with the zero values resolved.
type convParams struct {
	stride, padding, dilation, outputPadding [2]int
	groups                                   int
}

// Resolved returns o with its zero values replaced by what they stand for
// (stride 1, dilation 1, one group).
func (o ConvOptions) Resolved() ConvOptions {
	o.Stride, o.Dilation, o.Groups = zeroIsOne2(o.Stride), zeroIsOne2(o.Dilation), zeroIsOne(o.Groups)
	return o
}

// Resolved returns o with its zero values replaced by what they stand for
// (stride 1, dilation 1, one group).
func (o ConvTransposeOptions) Resolved() ConvTransposeOptions {
	o.Stride, o.Dilation, o.Groups = zeroIsOne2(o.Stride), zeroIsOne2(o.Dilation), zeroIsOne(o.Groups)
	return o
}

func zeroIsOne(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

func zeroIsOne2(v [2]int) [2]int { return [2]int{zeroIsOne(v[0]), zeroIsOne(v[1])} }

func resolveConvParams(op string, stride, padding, dilation, outputPadding [2]int, groups int) convParams {
	p := convParams{stride: zeroIsOne2(stride), padding: padding, dilation: zeroIsOne2(dilation),
		outputPadding: outputPadding, groups: zeroIsOne(groups)}
	switch {
	case p.stride[0] < 0 || p.stride[1] < 0:
		misuse(op, "stride %v must be positive", stride)
	case p.dilation[0] < 0 || p.dilation[1] < 0:
		misuse(op, "dilation %v must be positive", dilation)
	case p.padding[0] < 0 || p.padding[1] < 0:
		misuse(op, "padding %v must not be negative", padding)
	case p.outputPadding[0] < 0 || p.outputPadding[1] < 0:
		misuse(op, "output padding %v must not be negative", outputPadding)
	case p.groups < 0:
		misuse(op, "groups %d must be positive", groups)
	}
	return p
}

// Conv2d is the 2-D convolution (cross-correlation) of x [N, Cin, H, W]
// with weight w [Cout, Cin/Groups, KH, KW], plus bias b [Cout] (b may be
// nil), as torch.nn.functional.conv2d. The result is [N, Cout, OH, OW] with
// OH = ⌊(H + 2·padding − dilation·(KH−1) − 1)/stride⌋ + 1, likewise OW. An
// unbatched x [Cin, H, W] gives [Cout, OH, OW].
//
// A device with the Conv2D kernel runs it (one implicit-GEMM kernel, no
// unfolded copy of the input) and adds the bias after. Otherwise Conv2d
// unfolds the input into columns [N, Cin·KH·KW, OH·OW] (Im2Col), views
// them as [N, Groups, Cin/Groups·KH·KW, OH·OW] and multiplies them by the
// weight viewed as [Groups, Cout/Groups, Cin/Groups·KH·KW] in one batched
// GEMM whose C operand is the bias, so groups and depthwise convolutions
// cost no more launches than a plain one. A 1×1 convolution with stride 1
// and no padding needs no Im2Col: its columns are the input.
func Conv2d(x, w, b *Tensor, o ConvOptions) *Tensor {
	const op = "Conv2d"
	return routed(op, familyMatMul, convSize(x, w, o.Stride), func() *Tensor { return conv2d(op, x, w, b, o) }, &x, &w, &b)
}

// conv2d is Conv2d on its operands' device.
func conv2d(op string, x, w, b *Tensor, o ConvOptions) *Tensor {
	p := resolveConvParams(op, o.Stride, o.Padding, o.Dilation, [2]int{}, o.Groups)
	x4, unbatched := nnBatched(op, x, w, b)
	if unbatched {
		defer x4.Release()
	}
	nnCheckConvWeight(op, x4, w)

	n, cin, h, wd := nnDims4(x4)
	cout, cinG, kh, kw := nnDims4(w)
	g := p.groups
	switch {
	case cout%g != 0:
		misuse(op, "weight %s has %d output channels, not divisible by groups %d", nnDescribe(w), cout, g)
	case cin != cinG*g:
		misuse(op, "input %s has %d channels, but weight %s with groups %d expects %d·%d = %d",
			nnDescribe(x), cin, nnDescribe(w), g, cinG, g, cinG*g)
	}
	nnCheckBias(op, b, cout, w)
	oh := nnConvOutSize(op, x, w, 0, h, kh, p)
	ow := nnConvOutSize(op, x, w, 1, wd, kw, p)
	checkOp(op, x.dev, x.dtype)

	if x.dev.caps().Supports(hal.KernelConv2D, x.dtype) {
		win := nnWindow([2]int{kh, kw}, p.stride, p.padding, p.dilation, oh, ow)
		y := compute(op, x.dev, x.dtype, []int{n, cout, oh, ow}, []*Tensor{x4, w}, func(dst hal.View) error {
			return x.dev.hal.Conv2D(dst, x4.view(), w.view(), win, g)
		})
		return nnUnbatched(nnAddChannelBias(op, y, b), unbatched)
	}

	var tmp nnScope
	defer tmp.release()
	var cols *Tensor
	if kh == 1 && kw == 1 && p.stride == [2]int{1, 1} && p.padding == [2]int{} {
		// A pointwise convolution's columns are the input itself: a view
		// (for contiguous x) instead of an Im2Col copy.
		cols = tmp.add(x4.Reshape(n, cin, h*wd))
	} else {
		cols = tmp.add(nnIm2Col(op, x4, nnWindow([2]int{kh, kw}, p.stride, p.padding, p.dilation, oh, ow)))
	}
	k := cinG * kh * kw
	colsG := tmp.add(cols.Reshape(n, g, k, oh*ow))
	wG := tmp.add(w.Reshape(g, cout/g, k))
	// [G, Cout/G, K] · [N, G, K, L] broadcasts the weight over the batch;
	// the bias, [G, Cout/G, 1], broadcasts into the product as GEMM's C.
	var y *Tensor
	if b == nil {
		y = tmp.add(gemm(op, 1, wG, false, colsG, false, 0, nil))
	} else {
		bG := tmp.add(b.Reshape(g, cout/g, 1))
		y = tmp.add(gemm(op, 1, wG, false, colsG, false, 1, bG))
	}
	return nnUnbatched(y.Reshape(n, cout, oh, ow), unbatched)
}

// ConvTranspose2d is the 2-D transposed convolution of x [N, Cin, H, W]
// with weight w [Cin, Cout/Groups, KH, KW], plus bias b [Cout] (b may be
// nil), as torch.nn.functional.conv_transpose2d: the adjoint of Conv2d with
// the same stride, padding, dilation and groups. The result is
// [N, Cout, OH, OW] with OH = (H−1)·stride − 2·padding + dilation·(KH−1) +
// outputPadding + 1, likewise OW. An unbatched x [Cin, H, W] gives
// [Cout, OH, OW].
//
// Each group's columns are Wᵀ·x (one batched MatMul over N and groups),
// which Col2Im folds into the output image, summing overlaps; a 1×1
// kernel with stride 1 and no padding needs no folding. A device with
// the Conv2D kernel runs a stride-1 transposed convolution (a stride-1
// convolution's input gradient) as one convolution over the flipped
// weight instead, with no columns at all.
func ConvTranspose2d(x, w, b *Tensor, o ConvTransposeOptions) *Tensor {
	const op = "ConvTranspose2d"
	return routed(op, familyMatMul, convTransposeSize(x, w), func() *Tensor { return convTranspose2d(op, x, w, b, o) }, &x, &w, &b)
}

// convTranspose2d is ConvTranspose2d on its operands' device.
func convTranspose2d(op string, x, w, b *Tensor, o ConvTransposeOptions) *Tensor {
	p := resolveConvParams(op, o.Stride, o.Padding, o.Dilation, o.OutputPadding, o.Groups)
	x4, unbatched := nnBatched(op, x, w, b)
	if unbatched {
		defer x4.Release()
	}
	nnCheckConvWeight(op, x4, w)

	n, cin, h, wd := nnDims4(x4)
	wcin, coutG, kh, kw := nnDims4(w)
	g := p.groups
	switch {
	case cin != wcin:
		misuse(op, "input %s has %d channels, but weight %s expects %d", nnDescribe(x), cin, nnDescribe(w), wcin)
	case cin%g != 0:
		misuse(op, "input %s has %d channels, not divisible by groups %d", nnDescribe(x), cin, g)
	}
	for i, axis := range []string{"height", "width"} {
		if p.outputPadding[i] >= p.stride[i] && p.outputPadding[i] >= p.dilation[i] {
			misuse(op, "output padding %v must be smaller than either stride %v or dilation %v (%s)",
				p.outputPadding, p.stride, p.dilation, axis)
		}
	}
	cout := coutG * g
	nnCheckBias(op, b, cout, w)
	oh := (h-1)*p.stride[0] - 2*p.padding[0] + p.dilation[0]*(kh-1) + p.outputPadding[0] + 1
	ow := (wd-1)*p.stride[1] - 2*p.padding[1] + p.dilation[1]*(kw-1) + p.outputPadding[1] + 1
	if oh <= 0 || ow <= 0 {
		misuse(op, "input %s with weight %s, stride %v, padding %v, dilation %v and output padding %v gives output size %dx%d, which is too small",
			nnDescribe(x), nnDescribe(w), p.stride, p.padding, p.dilation, p.outputPadding, oh, ow)
	}
	checkOp(op, x.dev, x.dtype)

	if p.stride == [2]int{1, 1} && p.outputPadding == [2]int{} && (kh > 1 || kw > 1) &&
		p.padding[0] <= p.dilation[0]*(kh-1) && p.padding[1] <= p.dilation[1]*(kw-1) &&
		x.dev.caps().Supports(hal.KernelConv2D, x.dtype) {
		out := convTransposeByConv(op, x4, w, p, oh, ow)
		return nnUnbatched(nnAddChannelBias(op, out, b), unbatched)
	}

	var tmp nnScope
	defer tmp.release()
	cinG := cin / g
	xG := tmp.add(x4.Reshape(n, g, cinG, h*wd))
	wG := tmp.add(w.Reshape(g, cinG, coutG*kh*kw))
	wT := tmp.add(wG.Transpose(1, 2))                          // a view: MatMul reads the strides
	cols := tmp.add(gemm(op, 1, wT, false, xG, false, 0, nil)) // [N, G, Cout/G·KH·KW, H·W]
	var out *Tensor
	if kh == 1 && kw == 1 && p.stride == [2]int{1, 1} && p.padding == [2]int{} && p.outputPadding == [2]int{} {
		// Each column is one output pixel: folding is a reshape.
		out = cols.Reshape(n, cout, oh, ow)
	} else {
		colsFlat := tmp.add(cols.Reshape(n, cout*kh*kw, h*wd))
		// The column grid is the transposed convolution's input.
		out = nnCol2Im(op, colsFlat, []int{n, cout, oh, ow}, nnWindow([2]int{kh, kw}, p.stride, p.padding, p.dilation, h, wd))
	}
	out = nnAddChannelBias(op, out, b)
	return nnUnbatched(out, unbatched)
}

// convTransposeByConv is a stride-1 transposed convolution (the input's
// gradient of a stride-1 convolution) as a convolution: of x with the
// weight flipped along both kernel axes and its two channel axes exchanged
// within each group, padded by dilation·(K−1) − padding. That is one
// Conv2D kernel instead of a GEMM into columns [N, Cout·KH·KW, H·W] (KH·KW
// times the output's size) and a Col2Im fold that scatters them back.
func convTransposeByConv(op string, x4, w *Tensor, p convParams, oh, ow int) *Tensor {
	wcin, coutG, kh, kw := nnDims4(w)
	g := p.groups
	cinG := wcin / g
	var tmp nnScope
	defer tmp.release()
	// Reversing the flattened KH·KW axis flips both kernel axes at once.
	reversed := make([]int32, kh*kw)
	for i := range reversed {
		reversed[i] = int32(len(reversed) - 1 - i)
	}
	idx := tmp.add(fromHost("FromInt32", x4.dev, Int32, sliceBytes(reversed), len(reversed), nil))
	perm := tmp.add(tmp.add(w.Reshape(g, cinG, coutG, kh*kw)).Permute(0, 2, 1, 3)) // [G, Cout/G, Cin/G, KH·KW]
	flipped := tmp.add(perm.indexSelect(op, 3, idx))
	wc := tmp.add(flipped.Reshape(g*coutG, cinG, kh, kw))
	pad := [2]int{p.dilation[0]*(kh-1) - p.padding[0], p.dilation[1]*(kw-1) - p.padding[1]}
	win := nnWindow([2]int{kh, kw}, [2]int{1, 1}, pad, p.dilation, oh, ow)
	return compute(op, x4.dev, x4.dtype, []int{x4.shape[0], g * coutG, oh, ow}, []*Tensor{x4, wc}, func(dst hal.View) error {
		return x4.dev.hal.Conv2D(dst, x4.view(), wc.view(), win, g)
	})
}

// nnCheckConvWeight checks what Conv2d and ConvTranspose2d ask of the
// weight alike: a 4-D tensor of x's dtype with a non-empty kernel.
func nnCheckConvWeight(op string, x, w *Tensor) {
	if w.Rank() != 4 {
		misuse(op, "weight %s must be 4-D", nnDescribe(w))
	}
	if w.DType() != x.DType() {
		misuse(op, "input %s and weight %s have different dtypes", nnDescribe(x), nnDescribe(w))
	}
	if w.shape[2] == 0 || w.shape[3] == 0 {
		misuse(op, "weight %s has an empty kernel", nnDescribe(w))
	}
}

// nnCheckBias checks that b (if any) is [channels] of w's dtype.
func nnCheckBias(op string, b *Tensor, channels int, w *Tensor) {
	if b == nil {
		return
	}
	if b.Rank() != 1 || b.shape[0] != channels {
		misuse(op, "bias %s must be [%d], one per output channel", nnDescribe(b), channels)
	}
	if b.DType() != w.DType() {
		misuse(op, "bias %s and weight %s have different dtypes", nnDescribe(b), nnDescribe(w))
	}
}

// nnConvOutSize is the forward convolution's output size along axis
// (0 = height, 1 = width); a dilated kernel larger than the padded input
// is misuse, as in PyTorch.
func nnConvOutSize(op string, x, w *Tensor, axis, in, k int, p convParams) int {
	span := p.dilation[axis]*(k-1) + 1
	if padded := in + 2*p.padding[axis]; span > padded {
		misuse(op, "kernel %dx%d (dilation %v) spans %d %s, more than the padded input %s (padding %v)",
			w.shape[2], w.shape[3], p.dilation, span, [...]string{"rows", "columns"}[axis], nnDescribe(x), p.padding)
	}
	return hal.OutputSize(in, k, p.stride[axis], p.padding[axis], p.dilation[axis], false)
}

// nnAddChannelBias returns y [N, C, …] + b broadcast along the channel
// axis, consuming y; without a bias it returns y itself.
func nnAddChannelBias(op string, y, b *Tensor) *Tensor {
	if b == nil {
		return y
	}
	defer y.Release()
	shape := make([]int, y.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = b.shape[0]
	bias := b.Reshape(shape...)
	defer bias.Release()
	return binaryOp(op, hal.Add, y, bias)
}
