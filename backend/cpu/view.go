package cpu

import (
	"fmt"
	"slices"
	"sort"

	"github.com/webtensor/webtensor/hal"
)

// layout is a view's shape and strides with the axes that do not change
// its row-major walk simplified away: size-1 axes are dropped and each axis
// whose stride equals the span of the next one is merged into it, so a
// contiguous view of any rank becomes one axis of stride 1 and the walk
// below takes long runs. It always keeps at least one axis.
type layout struct {
	rank    int
	off     int
	shape   [hal.MaxRank]int
	strides [hal.MaxRank]int
}

func layoutOf(shape, strides []int, off int) layout {
	l := layout{off: off}
	for i, n := range shape {
		switch {
		case n == 1:
			continue
		case l.rank > 0 && l.strides[l.rank-1] == n*strides[i]:
			l.shape[l.rank-1] *= n
			l.strides[l.rank-1] = strides[i]
		default:
			l.shape[l.rank], l.strides[l.rank] = n, strides[i]
			l.rank++
		}
	}
	if l.rank == 0 {
		l.rank, l.shape[0], l.strides[0] = 1, 1, 1
	}
	return l
}

func (o *operand) layout() layout { return layoutOf(o.Shape, o.Strides, o.Offset) }

// cursor walks a layout in row-major order, one run along its last axis at
// a time: an odometer over the outer axes around a tight inner loop that
// the callers write themselves.
type cursor struct {
	layout
	idx [hal.MaxRank]int
	pos int // buffer element of idx
}

// newCursor starts at flat row-major element start. An empty layout
// gets a cursor that must not be advanced.
func newCursor(l layout, start int) cursor {
	c := cursor{layout: l, pos: l.off}
	for i := l.rank - 1; i >= 0 && l.shape[i] > 0; i-- {
		c.idx[i] = start % l.shape[i]
		start /= l.shape[i]
		c.pos += c.idx[i] * l.strides[i]
	}
	return c
}

// next returns the buffer position and stride of the next run of at most
// limit elements along the last axis, and its length n ≥ 1, and moves
// past it.
func (c *cursor) next(limit int) (pos, stride, n int) {
	last := c.rank - 1
	n = min(c.shape[last]-c.idx[last], limit)
	pos, stride = c.pos, c.strides[last]
	c.idx[last] += n
	c.pos += n * stride
	for i := last; i > 0 && c.idx[i] == c.shape[i]; i-- {
		c.pos += c.strides[i-1] - c.shape[i]*c.strides[i]
		c.idx[i] = 0
		c.idx[i-1]++
	}
	return pos, stride, n
}

// gatherRaw copies the next len(out) elements under c out of data.
func gatherRaw[T any](out []T, data []T, c *cursor) {
	for k := 0; k < len(out); {
		pos, s, n := c.next(len(out) - k)
		o := out[k : k+n]
		switch s {
		case 1:
			copy(o, data[pos:pos+n])
		case 0:
			fillRun(o, data[pos])
		default:
			for j := range o {
				o[j] = data[pos+j*s]
			}
		}
		k += n
	}
}

// fillRun sets every element of o to x. Past a few elements it copies
// what it has already written onto the rest, doubling up to fillChunk, so
// that a long run of one value (a broadcast bias along a plane, a scalar
// zero expanded to a gradient) moves at memmove's speed rather than one
// store per element.
func fillRun[T any](o []T, x T) {
	const head = 8
	if len(o) <= 2*head {
		for j := range o {
			o[j] = x
		}
		return
	}
	for j := range o[:head] {
		o[j] = x
	}
	for k := head; k < len(o); {
		k += copy(o[k:], o[:min(k, fillChunk)])
	}
}

// fillChunk is the longest copy fillRun repeats: its source stays in L1.
const fillChunk = 2048

// scatterRaw copies in to the next len(in) elements under c in data.
func scatterRaw[T any](data []T, c *cursor, in []T) {
	for k := 0; k < len(in); {
		pos, s, n := c.next(len(in) - k)
		if s == 1 {
			copy(data[pos:pos+n], in[k:k+n])
		} else {
			for j, x := range in[k : k+n] {
				data[pos+j*s] = x
			}
		}
		k += n
	}
}

// compute is the set of types kernels calculate in: float16 is computed
// in float32.
type compute interface {
	float32 | float64 | int32 | int64
}

// load fills out with the next len(out) elements of o under c, converted
// to C (usually a compute type; a storage type for plain copies). tmp is scratch space of at least len(out) words.
func load[C storage](out []C, o *operand, c *cursor, tmp []uint64) {
	switch o.DType {
	case hal.Float32:
		loadAs[C, float32](out, o, c, tmp)
	case hal.Float64:
		loadAs[C, float64](out, o, c, tmp)
	case hal.Int32:
		loadAs[C, int32](out, o, c, tmp)
	case hal.Int64:
		loadAs[C, int64](out, o, c, tmp)
	case hal.Float16:
		loadAs[C, half](out, o, c, tmp)
	}
}

func loadAs[C, S storage](out []C, o *operand, c *cursor, tmp []uint64) {
	data := asType[S](o.words)
	if same, ok := any(out).([]S); ok {
		gatherRaw(same, data, c)
		return
	}
	t := asType[S](tmp)[:len(out)]
	gatherRaw(t, data, c)
	convert(out, t)
}

// store writes in to the next len(in) elements of o under c, converted to
// o's dtype. tmp is scratch space of at least len(in) words.
func store[C storage](o *operand, c *cursor, in []C, tmp []uint64) {
	switch o.DType {
	case hal.Float32:
		storeAs[C, float32](o, c, in, tmp)
	case hal.Float64:
		storeAs[C, float64](o, c, in, tmp)
	case hal.Int32:
		storeAs[C, int32](o, c, in, tmp)
	case hal.Int64:
		storeAs[C, int64](o, c, in, tmp)
	case hal.Float16:
		storeAs[C, half](o, c, in, tmp)
	}
}

func storeAs[C, S storage](o *operand, c *cursor, in []C, tmp []uint64) {
	data := asType[S](o.words)
	if same, ok := any(in).([]S); ok {
		scatterRaw(data, c, same)
		return
	}
	t := asType[S](tmp)[:len(in)]
	convert(t, in)
	scatterRaw(data, c, t)
}

// dense returns o's elements in compute type C together with the offset
// and strides to index them. When o's dtype is C the buffer itself is
// returned, with o's own offset and strides, and nothing is copied;
// otherwise o is converted into a fresh row-major slice.
func dense[C compute](o *operand) (data []C, off int, strides []int) {
	if same, ok := typed[C](o); ok {
		return same, o.Offset, o.Strides
	}
	data = make([]C, o.Elements())
	c := newCursor(o.layout(), 0)
	tmp := make([]uint64, block)
	for k := 0; k < len(data); k += block {
		load(data[k:min(k+block, len(data))], o, &c, tmp)
	}
	return data, 0, hal.RowMajorStrides(o.Shape)
}

// typed returns o's buffer as a []T when T is the storage type of o's
// dtype. It boxes nothing, unlike a type assertion on an any, which saves
// an allocation per operand per kernel call.
func typed[T storage](o *operand) ([]T, bool) {
	if o.DType != dtypeOf[T]() {
		return nil, false
	}
	return asType[T](o.words), true
}

// dtypeOf is the dtype stored as T.
func dtypeOf[T storage]() hal.DType {
	var z T
	switch any(z).(type) {
	case float32:
		return hal.Float32
	case float64:
		return hal.Float64
	case int32:
		return hal.Int32
	case int64:
		return hal.Int64
	}
	return hal.Float16
}

// output returns the contiguous dst o as a slice of compute type C that a
// kernel may write, and a function that commits it. When o's dtype is C
// that is o's own memory and commit does nothing; otherwise it is a
// temporary, converted from o first when preload is set, and commit
// converts it back into o.
func output[C compute](o *operand, preload bool) (data []C, commit func()) {
	n := o.Elements()
	if same, ok := typed[C](o); ok {
		return same[o.Offset : o.Offset+n], func() {}
	}
	if preload {
		data, _, _ = dense[C](o) // a fresh row-major copy, as the dtypes differ
	} else {
		data = make([]C, n)
	}
	return data, func() { storeAll(o, data) }
}

// storeAll writes data, all of o's elements in row-major order, into o.
func storeAll[C storage](o *operand, data []C) {
	c := newCursor(o.layout(), 0)
	tmp := make([]uint64, block)
	for k := 0; k < len(data); k += block {
		store(o, &c, data[k:min(k+block, len(data))], tmp)
	}
}

// Validation helpers. Each returns an error naming the op and wrapping a
// hal sentinel.

// desc formats a view as dtype and shape, e.g. float32[3 4].
func desc(v hal.View) string { return fmt.Sprintf("%v%v", v.DType, v.Shape) }

func errorf(op string, sentinel error, format string, args ...any) error {
	return fmt.Errorf("cpu: %s: %s: %w", op, fmt.Sprintf(format, args...), sentinel)
}

func unsupportedDType(op string, t hal.DType) error {
	return errorf(op, hal.ErrUnsupported, "dtype %v", t)
}

// needDType checks that o has dtype t.
func needDType(op, name string, o operand, t hal.DType) error {
	if o.DType != t {
		return errorf(op, hal.ErrInvalid, "%s is %s, want %v", name, desc(o.View), t)
	}
	return nil
}

// needShape checks that o has the given shape.
func needShape(op, name string, o operand, shape []int) error {
	if !slices.Equal(o.Shape, shape) {
		return errorf(op, hal.ErrInvalid, "%s %s does not have shape %v", name, desc(o.View), shape)
	}
	return nil
}

// needContiguous checks that dst is row-major contiguous.
func needContiguous(op, name string, o operand) error {
	if !o.Contiguous() {
		return errorf(op, hal.ErrInvalid, "%s %v is not contiguous", name, o.View)
	}
	return nil
}

// needDistinct checks that dst shares no buffer with the inputs, for the
// kernels that read inputs after writing dst.
func needDistinct(op string, dst operand, inputs ...operand) error {
	for _, in := range inputs {
		if in.Buf != nil && in.Buf == dst.Buf {
			return errorf(op, hal.ErrInvalid, "dst shares its buffer with an input")
		}
	}
	return nil
}

// needInPlace checks the elementwise aliasing rule: dst may share a buffer
// with an input only as the identical view, so that every element is read
// before the same element is written.
func needInPlace(op string, dst operand, inputs ...operand) error {
	for _, in := range inputs {
		if in.Buf == dst.Buf && !in.Same(dst.View) {
			return errorf(op, hal.ErrInvalid, "dst %v overlaps input %v without being identical to it", dst.View, in.View)
		}
	}
	return nil
}

// needNoOverlap checks that no two elements of a strided dst share a
// buffer element: sorted by stride, each axis must step past everything
// the smaller axes reach.
func needNoOverlap(op string, o operand) error {
	type axis struct{ size, stride int }
	var axes []axis
	for i, n := range o.Shape {
		if n > 1 {
			axes = append(axes, axis{n, o.Strides[i]})
		}
	}
	sort.Slice(axes, func(i, j int) bool { return axes[i].stride < axes[j].stride })
	reach := 0 // largest offset the smaller axes reach
	for _, a := range axes {
		if a.stride <= reach {
			return errorf(op, hal.ErrInvalid, "dst %v overlaps itself", o.View)
		}
		reach += (a.size - 1) * a.stride
	}
	return nil
}

func sameShape(a, b []int) bool { return slices.Equal(a, b) }
