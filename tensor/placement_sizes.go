package tensor

// Sizes of ops in their family's measure, from operand shapes alone, which
// op entries pass to routed: they run before the op's own shape checks, so
// they must not assume valid shapes (misuse panics later, with the op's
// message).

// sizable reports whether t can be measured: routing reports nil and
// released operands itself, with the op's message.
func sizable(t *Tensor) bool { return t != nil && !t.released.Load() }

// elementwiseSize is the largest operand's element count, the output's
// size without broadcasting to a larger shape.
func elementwiseSize(ts ...*Tensor) int64 {
	var n int64
	for _, t := range ts {
		if sizable(t) {
			n = max(n, int64(t.Len()))
		}
	}
	return n
}

// imagePixels is N·H·W of an image batch x [N, C, H, W] (or [C, H, W]):
// the positions a convolution or pooling slides over. It is 0 for other
// ranks, which the op refuses.
func imagePixels(x *Tensor) int64 {
	if !sizable(x) || (x.Rank() != 3 && x.Rank() != 4) {
		return 0
	}
	n := int64(1)
	if x.Rank() == 4 {
		n = int64(x.shape[0])
	}
	r := x.Rank()
	return n * int64(x.shape[r-2]) * int64(x.shape[r-1])
}

// strideArea is the factor by which a stride shrinks an output grid; zero
// (the default) is 1, and invalid strides, which the op refuses, count 1.
func strideArea(stride [2]int) int64 {
	return int64(max(stride[0], 1)) * int64(max(stride[1], 1))
}

// convSize is the multiply-adds of Conv2d: each output position of each
// image multiplies the whole weight [Cout, Cin/G, KH, KW] once. Padding
// and dilation are ignored (they change the output grid by a border).
func convSize(x, w *Tensor, stride [2]int) int64 {
	if !sizable(w) {
		return 0
	}
	return imagePixels(x) / strideArea(stride) * int64(w.Len())
}

// convTransposeSize is the multiply-adds of ConvTranspose2d: each input
// position multiplies the whole weight [Cin, Cout/G, KH, KW] once.
func convTransposeSize(x, w *Tensor) int64 {
	if !sizable(w) {
		return 0
	}
	return imagePixels(x) * int64(w.Len())
}

// poolSize is a pooling's output elements × window area: x's elements
// over the stride's area (zero: the kernel's), times the kernel's.
func poolSize(x *Tensor, kernel, stride [2]int) int64 {
	if !sizable(x) {
		return 0
	}
	for i := range 2 {
		if stride[i] == 0 {
			stride[i] = kernel[i]
		}
	}
	return int64(x.Len()) / strideArea(stride) * strideArea(kernel)
}

// gridSampleSize is GridSample's output elements [N, C, OH, OW] × the 4
// pixels that each bilinear sample reads.
func gridSampleSize(x, grid *Tensor) int64 {
	if !sizable(x) || !sizable(grid) || x.Rank() != 4 || grid.Rank() != 4 {
		return 0
	}
	return int64(x.shape[0]) * int64(x.shape[1]) * int64(grid.shape[1]) * int64(grid.shape[2]) * 4
}

// matmulSize estimates the multiply-adds of op(a)·op(b): each element of
// a meets each column of b, and each element of b each row of a; the
// larger count covers whichever operand broadcasts over batch axes.
func matmulSize(a *Tensor, transA bool, b *Tensor, transB bool) int64 {
	if !sizable(a) || !sizable(b) {
		return 0
	}
	m, n := int64(1), int64(1)
	if r := len(a.shape); r >= 2 {
		m = int64(a.shape[r-2])
		if transA {
			m = int64(a.shape[r-1])
		}
	}
	if r := len(b.shape); r >= 2 {
		n = int64(b.shape[r-1])
		if transB {
			n = int64(b.shape[r-2])
		}
	}
	return max(int64(a.Len())*n, int64(b.Len())*m)
}
