package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// reduceGrain is the number of source elements a worker must get before a
// reduction is split across goroutines.
const reduceGrain = 1 << 15

// partial is the running result of reducing some consecutive elements. Two
// partials of adjacent ranges merge into the partial of their union, which
// lets a reduction run in blocks and across goroutines alike.
type partial struct {
	v float64 // sum, product, extreme value, or the max of logsumexp
	c float64 // Neumaier compensation of a sum; Σ e^(x−v) of logsumexp
	i int     // flat index of the extreme value; −1 while none is seen
	n int64   // wrapping integer sum or product (int32's wraps when stored)
}

// reducer is one reduction op in the partial form.
type reducer struct {
	op hal.ReduceOp
	// compensated sums float64 input with Neumaier's algorithm; float32
	// and float16 values are summed plainly in float64, whose 29 extra
	// bits already make their rounding error negligible.
	compensated bool
}

func (r reducer) identity() partial {
	switch r.op {
	case hal.Prod:
		return partial{v: 1, n: 1, i: -1}
	case hal.LogSumExp:
		return partial{v: math.Inf(-1), i: -1}
	}
	return partial{i: -1}
}

// block reduces x, the elements at flat indices base, base+1, ….
func (r reducer) block(x []float64, base int) partial {
	p := r.identity()
	switch r.op {
	case hal.Sum:
		if r.compensated {
			for _, v := range x {
				p = neumaier(p, v)
			}
		} else {
			for _, v := range x {
				p.v += v
			}
		}
	case hal.Prod:
		for _, v := range x {
			p.v *= v
		}
	case hal.Max, hal.ArgMax, hal.Min, hal.ArgMin:
		for j, v := range x {
			if r.takes(p, v) {
				p.v, p.i = v, base+j
			}
		}
	case hal.LogSumExp:
		m := math.Inf(-1)
		for _, v := range x {
			m = max(m, v) // the builtin propagates NaN
		}
		p.v = m
		if math.IsInf(m, 0) || m != m {
			break // −Inf: all −Inf, sum 0; +Inf or NaN absorb the rest
		}
		for _, v := range x {
			p.c += math.Exp(v - m)
		}
	}
	return p
}

// takes reports whether a selection (max, min, argmax, argmin) replaces
// its pick p by v, met after it: v is the first, the first NaN, or
// strictly better; ties keep the earlier.
func (r reducer) takes(p partial, v float64) bool {
	less := r.op == hal.Min || r.op == hal.ArgMin
	return p.i < 0 || (v != v && p.v == p.v) || (less && v < p.v) || (!less && v > p.v)
}

// step folds x, the element at flat index i, into p: block for a single
// element, for the reductions that visit one element of many outputs at
// a time.
func (r reducer) step(p partial, x float64, i int) partial {
	switch r.op {
	case hal.Sum:
		if r.compensated {
			return neumaier(p, x)
		}
		p.v += x
	case hal.Prod:
		p.v *= x
	case hal.LogSumExp:
		q := partial{v: x, c: 1}
		if math.IsInf(x, -1) {
			q.c = 0
		}
		return r.merge(p, q)
	default:
		if r.takes(p, x) {
			p.v, p.i = x, i
		}
	}
	return p
}

// blockInt reduces int32 input for Sum and Prod, wrapping as int32 does
// (which equals the wide result truncated to 32 bits).
func (r reducer) blockInt(x []int64) partial {
	p := r.identity()
	if r.op == hal.Sum {
		for _, v := range x {
			p.n += v
		}
	} else {
		for _, v := range x {
			p.n *= v
		}
	}
	return p
}

// merge combines p with q, the partial of the range right after p's.
func (r reducer) merge(p, q partial) partial {
	switch r.op {
	case hal.Sum:
		// The compensations are small and add plainly; adding them
		// into the sum would turn it NaN once one of them is (an
		// infinite q.v makes q.c NaN).
		p = neumaier(p, q.v)
		p.c += q.c
		p.n += q.n
	case hal.Prod:
		p.v *= q.v
		p.n *= q.n
	case hal.Max, hal.ArgMax, hal.Min, hal.ArgMin:
		if q.i >= 0 && r.takes(p, q.v) {
			p = q
		}
	case hal.LogSumExp:
		switch {
		case p.v != p.v || q.v != q.v:
			p.v = math.NaN()
		case math.IsInf(p.v, 1) || math.IsInf(q.v, 1):
			p.v = math.Inf(1)
		case q.v == math.Inf(-1):
		case p.v == math.Inf(-1):
			p = q
		case q.v > p.v:
			p.c = p.c*math.Exp(p.v-q.v) + q.c
			p.v = q.v
		default:
			p.c += q.c * math.Exp(q.v-p.v)
		}
	}
	return p
}

// result is the reduction's value; argmax and argmin give their index.
func (r reducer) result(p partial, dtype hal.DType) float64 {
	switch {
	case r.op == hal.ArgMax || r.op == hal.ArgMin:
		return float64(p.i)
	case dtype == hal.Int32 && (r.op == hal.Sum || r.op == hal.Prod):
		// int64 arithmetic wraps to the same residue mod 2³² as int32's.
		return float64(int32(p.n))
	case dtype == hal.Int64 && (r.op == hal.Sum || r.op == hal.Prod):
		return float64(p.n)
	case r.op == hal.Sum && !math.IsInf(p.v, 0) && p.v == p.v:
		// An infinite sum makes the compensation NaN (Inf − Inf); the
		// sum itself is then already the answer.
		return p.v + p.c
	case r.op == hal.LogSumExp && !math.IsInf(p.v, 0) && p.v == p.v:
		return p.v + math.Log(p.c)
	}
	return p.v
}

// neumaier adds v to the compensated sum p (Neumaier's improvement of
// Kahan summation, which also survives |v| > |sum|).
func neumaier(p partial, v float64) partial {
	t := p.v + v
	if math.Abs(p.v) >= math.Abs(v) {
		p.c += (p.v - t) + v
	} else {
		p.c += (v - t) + p.v
	}
	p.v = t
	return p
}

// Reduce reduces the last `reduced` axes of src into dst. Each output's
// elements are folded in row-major order, in blocks, into a partial; the
// outputs are shared among goroutines, or, when there are too few of them,
// each output's elements are, with the partials merged in order. When the
// outputs lie closer together in memory than their elements, blocks of
// outputs advance together instead (see columns). Every strategy visits
// an output's elements in order, so ties and NaNs resolve alike.
func (d *Device) Reduce(op hal.ReduceOp, dst, src hal.View, reduced int) error {
	name := "reduce " + op.String()
	o, err := d.operands(name, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if !d.caps.Supports(op.Kernel(), in.DType) {
		return unsupportedDType(name, in.DType)
	}
	rank := len(in.Shape)
	if reduced < 0 || reduced > rank {
		return errorf(name, hal.ErrInvalid, "cannot reduce %d axes of src %s", reduced, desc(in.View))
	}
	want := in.DType
	if op == hal.ArgMax || op == hal.ArgMin {
		want = hal.Int32
	}
	if err := needDType(name, "dst", out, want); err != nil {
		return err
	}
	if !sameShape(out.Shape, in.Shape[:rank-reduced]) {
		return errorf(name, hal.ErrInvalid, "dst %s is not src %s without its last %d axes", desc(out.View), desc(in.View), reduced)
	}
	if err := needContiguous(name, "dst", out); err != nil {
		return err
	}
	if err := needDistinct(name, out, in); err != nil {
		return err
	}
	outer := out.Elements()
	inner := 1
	for _, n := range in.Shape[rank-reduced:] {
		inner *= n
	}
	if inner == 0 && outer > 0 && op != hal.Sum && op != hal.Prod && op != hal.LogSumExp {
		return errorf(name, hal.ErrInvalid, "src %s has no elements to reduce over its last %d axes", desc(in.View), reduced)
	}
	d.dispatch()
	if outer == 0 {
		return nil
	}
	if in.DType == hal.Int64 {
		reduceInt64(op, &out, &in, reduced, inner)
		return nil
	}
	r := reducer{op: op, compensated: in.DType == hal.Float64}
	// rows walks the outputs' first elements; cols, shifted to one of
	// them, walks that output's elements.
	rows := layoutOf(in.Shape[:rank-reduced], in.Strides[:rank-reduced], in.Offset)
	cols := layoutOf(in.Shape[rank-reduced:], in.Strides[rank-reduced:], 0)
	at := func(base int) layout { l := cols; l.off = base; return l }
	results := make([]float64, outer)
	switch {
	case outer >= 16 && inner > 1 && rows.strides[rows.rank-1] < cols.strides[cols.rank-1]:
		// The outputs lie closer together than each output's elements.
		parallelFor(outer, max(1, reduceGrain/inner), func(lo, hi int) {
			r.columns(&in, rows, cols, lo, hi, results)
		})
	case outer >= 2*maxWorkers() || inner*outer < 2*reduceGrain:
		// Enough outputs to share out, or too little work to split.
		parallelFor(outer, max(1, reduceGrain/max(inner, 1)), func(lo, hi int) {
			s := newScratch(min(inner, block))
			rc := newCursor(rows, lo)
			for row := lo; row < hi; row++ {
				base, _, _ := rc.next(1)
				results[row] = r.result(r.span(&in, at(base), 0, inner, s), in.DType)
			}
		})
	default:
		// A few long reductions: split each across goroutines.
		rc := newCursor(rows, 0)
		for row := range outer {
			base, _, _ := rc.next(1)
			parts := make([]partial, workersFor(inner, reduceGrain))
			parallelChunks(inner, len(parts), func(k, lo, hi int) {
				parts[k] = r.span(&in, at(base), lo, hi, newScratch(min(hi-lo, block)))
			})
			p := parts[0]
			for _, q := range parts[1:] {
				p = r.merge(p, q)
			}
			results[row] = r.result(p, in.DType)
		}
	}
	storeAll(&out, results)
	return nil
}

// scratch holds the blocks a reduction loads its input into.
type scratch struct {
	f   []float64
	i   []int64
	tmp []uint64
}

func newScratch(n int) scratch {
	return scratch{make([]float64, n), make([]int64, n), make([]uint64, n)}
}

// sumRunMin is the shortest contiguous row that span sums with sumF32
// rather than through the conversion block: below it the call costs more
// than the row.
const sumRunMin = 16

// span reduces the source elements [lo, hi) of one output, laid out by l.
func (r reducer) span(in *operand, l layout, lo, hi int, s scratch) partial {
	p := r.identity()
	if r.op == hal.Sum && in.DType == hal.Float32 && l.rank == 1 && l.strides[0] == 1 && hi > lo {
		// Contiguous float32: widen and add in SIMD lanes, no scratch.
		p.v = sumF32(asType[float32](in.words)[l.off+lo : l.off+hi])
		return p
	}
	if r.op == hal.Sum && in.DType == hal.Float32 && l.rank > 1 && l.strides[l.rank-1] == 1 && l.shape[l.rank-1] >= sumRunMin && hi > lo {
		// Contiguous float32 rows (a bias gradient's Sum over N, H and W
		// reads each image's plane of a channel): sumF32 per row, the rows'
		// sums merged in order.
		words := asType[float32](in.words)
		c := newCursor(l, lo)
		for k := lo; k < hi; {
			pos, _, n := c.next(hi - k)
			p = r.merge(p, partial{v: sumF32(words[pos : pos+n]), i: -1})
			k += n
		}
		return p
	}
	if (r.op == hal.Max || r.op == hal.Min) && in.DType == hal.Float32 && l.rank == 1 && l.strides[0] == 1 && hi > lo {
		if v, ok := extremeF32(asType[float32](in.words)[l.off+lo:l.off+hi], r.op == hal.Min); ok {
			// The value is unique, so any index of it merges alike.
			p.v, p.i = float64(v), lo
			return p
		}
	}
	c := newCursor(l, lo)
	intArith := in.DType.IsInteger() && (r.op == hal.Sum || r.op == hal.Prod)
	for k := lo; k < hi; k += len(s.f) {
		m := min(len(s.f), hi-k)
		var q partial
		if intArith {
			load(s.i[:m], in, &c, s.tmp)
			q = r.blockInt(s.i[:m])
		} else {
			load(s.f[:m], in, &c, s.tmp)
			q = r.block(s.f[:m], k)
		}
		p = r.merge(p, q)
	}
	return p
}

// columns reduces outputs [lo, hi) when they lie closer together in
// memory than the elements of each, as in a sum over the rows of a
// row-major matrix (a bias gradient). Reducing one output at a time would
// then stride across the whole source once per output; instead the
// partials of a block of outputs are kept side by side, and for each
// reduced index in turn the block's elements, neighbours in memory, are
// loaded together and folded in. Each output still sees its elements in
// order, so ties and NaNs resolve as in the row-wise walk.
func (r reducer) columns(in *operand, rows, cols layout, lo, hi int, results []float64) {
	size := min(block, hi-lo)
	acc := make([]partial, size)
	x, xi, tmp := make([]float64, size), make([]int64, size), make([]uint64, size)
	intArith := in.DType.IsInteger() && (r.op == hal.Sum || r.op == hal.Prod)
	inner := 1
	for i := range cols.rank {
		inner *= cols.shape[i]
	}
	// A plain float32 sum over outputs adjacent in memory (a bias
	// gradient, the batch axis of a row-major matrix) reads the source in
	// place: through a cursor and a conversion block each element cost
	// several times the add.
	var direct []float32
	if r.op == hal.Sum && !r.compensated && in.DType == hal.Float32 && rows.rank == 1 && rows.strides[0] == 1 {
		direct = asType[float32](in.words)
	}
	for b := lo; b < hi; b += size {
		m := min(size, hi-b)
		for o := range m {
			acc[o] = r.identity()
		}
		ic := newCursor(cols, 0)
		for k := range inner {
			pos, _, _ := ic.next(1)
			if direct != nil {
				start := rows.off + pos + b
				for o, v := range direct[start : start+m] {
					acc[o].v += float64(v)
				}
				continue
			}
			l := rows
			l.off += pos
			rc := newCursor(l, b)
			if intArith {
				load(xi[:m], in, &rc, tmp)
				for o, v := range xi[:m] {
					if r.op == hal.Sum {
						acc[o].n += v
					} else {
						acc[o].n *= v
					}
				}
				continue
			}
			load(x[:m], in, &rc, tmp)
			if r.op == hal.Sum && !r.compensated { // the common case, inlined
				for o, v := range x[:m] {
					acc[o].v += v
				}
				continue
			}
			for o, v := range x[:m] {
				acc[o] = r.step(acc[o], v, k)
			}
		}
		for o := range m {
			results[b+o] = r.result(acc[o], in.DType)
		}
	}
}
