package tensor

import (
	"github.com/webtensor/webtensor/hal"
)

// PoolOptions configures MaxPool2d and AvgPool2d. Each pair is (height,
// width). Kernel is required; a zero Stride means the kernel size and a
// zero Dilation means 1, as PyTorch's defaults. CeilMode rounds the output
// size up, so a last window that starts inside the input (or its left
// padding) but runs past its end still counts.
type PoolOptions struct {
	Kernel, Stride, Padding, Dilation [2]int
	CeilMode                          bool
}

// Resolved returns o with its zero values replaced by what they stand for
// (stride = kernel, dilation 1), as PyTorch's defaults.
func (o PoolOptions) Resolved() PoolOptions {
	for i := range 2 {
		if o.Stride[i] == 0 {
			o.Stride[i] = o.Kernel[i]
		}
	}
	o.Dilation = zeroIsOne2(o.Dilation)
	return o
}

// window resolves the zero values, checks the options against PyTorch's
// rules and the input's size, and returns the pooling window with its
// output size.
func (o PoolOptions) window(op string, x *Tensor) hal.Window {
	r := o.Resolved()
	k, s, p, d := r.Kernel, r.Stride, r.Padding, r.Dilation
	switch {
	case k[0] <= 0 || k[1] <= 0:
		misuse(op, "kernel size %v must be positive", o.Kernel)
	case s[0] < 0 || s[1] < 0:
		misuse(op, "stride %v must be positive", o.Stride)
	case d[0] < 0 || d[1] < 0:
		misuse(op, "dilation %v must be positive", o.Dilation)
	case p[0] < 0 || p[1] < 0:
		misuse(op, "padding %v must not be negative", o.Padding)
	case p[0] > k[0]/2 || p[1] > k[1]/2:
		// Otherwise a window could lie entirely in the padding.
		misuse(op, "padding %v must be at most half the kernel size %v", o.Padding, o.Kernel)
	}
	h, w := x.shape[x.Rank()-2], x.shape[x.Rank()-1]
	oh := hal.OutputSize(h, k[0], s[0], p[0], d[0], o.CeilMode)
	ow := hal.OutputSize(w, k[1], s[1], p[1], d[1], o.CeilMode)
	if oh <= 0 || ow <= 0 {
		misuse(op, "input %s with kernel %v, stride %v, padding %v and dilation %v gives output size %dx%d, which is too small",
			nnDescribe(x), k, s, p, d, oh, ow)
	}
	return nnWindow(k, s, p, d, oh, ow)
}

// nnWindow is the hal.Window of a kernel size, stride, padding and dilation
// given as (height, width), whose output grid is oh×ow.
func nnWindow(kernel, stride, padding, dilation [2]int, oh, ow int) hal.Window {
	return hal.Window{
		KH: kernel[0], KW: kernel[1],
		StrideH: stride[0], StrideW: stride[1],
		PadH: padding[0], PadW: padding[1],
		DilationH: dilation[0], DilationW: dilation[1],
		OutH: oh, OutW: ow,
	}
}

// MaxPool2d takes the maximum of each window of x [N, C, H, W] (or
// unbatched [C, H, W]), as torch.nn.functional.max_pool2d with
// return_indices=True. It returns the values [N, C, OH, OW] and, as Int32,
// the position h·W + w of each maximum in its input plane (the first one
// on ties). Padding never wins: it reads as −∞.
func MaxPool2d(x *Tensor, o PoolOptions) (values, indices *Tensor) {
	const op = "MaxPool2d"
	values = routed(op, familyWindow, poolSize(x, o.Kernel, o.Stride), func() *Tensor {
		// A run that ran out of GPU memory left its indices here.
		indices.Release()
		x4, unbatched := nnBatched(op, x)
		if unbatched {
			defer x4.Release()
		}
		win := o.window(op, x4)
		checkOp(op, x.dev, x.dtype)
		v, i := nnPool2D(op, hal.PoolMax, x4, win, false)
		indices = nnUnbatched(i, unbatched)
		return nnUnbatched(v, unbatched)
	}, &x)
	return values, indices
}

// AvgPool2d averages each window of x [N, C, H, W] (or unbatched
// [C, H, W]), as torch.nn.functional.avg_pool2d. With countIncludePad the
// divisor counts the padding inside the window (PyTorch's default);
// without it, only the input elements. Dilation must be 1 (zero), as
// avg_pool2d has none.
func AvgPool2d(x *Tensor, o PoolOptions, countIncludePad bool) *Tensor {
	const op = "AvgPool2d"
	return routed(op, familyWindow, poolSize(x, o.Kernel, o.Stride), func() *Tensor {
		return avgPool2d(op, x, o, countIncludePad)
	}, &x)
}

// avgPool2d is AvgPool2d on x's device.
func avgPool2d(op string, x *Tensor, o PoolOptions, countIncludePad bool) *Tensor {
	x4, unbatched := nnBatched(op, x)
	if unbatched {
		defer x4.Release()
	}
	if (o.Dilation[0] != 0 && o.Dilation[0] != 1) || (o.Dilation[1] != 0 && o.Dilation[1] != 1) {
		misuse(op, "dilation %v is not supported: average pooling has none", o.Dilation)
	}
	win := o.window(op, x4)
	checkOp(op, x.dev, x.dtype)
	values, _ := nnPool2D(op, hal.PoolAvg, x4, win, countIncludePad)
	return nnUnbatched(values, unbatched)
}

// AdaptiveAvgPool2d averages x [N, C, H, W] (or unbatched [C, H, W]) down
// to [N, C, outH, outW], as torch.nn.functional.adaptive_avg_pool2d, for
// the two cases networks use: a 1×1 output (global average pooling, a mean
// over H and W) and output sizes that divide the input evenly (an average
// pool with kernel = stride = input/output). Other sizes, whose windows
// overlap unevenly, are misuse.
func AdaptiveAvgPool2d(x *Tensor, outH, outW int) *Tensor {
	const op = "AdaptiveAvgPool2d"
	// Each input element is read once, whatever the output size.
	return routed(op, familyWindow, elementwiseSize(x), func() *Tensor {
		return adaptiveAvgPool2d(op, x, outH, outW)
	}, &x)
}

// adaptiveAvgPool2d is AdaptiveAvgPool2d on x's device.
func adaptiveAvgPool2d(op string, x *Tensor, outH, outW int) *Tensor {
	x4, unbatched := nnBatched(op, x)
	if unbatched {
		defer x4.Release()
	}
	_, _, h, w := nnDims4(x4)
	if outH > 0 && outW > 0 {
		checkOp(op, x.dev, x.dtype)
	}
	switch {
	case outH <= 0 || outW <= 0:
		misuse(op, "output size %dx%d must be positive", outH, outW)
	case outH == 1 && outW == 1:
		return nnUnbatched(x4.mean(op, []int{2, 3}, true), unbatched)
	case h%outH != 0 || w%outW != 0:
		misuse(op, "output size %dx%d does not divide input %s evenly; only 1x1 and divisible sizes are supported",
			outH, outW, nnDescribe(x))
	}
	kernel := [2]int{h / outH, w / outW}
	win := PoolOptions{Kernel: kernel, Stride: kernel}.window(op, x4)
	values, _ := nnPool2D(op, hal.PoolAvg, x4, win, true)
	return nnUnbatched(values, unbatched)
}
