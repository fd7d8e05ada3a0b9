package cpu

import "github.com/webtensor/webtensor/hal"

// reduceInt64 reduces Int64 src exactly, in int64: the float64 partials of
// the other dtypes would round values beyond 2⁵³. Sum and Prod wrap as
// Go's int64 does; Max, Min and the Arg ops keep the first extreme. Each
// output's elements are folded in row-major order; outputs are shared
// among goroutines.
func reduceInt64(op hal.ReduceOp, out, in *operand, reduced, inner int) {
	rank := len(in.Shape)
	rows := layoutOf(in.Shape[:rank-reduced], in.Strides[:rank-reduced], in.Offset)
	cols := layoutOf(in.Shape[rank-reduced:], in.Strides[rank-reduced:], 0)
	outer := out.Elements()
	data := asType[int64](in.words)
	parallelFor(outer, max(1, reduceGrain/max(inner, 1)), func(lo, hi int) {
		rc := newCursor(rows, lo)
		for row := lo; row < hi; row++ {
			base, _, _ := rc.next(1)
			l := cols
			l.off = base
			v, at := foldInt64(op, data, l, inner)
			switch op {
			case hal.ArgMax, hal.ArgMin:
				asType[int32](out.words)[out.Offset+row] = int32(at)
			default:
				asType[int64](out.words)[out.Offset+row] = v
			}
		}
	})
}

// foldInt64 folds the inner elements laid out by l: the value, and for a
// selection the index of its first occurrence.
func foldInt64(op hal.ReduceOp, data []int64, l layout, inner int) (v int64, at int) {
	switch op {
	case hal.Sum:
		v = 0
	case hal.Prod:
		v = 1
	}
	c := newCursor(l, 0)
	for k := 0; k < inner; {
		pos, stride, n := c.next(inner - k)
		for j := range n {
			x := data[pos+j*stride]
			switch op {
			case hal.Sum:
				v += x
			case hal.Prod:
				v *= x
			case hal.Max, hal.ArgMax:
				if k+j == 0 || x > v {
					v, at = x, k+j
				}
			case hal.Min, hal.ArgMin:
				if k+j == 0 || x < v {
					v, at = x, k+j
				}
			}
		}
		k += n
	}
	return v, at
}
