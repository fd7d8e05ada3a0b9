package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// scanGrain is the number of elements a worker must get before scan rows
// are split across goroutines.
const scanGrain = 1 << 14

// Scan computes the inclusive scan op of each row of src along its last
// axis; see hal.Device. Float rows accumulate in float64 and round each
// prefix once, as PyTorch's CPU kernels accumulate float32 in double;
// integer rows accumulate in int64 and wrap into Int32 as the store
// truncates. A row is sequential (the prefix is the fold); rows are
// shared among goroutines.
func (d *Device) Scan(op hal.ScanOp, dst, src hal.View) error {
	key := op.Kernel()
	o, err := d.operands(key, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if !d.caps.Supports(key, in.DType) {
		return unsupportedDType(key, in.DType)
	}
	if err := needDType(key, "dst", out, in.DType); err != nil {
		return err
	}
	if err := needShape(key, "src", in, out.Shape); err != nil {
		return err
	}
	if err := needContiguous(key, "dst", out); err != nil {
		return err
	}
	if err := needDistinct(key, out, in); err != nil {
		return err
	}
	if len(in.Shape) == 0 {
		return errorf(key, hal.ErrInvalid, "src %s has no last axis", desc(in.View))
	}
	d.dispatch()
	cols := in.Shape[len(in.Shape)-1]
	if cols == 0 || out.Elements() == 0 {
		return nil
	}
	if in.DType.IsInteger() {
		scan := intScan(op)
		if in.DType == hal.Int32 {
			// Int32 wraps as int32 arithmetic would: the int64 prefix
			// reduced mod 2³² (the store would saturate it instead).
			// Sums and products mod 2³² do not depend on when the
			// reduction happens, so the carry may stay reduced.
			scan = func(x []int64, acc int64) int64 {
				acc = intScan(op)(x, acc)
				for i, v := range x {
					x[i] = int64(int32(v))
				}
				return int64(int32(acc))
			}
		}
		scanRows(out, in, cols, intIdentity(op), scan)
	} else {
		scanRows(out, in, cols, floatIdentity(op), floatScan(op))
	}
	return nil
}

// floatIdentity is op's value of an empty prefix.
func floatIdentity(op hal.ScanOp) float64 {
	switch op {
	case hal.Cumprod:
		return 1
	case hal.LogCumSumExp:
		return math.Inf(-1)
	}
	return 0
}

// floatScan is op's in-place inclusive scan of a block of a float64 row
// that follows a prefix of value acc; it returns the block's last prefix.
func floatScan(op hal.ScanOp) func(x []float64, acc float64) float64 {
	switch op {
	case hal.Cumprod:
		return func(x []float64, acc float64) float64 {
			for i, v := range x {
				acc *= v
				x[i] = acc
			}
			return acc
		}
	case hal.LogCumSumExp:
		return func(x []float64, acc float64) float64 {
			for i, v := range x {
				acc = logAddExp(acc, v)
				x[i] = acc
			}
			return acc
		}
	}
	return func(x []float64, acc float64) float64 {
		for i, v := range x {
			acc += v
			x[i] = acc
		}
		return acc
	}
}

// logAddExp is ln(eᵃ + eᵇ) without overflow: the larger term is factored
// out. Two equal infinities (where the shift would give Inf − Inf) are
// their own sum, so a prefix of −Inf stays −Inf, not NaN; NaN propagates.
func logAddExp(a, b float64) float64 {
	hi, lo := max(a, b), min(a, b)
	if math.IsInf(hi, 0) && hi == lo {
		return hi
	}
	return hi + math.Log1p(math.Exp(lo-hi))
}

// intIdentity is op's value of an empty prefix (LogCumSumExp is float
// only and never reaches the integer scans).
func intIdentity(op hal.ScanOp) int64 {
	if op == hal.Cumprod {
		return 1
	}
	return 0
}

// intScan is floatScan for an int64 block.
func intScan(op hal.ScanOp) func(x []int64, acc int64) int64 {
	if op == hal.Cumprod {
		return func(x []int64, acc int64) int64 {
			for i, v := range x {
				acc *= v
				x[i] = acc
			}
			return acc
		}
	}
	return func(x []int64, acc int64) int64 {
		for i, v := range x {
			acc += v
			x[i] = acc
		}
		return acc
	}
}

// scanRows runs scan on each row of in, converted to C, into out. A row
// streams through a block of `block` elements at a time, the prefix
// carried from block to block, so that a long row (16M elements) costs
// two small buffers rather than two copies of itself.
func scanRows[C float64 | int64](out, in operand, cols int, identity C, scan func(x []C, acc C) C) {
	rows := in.Elements() / cols
	parallelFor(rows, max(1, scanGrain/cols), func(lo, hi int) {
		n := min(cols, block)
		x := make([]C, n)
		tmp := make([]uint64, n)
		inCur := newCursor(in.layout(), lo*cols)
		outCur := newCursor(out.layout(), lo*cols)
		for r := lo; r < hi; r++ {
			acc := identity
			for j := 0; j < cols; j += n {
				part := x[:min(n, cols-j)]
				load(part, &in, &inCur, tmp)
				acc = scan(part, acc)
				store(&out, &outCur, part, tmp)
			}
		}
	})
}
