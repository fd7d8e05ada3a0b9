package cpu

import (
	"github.com/webtensor/webtensor/hal"
)

// The fast paths below serve the common shapes of comparisons and Where
// (every operand contiguous, or a broadcast scalar such as ReLU's 0) with
// plain loops the compiler turns into branch-free code: through the
// generic elementwise engine each element cost a function call, a
// mispredicted branch and, for Where, a conversion of the mask to float.

// flat returns o's elements as a slice of T when o holds dtype dt and is
// contiguous (scalar false), or its single value when every stride is 0
// (scalar true, a slice of length 1). ok is false for any other layout.
func flat[T any](o *operand, dt hal.DType) (s []T, scalar, ok bool) {
	if o.DType != dt {
		return nil, false, false
	}
	data := asType[T](o.words)
	if o.Contiguous() {
		return data[o.Offset : o.Offset+o.Elements()], false, true
	}
	for _, st := range o.Strides {
		if st != 0 {
			return nil, false, false
		}
	}
	return data[o.Offset : o.Offset+1], true, true
}

// b2i is 1 for true and 0 for false; the compiler emits a SETcc for it.
func b2i(b bool) int32 {
	var x int32
	if b {
		x = 1
	}
	return x
}

// compareFast writes a op b into the contiguous int32 out when a and b
// are each contiguous or a broadcast scalar, and reports whether it did.
func compareFast[T compute](op hal.BinaryOp, out, x, y *operand, dt hal.DType) bool {
	o, _, ok := flat[int32](out, hal.Int32)
	if !ok {
		return false
	}
	a, as, ok := flat[T](x, dt)
	if !ok {
		return false
	}
	b, bs, ok := flat[T](y, dt)
	if !ok {
		return false
	}
	if as && !bs {
		// s op b[i] is b[i] op' s with the operands' order mirrored.
		a, b, as, bs = b, a, bs, as
		op = mirror(op)
	}
	parallelFor(len(o), elementGrain, func(lo, hi int) {
		switch {
		case bs && as:
			v := b2i(cmp(op, a[0], b[0]))
			for i := range o[lo:hi] {
				o[lo+i] = v
			}
		case bs:
			compareScalar(op, o[lo:hi], a[lo:hi], b[0])
		default:
			compareDense(op, o[lo:hi], a[lo:hi], b[lo:hi])
		}
	})
	return true
}

func mirror(op hal.BinaryOp) hal.BinaryOp {
	switch op {
	case hal.Lt:
		return hal.Gt
	case hal.Le:
		return hal.Ge
	case hal.Gt:
		return hal.Lt
	case hal.Ge:
		return hal.Le
	}
	return op // Eq and Ne are symmetric
}

// cmp evaluates one comparison; every comparison with NaN is false but Ne.
func cmp[T compute](op hal.BinaryOp, a, b T) bool {
	switch op {
	case hal.Eq:
		return a == b
	case hal.Ne:
		return a != b
	case hal.Lt:
		return a < b
	case hal.Le:
		return a <= b
	case hal.Gt:
		return a > b
	}
	return a >= b
}

func compareScalar[T compute](op hal.BinaryOp, out []int32, a []T, s T) {
	a = a[:len(out)]
	switch op {
	case hal.Eq:
		for i := range out {
			out[i] = b2i(a[i] == s)
		}
	case hal.Ne:
		for i := range out {
			out[i] = b2i(a[i] != s)
		}
	case hal.Lt:
		for i := range out {
			out[i] = b2i(a[i] < s)
		}
	case hal.Le:
		for i := range out {
			out[i] = b2i(a[i] <= s)
		}
	case hal.Gt:
		for i := range out {
			out[i] = b2i(a[i] > s)
		}
	case hal.Ge:
		for i := range out {
			out[i] = b2i(a[i] >= s)
		}
	}
}

func compareDense[T compute](op hal.BinaryOp, out []int32, a, b []T) {
	a, b = a[:len(out)], b[:len(out)]
	switch op {
	case hal.Eq:
		for i := range out {
			out[i] = b2i(a[i] == b[i])
		}
	case hal.Ne:
		for i := range out {
			out[i] = b2i(a[i] != b[i])
		}
	case hal.Lt:
		for i := range out {
			out[i] = b2i(a[i] < b[i])
		}
	case hal.Le:
		for i := range out {
			out[i] = b2i(a[i] <= b[i])
		}
	case hal.Gt:
		for i := range out {
			out[i] = b2i(a[i] > b[i])
		}
	case hal.Ge:
		for i := range out {
			out[i] = b2i(a[i] >= b[i])
		}
	}
}

// whereFast computes out = c ≠ 0 ? a : b on the stored bits of a 4- or
// 8-byte dtype when the mask is contiguous and a and b are each contiguous
// or a broadcast scalar, and reports whether it did.
func whereFast(out, c, x, y *operand) bool {
	switch out.DType {
	case hal.Float32, hal.Int32:
		return whereBits[uint32](out, c, x, y)
	case hal.Float64, hal.Int64:
		return whereBits[uint64](out, c, x, y)
	}
	return false
}

func whereBits[U uint32 | uint64](out, c, x, y *operand) bool {
	m, ms, ok := flat[int32](c, hal.Int32)
	if !ok || ms {
		return false
	}
	dt := out.DType
	o, _, ok := flat[U](out, dt)
	if !ok {
		return false
	}
	a, as, ok := flat[U](x, dt)
	if !ok {
		return false
	}
	b, bs, ok := flat[U](y, dt)
	if !ok {
		return false
	}
	parallelFor(len(o), elementGrain, func(lo, hi int) {
		o, m := o[lo:hi], m[lo:hi]
		switch {
		case as && bs:
			selectBits(o, m, a[:1], b[:1], 0, 0)
		case as:
			selectBits(o, m, a[:1], b[lo:hi], 0, 1)
		case bs:
			selectBits(o, m, a[lo:hi], b[:1], 1, 0)
		default:
			selectBits(o, m, a[lo:hi], b[lo:hi], 1, 1)
		}
	})
	return true
}

// selectBits sets out[i] = m[i] ≠ 0 ? a[i·sa] : b[i·sb] for strides sa, sb
// of 0 (a scalar) or 1. (m | −m) has its sign bit set exactly when m ≠ 0,
// so shifting it spreads that bit into an all-ones or all-zeros mask.
func selectBits[U uint32 | uint64](out []U, m []int32, a, b []U, sa, sb int) {
	m = m[:len(out)]
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:len(out)], b[:len(out)]
		for i := range out {
			k := U((m[i] | -m[i]) >> 31)
			out[i] = a[i]&k | b[i]&^k
		}
	case sa == 1:
		a, s := a[:len(out)], b[0]
		for i := range out {
			k := U((m[i] | -m[i]) >> 31)
			out[i] = a[i]&k | s&^k
		}
	case sb == 1:
		s, b := a[0], b[:len(out)]
		for i := range out {
			k := U((m[i] | -m[i]) >> 31)
			out[i] = s&k | b[i]&^k
		}
	default:
		s, t := a[0], b[0]
		for i := range out {
			k := U((m[i] | -m[i]) >> 31)
			out[i] = s&k | t&^k
		}
	}
}

// compareFastAny dispatches compareFast on the operands' dtype; float16
// keeps the general path, which widens it to float32.
func compareFastAny(op hal.BinaryOp, out, x, y *operand) bool {
	switch x.DType {
	case hal.Float32:
		return compareFast[float32](op, out, x, y, hal.Float32)
	case hal.Float64:
		return compareFast[float64](op, out, x, y, hal.Float64)
	case hal.Int32:
		return compareFast[int32](op, out, x, y, hal.Int32)
	case hal.Int64:
		return compareFast[int64](op, out, x, y, hal.Int64)
	}
	return false
}
