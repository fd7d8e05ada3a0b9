package cpu

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// sortGrain is the number of elements a worker must get before sort rows
// are split across goroutines: each costs about log₂(cols) comparisons.
const sortGrain = 1 << 12

// Sort sorts each row of src along its last axis; see hal.Device. Each
// key is mapped to a uint64 whose unsigned order is the order torch.sort
// defines (NaN above +Inf, −0 equal to +0; complemented for descending),
// and the row is sorted as (key, position) pairs with pdqsort. The
// position breaks every tie, so the order is total and every sort is
// stable, as hal allows for stable=false. Comparing integers instead of
// floats through a NaN-aware comparator is what makes it fast: the
// comparator inlines to two compares. Rows are shared among goroutines.
func (d *Device) Sort(values, indices, src hal.View, descending, stable bool) error {
	const op = hal.KernelSort
	o, err := d.operands(op, "values indices src", values, indices, src)
	if err != nil {
		return err
	}
	vals, idx, in := o[0], o[1], o[2]
	if !d.caps.Supports(op, in.DType) {
		return unsupportedDType(op, in.DType)
	}
	if err := needDType(op, "values", vals, in.DType); err != nil {
		return err
	}
	if err := needDType(op, "indices", idx, hal.Int32); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		o    operand
	}{{"values", vals}, {"indices", idx}} {
		if err := needShape(op, c.name, c.o, in.Shape); err != nil {
			return err
		}
		if err := needContiguous(op, c.name, c.o); err != nil {
			return err
		}
		if err := needDistinct(op, c.o, in); err != nil {
			return err
		}
	}
	if err := needDistinct(op, vals, idx); err != nil {
		return err
	}
	if len(in.Shape) == 0 {
		return errorf(op, hal.ErrInvalid, "src %s has no last axis", desc(in.View))
	}
	cols := in.Shape[len(in.Shape)-1]
	if cols > math.MaxInt32 {
		return errorf(op, hal.ErrTooLarge, "a row of %d elements does not fit Int32 indices", cols)
	}
	d.dispatch()
	if cols == 0 || in.Elements() == 0 {
		return nil
	}
	switch in.DType {
	case hal.Float64:
		sortRows(vals, idx, in, cols, descending, floatKey)
	case hal.Int64:
		sortRows(vals, idx, in, cols, descending, intKey)
	case hal.Int32:
		sortPacked(vals, idx, in, cols, descending, func(x int64) uint32 { return uint32(int32(x)) ^ 1<<31 })
	default: // Float32, and Float16 (exact in float32)
		sortPacked(vals, idx, in, cols, descending, floatKey32)
	}
	return nil
}

// floatKey32 is floatKey for a value exact in float32, as a uint32.
func floatKey32(x float64) uint32 {
	if x != x {
		return math.MaxUint32
	}
	if x == 0 {
		x = 0
	}
	b := math.Float32bits(float32(x))
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

// floatKey maps x to a uint64 in torch.sort's ascending order: NaN (any
// payload) above +Inf, −0 equal to +0.
func floatKey(x float64) uint64 {
	if x != x {
		return math.MaxUint64
	}
	if x == 0 {
		x = 0 // −0 sorts with +0
	}
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// intKey maps x to a uint64 in x's order.
func intKey(x int64) uint64 { return uint64(x) ^ 1<<63 }

// keyed is one element of a row being sorted: its key and its position.
type keyed struct {
	key uint64
	pos int32
}

func compareKeyed(a, b keyed) int {
	if a.key != b.key {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	return int(a.pos - b.pos)
}

// sortPacked sorts the rows of in whose keys fit 32 bits (Float32,
// Float16, Int32): each element becomes one uint64, its key above its
// position, so that slices.Sort of plain integers is the whole sort,
// about three times faster than pdqsort of (key, position) pairs under a
// comparator (BenchmarkSortRow).
func sortPacked[C float64 | int64](vals, idx, in operand, cols int, descending bool, key func(C) uint32) {
	flip := uint32(0)
	if descending {
		flip = math.MaxUint32
	}
	sortEachRow(vals, idx, in, cols, func() func(x []C, order []int32) {
		packed := make([]uint64, cols)
		return func(x []C, order []int32) {
			for j, v := range x {
				packed[j] = uint64(key(v)^flip)<<32 | uint64(j)
			}
			slices.Sort(packed)
			for j, p := range packed {
				order[j] = int32(uint32(p))
			}
		}
	})
}

// sortRows sorts the rows of in, computed in C (float64 holds every float
// dtype exactly, int64 every integer), into vals and idx.
func sortRows[C float64 | int64](vals, idx, in operand, cols int, descending bool, key func(C) uint64) {
	flip := uint64(0)
	if descending {
		flip = math.MaxUint64
	}
	sortEachRow(vals, idx, in, cols, func() func(x []C, order []int32) {
		pairs := make([]keyed, cols)
		return func(x []C, order []int32) {
			for j, v := range x {
				pairs[j] = keyed{key(v) ^ flip, int32(j)}
			}
			slices.SortFunc(pairs, compareKeyed)
			for j, p := range pairs {
				order[j] = p.pos
			}
		}
	})
}

// sortEachRow runs the rows of in through a row sorter, split across the
// worker pool: newSorter makes one per worker (with its scratch), which
// writes each row's stable ascending order of positions; sortEachRow
// stores that order into idx and the values in that order into vals.
func sortEachRow[C float64 | int64](vals, idx, in operand, cols int, newSorter func() func(x []C, order []int32)) {
	rows := in.Elements() / cols
	indices, _ := typed[int32](&idx)
	indices = indices[idx.Offset:]
	parallelFor(rows, max(1, sortGrain/cols), func(lo, hi int) {
		sortRow := newSorter()
		x := make([]C, cols)
		y := make([]C, cols)
		tmp := make([]uint64, cols)
		inCur := newCursor(in.layout(), lo*cols)
		outCur := newCursor(vals.layout(), lo*cols)
		for r := lo; r < hi; r++ {
			load(x, &in, &inCur, tmp)
			row := indices[r*cols : (r+1)*cols]
			sortRow(x, row)
			for j, pos := range row {
				y[j] = x[pos]
			}
			store(&vals, &outCur, y, tmp)
		}
	})
}
