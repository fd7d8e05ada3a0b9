package cpu

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// gatherGrain is the number of elements a worker must get before a gather
// is split across goroutines.
const gatherGrain = 1 << 14

// walk is a row-major walk over one shape that several views share: the
// layouts are not simplified, so that runs along the last axis have the
// same length in every view and advance together.
func walk(shape []int, strides [][]int, offs []int, start int) []cursor {
	cs := make([]cursor, len(strides))
	for i := range cs {
		l := layout{rank: len(shape), off: offs[i]}
		copy(l.shape[:], shape)
		copy(l.strides[:], strides[i])
		if l.rank == 0 {
			l.rank, l.shape[0] = 1, 1
		}
		cs[i] = newCursor(l, start)
	}
	return cs
}

// withoutAxis returns strides with axis's stride zeroed: the position of
// an element with that coordinate 0.
func withoutAxis(strides []int, axis int) []int {
	s := slices.Clone(strides)
	s[axis] = 0
	return s
}

// badIndex records the first out-of-range index a kernel met, by element.
type badIndex struct {
	at, index int // at < 0: none
}

func (b badIndex) first(c badIndex) badIndex {
	if b.at < 0 || (c.at >= 0 && c.at < b.at) {
		return c
	}
	return b
}

func (b badIndex) err(op string, axis, size int) error {
	if b.at < 0 {
		return nil
	}
	// hal.IndexError's wording is every backend's; the element position
	// is left out because a GPU cannot report it.
	return fmt.Errorf("cpu: %w", &hal.IndexError{Op: op, Index: b.index, Axis: axis, Size: size})
}

// checkIndexed validates the operands of Gather and ScatterAdd: the
// values (dst of Gather, src of ScatterAdd) have the indexed view's dtype
// and index's shape, and the indexed view (src of Gather, dst of
// ScatterAdd) has the same rank and, as in PyTorch, at least index's size
// on every axis but axis; dst is contiguous and no two operands overlap.
func checkIndexed(op string, out, in, idx operand, axis int, isGather bool) error {
	values, indexed, name, valuesName := in, out, "dst", "src"
	if isGather {
		values, indexed, name, valuesName = out, in, "src", "dst"
	}
	if err := needDType(op, valuesName, values, indexed.DType); err != nil {
		return err
	}
	if !idx.DType.IsInteger() {
		return errorf(op, hal.ErrInvalid, "index is %s, want int32 or int64", desc(idx.View))
	}
	r := len(idx.Shape)
	if axis < 0 || axis >= r {
		return errorf(op, hal.ErrInvalid, "axis %d out of range for index %s", axis, desc(idx.View))
	}
	if !sameShape(values.Shape, idx.Shape) || len(indexed.Shape) != r {
		return errorf(op, hal.ErrInvalid, "index %s, src %s and dst %s do not fit", desc(idx.View), desc(in.View), desc(out.View))
	}
	for i, n := range idx.Shape {
		if i != axis && n > indexed.Shape[i] {
			return errorf(op, hal.ErrInvalid, "index %s is larger than %s %s on axis %d", desc(idx.View), name, desc(indexed.View), i)
		}
	}
	if err := needContiguous(op, "dst", out); err != nil {
		return err
	}
	return needDistinct(op, out, in, idx)
}

// Gather computes dst[i] = src[i with axis coordinate index[i]], as
// torch.gather. An out-of-range index writes 0 and makes the call fail
// with hal.ErrIndexOutOfRange after the whole kernel has run.
func (d *Device) Gather(dst, src, index hal.View, axis int) error {
	const op = "gather"
	o, err := d.operands(op, "dst src index", dst, src, index)
	if err != nil {
		return err
	}
	out, in, idx := o[0], o[1], o[2]
	if err := checkIndexed(op, out, in, idx, axis, true); err != nil {
		return err
	}
	d.dispatch()
	var bad badIndex
	switch in.DType {
	case hal.Float32:
		bad = gatherAny[float32](out, in, idx, axis)
	case hal.Float64:
		bad = gatherAny[float64](out, in, idx, axis)
	case hal.Int32, hal.Int64:
		// Both move 4 or 8 bytes untouched; int32 stands for its width.
		if in.DType == hal.Int64 {
			bad = gatherAny[int64](out, in, idx, axis)
		} else {
			bad = gatherAny[int32](out, in, idx, axis)
		}
	case hal.Float16:
		bad = gatherAny[half](out, in, idx, axis)
	}
	return bad.err(op, axis, in.Shape[axis])
}

// gatherAny runs gather for the index's dtype.
func gatherAny[S storage](out, in, idx operand, axis int) badIndex {
	if idx.DType == hal.Int64 {
		return gather[S, int64](out, in, idx, axis)
	}
	return gather[S, int32](out, in, idx, axis)
}

// gather moves elements without converting them, so it runs on the stored
// type; I is the index's stored type.
func gather[S storage, I int32 | int64](out, in, idx operand, axis int) badIndex {
	dst, src, ix := asType[S](out.words)[out.Offset:], asType[S](in.words), asType[I](idx.words)
	size, stride := in.Shape[axis], in.Strides[axis]
	n := out.Elements()
	parts := make([]badIndex, workersFor(n, gatherGrain))
	parallelChunks(n, len(parts), func(w, lo, hi int) {
		bad := badIndex{at: -1}
		cs := walk(idx.Shape, [][]int{idx.Strides, withoutAxis(in.Strides, axis)}, []int{idx.Offset, in.Offset}, lo)
		for i := lo; i < hi; {
			pi, si, m := cs[0].next(hi - i)
			ps, ss, _ := cs[1].next(hi - i)
			for j := range m {
				k := int(ix[pi+j*si])
				if k < 0 || k >= size {
					if bad.at < 0 {
						bad = badIndex{i + j, k}
					}
					var zero S
					dst[i+j] = zero
					continue
				}
				dst[i+j] = src[ps+j*ss+k*stride]
			}
			i += m
		}
		parts[w] = bad
	})
	bad := badIndex{at: -1}
	for _, p := range parts {
		bad = bad.first(p)
	}
	return bad
}

// ScatterAdd adds src[i] into dst[i with axis coordinate index[i]], as
// torch.Tensor.scatter_add_. Index elements that share their coordinates
// before axis write disjoint parts of dst from those of any other such
// block, so the blocks run in parallel; inside a block the adds run in
// row-major order of index, so the sums are the serial kernel's, bit for
// bit. float16 accumulates in float32 and rounds once at the end.
// Out-of-range indices are skipped and reported after the whole kernel has
// run.
func (d *Device) ScatterAdd(dst, index, src hal.View, axis int) error {
	const op = "scatter_add"
	o, err := d.operands(op, "dst index src", dst, index, src)
	if err != nil {
		return err
	}
	out, idx, in := o[0], o[1], o[2]
	if err := checkIndexed(op, out, in, idx, axis, false); err != nil {
		return err
	}
	d.dispatch()
	var bad badIndex
	switch out.DType {
	case hal.Float64:
		bad = scatterAddAny[float64](out, idx, in, axis)
	case hal.Int32:
		bad = scatterAddAny[int32](out, idx, in, axis)
	case hal.Int64:
		bad = scatterAddAny[int64](out, idx, in, axis)
	default:
		bad = scatterAddAny[float32](out, idx, in, axis)
	}
	return bad.err(op, axis, out.Shape[axis])
}

// scatterAddAny runs scatterAdd for the index's dtype.
func scatterAddAny[T compute](out, idx, in operand, axis int) badIndex {
	if idx.DType == hal.Int64 {
		return scatterAdd[T, int64](out, idx, in, axis)
	}
	return scatterAdd[T, int32](out, idx, in, axis)
}

// scatterRow adds src[j] into row[ix[j]] in order, skipping indices
// outside the row, and returns the first such j, or −1.
func scatterRow[T compute, I int32 | int64](row []T, ix []I, src []T) int {
	first := -1
	src = src[:len(ix)]
	for j, k := range ix {
		if uint64(k) >= uint64(len(row)) {
			if first < 0 {
				first = j
			}
			continue
		}
		row[k] += src[j]
	}
	return first
}

// scatterAdd accumulates in compute type T; I is the index's stored type.
func scatterAdd[T compute, I int32 | int64](out, idx, in operand, axis int) badIndex {
	dst, commit := output[T](&out, true)
	src, srcOff, srcStrides := dense[T](&in)
	ix := asType[I](idx.words)
	dstStrides := hal.RowMajorStrides(out.Shape)
	size, stride := out.Shape[axis], dstStrides[axis]
	n := idx.Elements()
	// block is the index elements of one coordinate prefix before axis:
	// the unit of parallel work, since no two blocks add into the same
	// element of dst.
	block := 1
	for _, s := range idx.Shape[axis:] {
		block *= s
	}
	blocks := 0
	if block > 0 {
		blocks = n / block
	}
	parts := make([]badIndex, max(1, min(workersFor(n, gatherGrain), blocks)))
	parallelChunks(blocks, len(parts), func(w, blo, bhi int) {
		lo, hi := blo*block, bhi*block
		bad := badIndex{at: -1}
		cs := walk(idx.Shape, [][]int{idx.Strides, srcStrides, withoutAxis(dstStrides, axis)}, []int{idx.Offset, srcOff, 0}, lo)
		for i := lo; i < hi; {
			pi, si, m := cs[0].next(hi - i)
			ps, ss, _ := cs[1].next(hi - i)
			pd, sd, _ := cs[2].next(hi - i)
			if si == 1 && ss == 1 && sd == 0 && stride == 1 {
				// A run along the last axis, into one row of dst (max
				// pooling's gradient into its planes): slices without
				// strides, whose bounds the index check proves.
				if j := scatterRow(dst[pd:pd+size], ix[pi:pi+m], src[ps:ps+m]); j >= 0 && bad.at < 0 {
					bad = badIndex{i + j, int(ix[pi+j])}
				}
				i += m
				continue
			}
			for j := range m {
				k := int(ix[pi+j*si])
				if k < 0 || k >= size {
					if bad.at < 0 {
						bad = badIndex{i + j, k}
					}
					continue
				}
				dst[pd+j*sd+k*stride] += src[ps+j*ss]
			}
			i += m
		}
		parts[w] = bad
	})
	commit()
	bad := badIndex{at: -1}
	for _, p := range parts {
		bad = bad.first(p)
	}
	return bad
}
