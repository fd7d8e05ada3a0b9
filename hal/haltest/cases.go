package haltest

import (
	"fmt"
)

// ewCase is one elementwise test: a shape, the layout of each input and of
// dst, and optionally an input that dst is identical to (in place).
type ewCase struct {
	name    string
	shape   []int
	in      []layout
	dst     layout
	inPlace int // index of the input dst is identical to, or −1
}

// ewSizes are the 1-D lengths every elementwise kernel runs at: empty,
// one element, less than a SIMD width or workgroup, and ragged lengths
// around 1024.
var ewSizes = []int{0, 1, 7, 1000, 1025}

// ewShapes are the multi-axis shapes every elementwise kernel runs at, in
// every input layout: a scalar, an empty axis in the middle, a 2-D matrix
// with odd sides, a 3-D block, and rank hal.MaxRank with size-1 axes.
var ewShapes = [][]int{{}, {3, 0, 5}, {33, 31}, {4, 5, 6}, {2, 1, 3, 1, 2, 2, 1, 3}}

// largeN is one length past 65,535 workgroups of 64 invocations, so a GPU
// must dispatch in two dimensions (or loop) to cover it.
const largeN = 65535*64 + 65

// ewCases lists the elementwise cases for a kernel of nIn inputs. Inputs
// take turns in the layouts, so every input sees every layout; dst gets a
// nonzero offset in every other case.
func ewCases(nIn int) []ewCase {
	var cases []ewCase
	add := func(name string, shape []int, ls []layout) {
		for j := range ls {
			in := make([]layout, nIn)
			for k := range in {
				in[k] = ls[(j+k*(len(ls)-1))%len(ls)]
			}
			c := ewCase{name: name + "/" + ls[j].name, shape: shape, in: in, dst: contiguous, inPlace: -1}
			if j%2 == 1 {
				c.dst = withOffset(3)
			}
			cases = append(cases, c)
		}
	}
	for _, n := range ewSizes {
		in := make([]layout, nIn)
		for k := range in {
			in[k] = contiguous
		}
		cases = append(cases, ewCase{name: fmt.Sprintf("n=%d", n), shape: []int{n}, in: in, dst: contiguous, inPlace: -1})
	}
	add("n=1025", []int{1025}, inputLayouts(1))
	for _, s := range ewShapes {
		ls := inputLayouts(len(s))
		if numel(s) == 0 {
			ls = ls[:3]
		}
		add(shapeName(s), s, ls)
	}
	for k := range nIn {
		for _, s := range [][]int{{1025}, {4, 5, 6}} {
			in := make([]layout, nIn)
			for j := range in {
				in[j] = inputLayouts(len(s))[j%3+1]
			}
			in[k] = withOffset(3)
			cases = append(cases, ewCase{name: fmt.Sprintf("in-place%d/%s", k, shapeName(s)), shape: s, in: in, dst: in[k], inPlace: k})
		}
	}
	return cases
}

// stridedOutLayouts are dst layouts for the kernels whose dst may have any
// non-overlapping strides (Fill, Copy).
func stridedOutLayouts(rank int) []layout {
	var out []layout
	for _, l := range inputLayouts(rank) {
		if l.bcast == nil {
			out = append(out, l)
		}
	}
	return out
}
