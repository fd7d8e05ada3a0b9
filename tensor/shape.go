package tensor

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// checkShape panics unless shape can be a tensor's: rank ≤ hal.MaxRank
// and no negative dimension.
func checkShape(op string, shape []int) {
	if len(shape) > hal.MaxRank {
		misuse(op, "shape %v has rank %d, more than the maximum %d", shape, len(shape), hal.MaxRank)
	}
	numElements(op, shape)
}

// numElements returns the product of shape, panicking on negative
// dimensions or an element count that would not fit in memory anyway.
func numElements(op string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			misuse(op, "negative dimension in shape %v", shape)
		}
		if d != 0 && n > maxElements/d {
			misuse(op, "shape %v has too many elements", shape)
		}
		n *= d
	}
	return n
}

// maxElements keeps byte sizes (up to 8 per element) representable as
// int64 on every platform, including 32-bit ones.
const maxElements = int(^uint(0)>>1) / 8

// axis resolves a possibly negative axis of a rank-r tensor, as PyTorch's
// dim: −1 is the last axis.
func axis(op string, dim, rank int) int {
	return axisIn(op, dim, rank, rank)
}

// axisIn resolves dim against n positions (n = rank+1 for Unsqueeze,
// which may insert after the last axis); rank is for the message.
func axisIn(op string, dim, n, rank int) int {
	if n == 0 {
		misuse(op, "dim %d is out of range for a scalar (rank 0)", dim)
	}
	d := dim
	if d < 0 {
		d += n
	}
	if d < 0 || d >= n {
		misuse(op, "dim %d is out of range for rank %d (want %d … %d)", dim, rank, -n, n-1)
	}
	return d
}

// axes resolves a list of dims, rejecting duplicates. nil or empty means
// every axis.
func axes(op string, dims []int, rank int) []int {
	if len(dims) == 0 {
		out := make([]int, rank)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, len(dims))
	seen := make([]bool, rank)
	for i, d := range dims {
		a := axis(op, d, rank)
		if seen[a] {
			misuse(op, "dim %d appears more than once in %v", d, dims)
		}
		seen[a] = true
		out[i] = a
	}
	slices.Sort(out)
	return out
}

func allEqual(shapes [][]int) bool {
	for _, s := range shapes[1:] {
		if !slices.Equal(s, shapes[0]) {
			return false
		}
	}
	return true
}

// broadcastShapes returns the shape that shapes broadcast to under NumPy's
// rules: align at the last axis; each axis must be equal or 1 (a size-1
// axis stretches, including to 0).
func broadcastShapes(op string, shapes ...[]int) []int {
	// Equal shapes, the common case, broadcast to themselves: callers only
	// read the result, so it can be the first shape, with no allocation.
	if len(shapes) > 0 && allEqual(shapes) {
		return shapes[0]
	}
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			j := rank - len(s) + i
			switch {
			case d == out[j] || d == 1:
			case out[j] == 1:
				out[j] = d
			default:
				misuse(op, "shape mismatch: %s (not broadcastable)", formatShapes(shapes))
			}
		}
	}
	return out
}

func formatShapes(shapes [][]int) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += " vs "
		}
		s += fmt.Sprint(sh)
	}
	return s
}

// broadcastStrides returns the strides that let a tensor of shape and
// strides read as shape to (which it broadcasts to): new leading axes and
// stretched size-1 axes get stride 0. to must be a broadcast of shape.
func broadcastStrides(shape, strides, to []int) []int {
	out := make([]int, len(to))
	lead := len(to) - len(shape)
	for i := range shape {
		if shape[i] == to[lead+i] {
			out[lead+i] = strides[i]
		}
	}
	return out
}

// expanded is t's view read as shape (a broadcast of t's shape), for
// handing to a kernel.
func (t *Tensor) expanded(shape []int) hal.View {
	v := t.view()
	if !slices.Equal(t.shape, shape) {
		v.Strides = broadcastStrides(t.shape, t.strides, shape)
		v.Shape = shape
	}
	return v
}
