package tensor

import (
	"os"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Conv3dOptions configures Conv3d. Each triple is (depth, height, width).
// Zero values mean stride 1, padding 0, dilation 1 and one group, as
// torch.nn.functional.conv3d's defaults.
type Conv3dOptions struct {
	Stride, Padding, Dilation [3]int
	Groups                    int
}

// EnvConv3d selects how Conv3d composes its 2-D convolutions:
// "taps" (the default) or "stack"; see Conv3d. It is read once per call,
// so a benchmark can compare both in one process.
const EnvConv3d = "WEBTENSOR_CONV3D"

// Conv3dVariant names a way Conv3d is composed of Conv2d (EnvConv3d).
type Conv3dVariant string

const (
	// Conv3dStack gathers every depth tap into the channels and runs one
	// Conv2d with KD times the channels: one GEMM with a KD times deeper
	// reduction, and a gathered copy of KD/strideD times the input.
	Conv3dStack Conv3dVariant = "stack"
	// Conv3dTaps runs one Conv2d per depth tap on the input slices that
	// tap reads and sums them: KD smaller GEMMs and KD−1 additions of the
	// output, with one input-sized copy alive at a time.
	Conv3dTaps Conv3dVariant = "taps"
)

// conv3dVariant is EnvConv3d's value; anything but "stack" is the
// default, taps: on an NVIDIA H200 (2026-11-27) taps ran the bench's two
// conv3d rows 1.45× and 1.24× faster than stack, and on the 2-core CPU
// about as fast, holding less memory.
func conv3dVariant() Conv3dVariant {
	if Conv3dVariant(os.Getenv(EnvConv3d)) == Conv3dStack {
		return Conv3dStack
	}
	return Conv3dTaps
}

// Conv3dPlan is the composition Conv3d runs, checked and resolved by
// Conv3dOptions.Plan: the input x [N, Cin, D, H, W] is zero-padded along
// depth by Padding[0] on both sides (to Dp), viewed as [N, Dp, G, Cin/G,
// H, W], and its depth slices DepthIndex gathered (for output slice od and
// tap kd, padded slice DepthIndex[od·KD+kd] = od·strideD + kd·dilationD);
// each output slice of each image is then a 2-D convolution (Conv2d) over
// the gathered slices. graph records the same steps, so its gradient is
// the composition's.
type Conv3dPlan struct {
	// Options are the options with their zero values resolved.
	Options Conv3dOptions
	// Unbatched says x was [Cin, D, H, W]; the result is then
	// [Cout, OD, OH, OW].
	Unbatched bool
	// Input is x's shape as 5-D, Kernel the weight's (KD, KH, KW) and
	// Output the result's shape as 5-D [N, Cout, OD, OH, OW].
	Input, Output [5]int
	Kernel        [3]int
	// DepthIndex lists, for each output slice od and depth tap kd, the
	// padded input slice they read, at od·KD + kd.
	DepthIndex []int32
	// Conv2d is the per-slice 2-D convolution's options (no groups: the
	// composition sets them).
	Conv2d ConvOptions
	// Variant is how the 2-D convolutions are composed (EnvConv3d).
	Variant Conv3dVariant
	// Pointwise says the kernel is 1×1×1 with stride 1 and no padding:
	// then the input viewed as [N, Cin, D·H, W] is one 1×1 Conv2d's, and
	// nothing is gathered or permuted.
	Pointwise bool
}

// Plan checks Conv3d's operands as Conv3d does (it panics with Conv3d's
// *Error on bad ones) and returns the composition Conv3d runs for them.
func (o Conv3dOptions) Plan(x, w, b *Tensor) Conv3dPlan {
	return conv3dPlan("Conv3d", x, w, b, o)
}

// Conv3d is the 3-D convolution (cross-correlation) of x [N, Cin, D, H, W]
// with weight w [Cout, Cin/Groups, KD, KH, KW], plus bias b [Cout] (b may
// be nil), as torch.nn.functional.conv3d. The result is
// [N, Cout, OD, OH, OW] with OD = ⌊(D + 2·padding − dilation·(KD−1) −
// 1)/stride⌋ + 1, likewise OH and OW. An unbatched x [Cin, D, H, W] gives
// [Cout, OD, OH, OW].
//
// It has no kernel of its own: it runs on Conv2d, so it is as fast as
// Conv2d is on each device. By default (EnvConv3d=taps) each depth tap is
// one Conv2d over the N·OD input slices it reads and the KD results are
// summed; with EnvConv3d=stack the depth slices that each output slice
// reads are gathered into the channels, as [N·OD, KD·Cin, H, W]
// (group-major), and one Conv2d with the weight viewed as
// [Cout, KD·Cin/Groups, KH, KW] computes every output slice. A 1×1×1 kernel with stride
// 1 and no padding (a pointwise convolution) is one 1×1 Conv2d over the
// input viewed as [N, Cin, D·H, W], with no copy in either variant.
func Conv3d(x, w, b *Tensor, o Conv3dOptions) *Tensor {
	const op = "Conv3d"
	return routed(op, familyMatMul, conv3dSize(x, w, o.Stride), func() *Tensor {
		return conv3d(op, x, w, b, conv3dPlan(op, x, w, b, o))
	}, &x, &w, &b)
}

// conv3dSize is Conv3d's multiply-adds for placement, as convSize.
func conv3dSize(x, w *Tensor, stride [3]int) int64 {
	if !sizable(x) || !sizable(w) || (x.Rank() != 4 && x.Rank() != 5) {
		return 0
	}
	r := x.Rank()
	n := int64(1)
	if r == 5 {
		n = int64(x.shape[0])
	}
	positions := n * int64(x.shape[r-3]) * int64(x.shape[r-2]) * int64(x.shape[r-1])
	for _, s := range stride {
		positions /= int64(max(s, 1))
	}
	return positions * int64(w.Len())
}

// conv3dPlan checks Conv3d's operands and resolves its composition.
func conv3dPlan(op string, x, w, b *Tensor, o Conv3dOptions) Conv3dPlan {
	x.checkLive(op)
	w.checkLive(op)
	operands := []*Tensor{x, w}
	if b != nil {
		b.checkLive(op)
		operands = append(operands, b)
	}
	sameDevice(op, operands...)
	// Unsupported dtypes (integers; float16 where the device lacks it)
	// are refused as the op table says, before any shape check.
	checkOp(op, x.dev, x.dtype)
	nnCheckFloat(op, "input", x)
	nnCheckFloat(op, "weight", w)
	var p Conv3dPlan
	switch x.Rank() {
	case 5:
		copy(p.Input[:], x.shape)
	case 4:
		p.Unbatched = true
		p.Input[0] = 1
		copy(p.Input[1:], x.shape)
	default:
		misuse(op, "input %s must be 4-D [C, D, H, W] or 5-D [N, C, D, H, W]", nnDescribe(x))
	}
	if w.Rank() != 5 {
		misuse(op, "weight %s must be 5-D [Cout, Cin/groups, KD, KH, KW]", nnDescribe(w))
	}
	if w.DType() != x.DType() {
		misuse(op, "input %s and weight %s have different dtypes", nnDescribe(x), nnDescribe(w))
	}
	copy(p.Kernel[:], w.shape[2:])
	if slices.Contains(p.Kernel[:], 0) {
		misuse(op, "weight %s has an empty kernel", nnDescribe(w))
	}
	for i := range 3 {
		switch {
		case o.Stride[i] < 0:
			misuse(op, "stride %v must be positive", o.Stride)
		case o.Dilation[i] < 0:
			misuse(op, "dilation %v must be positive", o.Dilation)
		case o.Padding[i] < 0:
			misuse(op, "padding %v must not be negative", o.Padding)
		}
		o.Stride[i], o.Dilation[i] = zeroIsOne(o.Stride[i]), zeroIsOne(o.Dilation[i])
	}
	if o.Groups < 0 {
		misuse(op, "groups %d must be positive", o.Groups)
	}
	o.Groups = zeroIsOne(o.Groups)
	p.Options = o
	g := o.Groups
	cin, cout, cinG := p.Input[1], w.shape[0], w.shape[1]
	switch {
	case cout%g != 0:
		misuse(op, "weight %s has %d output channels, not divisible by groups %d", nnDescribe(w), cout, g)
	case cin != cinG*g:
		misuse(op, "input %s has %d channels, but weight %s with groups %d expects %d·%d = %d",
			nnDescribe(x), cin, nnDescribe(w), g, cinG, g, cinG*g)
	}
	nnCheckBias(op, b, cout, w)
	p.Output[0], p.Output[1] = p.Input[0], cout
	for i, axis := range [3]string{"depth", "height", "width"} {
		in, k := p.Input[2+i], p.Kernel[i]
		span := o.Dilation[i]*(k-1) + 1
		if padded := in + 2*o.Padding[i]; span > padded {
			misuse(op, "kernel %v (dilation %v) spans %d along %s, more than the padded input %s (padding %v)",
				p.Kernel, o.Dilation, span, axis, nnDescribe(x), o.Padding)
		}
		p.Output[2+i] = (in+2*o.Padding[i]-span)/o.Stride[i] + 1
	}
	od, kd := p.Output[2], p.Kernel[0]
	p.DepthIndex = make([]int32, 0, od*kd)
	for o2 := range od {
		for t := range kd {
			p.DepthIndex = append(p.DepthIndex, int32(o2*o.Stride[0]+t*o.Dilation[0]))
		}
	}
	p.Conv2d = ConvOptions{
		Stride:   [2]int{o.Stride[1], o.Stride[2]},
		Padding:  [2]int{o.Padding[1], o.Padding[2]},
		Dilation: [2]int{o.Dilation[1], o.Dilation[2]},
		Groups:   g,
	}
	p.Variant = conv3dVariant()
	p.Pointwise = p.Kernel == [3]int{1, 1, 1} && o.Stride == [3]int{1, 1, 1} && o.Padding == [3]int{}
	return p
}

// conv3d runs plan p on x, w and b (already on one device): it calls
// the unrouted forms of the ops it is built from, so that it runs whole
// where Conv3d was placed.
func conv3d(op string, x, w, b *Tensor, p Conv3dPlan) *Tensor {
	var tmp nnScope
	defer tmp.release()
	n, cin, d, h, wd := p.Input[0], p.Input[1], p.Input[2], p.Input[3], p.Input[4]
	cout, od, oh, ow := p.Output[1], p.Output[2], p.Output[3], p.Output[4]
	kd, g := p.Kernel[0], p.Options.Groups
	cinG := cin / g
	if n == 0 || cout == 0 || cin == 0 || h == 0 || wd == 0 {
		// Nothing to gather from or to: the (empty or bias-only) result.
		return conv3dFinish(op, tmp.add(zerosResult(op, x.dev, x.dtype, p.Output[:], x, w)), b, p)
	}
	if p.Pointwise {
		images := tmp.add(x.Reshape(n, cin, d*h, wd))
		w2 := tmp.add(w.Reshape(cout, cinG, 1, 1))
		y := tmp.add(conv2d(op, images, w2, b, ConvOptions{Groups: g}))
		out := y.Reshape(p.Output[:]...)
		if p.Unbatched {
			defer out.Release()
			return out.Squeeze(0)
		}
		return out
	}
	x5 := tmp.add(x.Reshape(n, cin, d, h, wd))
	if pd := p.Options.Padding[0]; pd > 0 {
		x5 = tmp.add(x5.padConstant(op, []int{0, 0, 0, 0, pd, pd}, 0))
		d += 2 * pd
	}
	// [N, Dp, G, Cin/G, H, W]: a view, which the gather reads by strides.
	slicesView := tmp.add(tmp.add(x5.Reshape(n, g, cinG, d, h, wd)).Permute(0, 3, 1, 2, 4, 5))
	var y2 *Tensor // [N·OD, Cout, OH, OW]
	switch p.Variant {
	case Conv3dTaps:
		for t := range kd {
			start := int(p.DepthIndex[t])
			taps := tmp.add(slicesView.Slice(1, start, start+(od-1)*p.Options.Stride[0]+1, p.Options.Stride[0]))
			images := tmp.add(taps.Reshape(n*od, cin, h, wd))
			wt := tmp.add(tmp.add(w.Slice(2, t, t+1, 1)).Reshape(cout, cinG, p.Kernel[1], p.Kernel[2]))
			yt := tmp.add(conv2d(op, images, wt, nil, p.Conv2d))
			if y2 == nil {
				y2 = yt
			} else {
				y2 = tmp.add(binaryOp(op, hal.Add, y2, yt))
			}
		}
	default:
		idx := tmp.add(fromHost("FromInt32", x.dev, Int32, sliceBytes(p.DepthIndex), len(p.DepthIndex), nil))
		stacked := tmp.add(slicesView.indexSelect(op, 1, idx)) // [N, OD·KD, G, Cin/G, H, W]
		if g > 1 && kd > 1 {
			// Each group's channels must be adjacent: (G, KD, Cin/G).
			stacked = tmp.add(tmp.add(stacked.Reshape(n*od, kd, g, cinG, h, wd)).Permute(0, 2, 1, 3, 4, 5))
		}
		images := tmp.add(stacked.Reshape(n*od, kd*cin, h, wd))
		w2 := tmp.add(tmp.add(w.Permute(0, 2, 1, 3, 4)).Reshape(cout, kd*cinG, p.Kernel[1], p.Kernel[2]))
		y2 = tmp.add(conv2d(op, images, w2, nil, p.Conv2d))
	}
	// [N, OD, Cout, OH, OW] viewed as [N, Cout, OD, OH, OW].
	y := tmp.add(tmp.add(y2.Reshape(n, od, cout, oh, ow)).Permute(0, 2, 1, 3, 4))
	return conv3dFinish(op, y, b, p)
}

// conv3dFinish adds the bias to y [N, Cout, OD, OH, OW] (a view that
// the addition or a copy makes contiguous) and drops the batch axis of
// an unbatched input.
func conv3dFinish(op string, y, b *Tensor, p Conv3dPlan) *Tensor {
	var out *Tensor
	if b == nil {
		out = y.Contiguous()
	} else {
		bias := b.Reshape(1, b.shape[0], 1, 1, 1)
		defer bias.Release()
		out = binaryOp(op, hal.Add, y, bias)
	}
	if p.Unbatched {
		defer out.Release()
		return out.Squeeze(0)
	}
	return out
}
