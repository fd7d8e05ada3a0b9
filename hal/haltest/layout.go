package haltest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/hal"
)

// A layout says how a view's elements sit in its buffer, independently of
// the shape: the order of the axes in memory, a step per axis (a slice
// with step, leaving unused elements between), axes broadcast with stride
// 0, and an offset. Unused buffer elements hold random values, so a kernel
// that reads them by mistake produces wrong results, and output buffers
// are checked to be untouched there.
type layout struct {
	name   string
	order  []int  // memory order of the axes, outermost first; nil: row-major
	step   []int  // per axis; nil: 1 everywhere
	bcast  []bool // per axis: stride 0; nil: none
	offset int
}

// slack is how many unused elements every buffer has past the view's
// last, to catch writes past the end.
const slack = 2

// place returns the view's offset and strides for shape and how many
// elements its buffer needs.
func (l layout) place(shape []int) (offset int, strides []int, size int) {
	rank := len(shape)
	strides = make([]int, rank)
	order := l.order
	if order == nil {
		order = identity(rank)
	}
	running := 1
	for i := rank - 1; i >= 0; i-- {
		ax := order[i]
		if l.bcast != nil && l.bcast[ax] {
			continue
		}
		step := 1
		if l.step != nil {
			step = l.step[ax]
		}
		strides[ax] = running * step
		running *= max(shape[ax], 1) * step
	}
	span := hal.View{Shape: shape, Strides: strides}.Span()
	return l.offset, strides, l.offset + span + slack
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

var contiguous = layout{name: "contiguous"}

// withOffset is the row-major layout starting at element off.
func withOffset(off int) layout {
	return layout{name: fmt.Sprintf("offset%d", off), offset: off}
}

// inputLayouts are the layouts every strided input is tried in, for a
// view of the given rank: contiguous; at an offset; the last two axes
// transposed; all axes reversed (a permutation, what a transposed matrix
// or NHWC-as-NCHW view is); every axis sliced with a step; one axis
// broadcast; and all of it at once.
func inputLayouts(rank int) []layout {
	ls := []layout{contiguous, withOffset(5)}
	if rank == 0 {
		return ls
	}
	if rank >= 2 {
		tr := identity(rank)
		tr[rank-1], tr[rank-2] = tr[rank-2], tr[rank-1]
		ls = append(ls, layout{name: "transposed", order: tr})
	}
	if rank >= 3 {
		rev := identity(rank)
		slices.Reverse(rev)
		ls = append(ls, layout{name: "permuted", order: rev, offset: 1})
	}
	step := make([]int, rank)
	for i := range step {
		step[i] = 1 + (i+1)%3 // 2, 3, 1, 2, …: the innermost axis gets a step too
	}
	step[rank-1] = 2
	ls = append(ls, layout{name: "stepped", step: step, offset: 3})
	first := make([]bool, rank)
	first[0] = true
	ls = append(ls, layout{name: "broadcast0", bcast: first, offset: 2})
	if rank >= 2 {
		last := make([]bool, rank)
		last[rank-1] = true
		ls = append(ls, layout{name: "broadcast-last", bcast: last})
		rev := identity(rank)
		slices.Reverse(rev)
		mid := make([]bool, rank)
		mid[rank/2] = true
		ls = append(ls, layout{name: "mixed", order: rev, step: step, bcast: mid, offset: 7})
	}
	return ls
}

// forEach calls fn(i, pos) for the views' elements in row-major order i,
// with pos the element's index in the buffer.
func forEach(shape, strides []int, offset int, fn func(i, pos int)) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n == 0 {
		return
	}
	idx := make([]int, len(shape))
	pos := offset
	for i := range n {
		fn(i, pos)
		for ax := len(shape) - 1; ax >= 0; ax-- {
			idx[ax]++
			pos += strides[ax]
			if idx[ax] < shape[ax] {
				break
			}
			pos -= idx[ax] * strides[ax]
			idx[ax] = 0
		}
	}
}

// unravel returns the coordinates of row-major index i in shape.
func unravel(i int, shape []int) []int {
	c := make([]int, len(shape))
	for ax := len(shape) - 1; ax >= 0; ax-- {
		c[ax] = i % shape[ax]
		i /= shape[ax]
	}
	return c
}

// numel is the product of shape.
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// shapeName formats a shape as 4x5x6 ("scalar" for rank 0), for subtest
// names.
func shapeName(shape []int) string {
	if len(shape) == 0 {
		return "scalar"
	}
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	return strings.Join(s, "x")
}
