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
			// reduced mod 2³², which the store would saturate instead.
			scan = func(x []int64) {
				intScan(op)(x)
				for i, v := range x {
					x[i] = int64(int32(v))
				}
			}
		}
		scanRows(out, in, cols, scan)
	} else {
		scanRows(out, in, cols, floatScan(op))
	}
	return nil
}

// floatScan is op's in-place inclusive scan of a float64 row.
func floatScan(op hal.ScanOp) func(x []float64) {
	switch op {
	case hal.Cumprod:
		return func(x []float64) {
			acc := 1.0
			for i, v := range x {
				acc *= v
				x[i] = acc
			}
		}
	case hal.LogCumSumExp:
		return func(x []float64) {
			acc := math.Inf(-1)
			for i, v := range x {
				acc = logAddExp(acc, v)
				x[i] = acc
			}
		}
	}
	return func(x []float64) {
		acc := 0.0
		for i, v := range x {
			acc += v
			x[i] = acc
		}
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

// intScan is op's in-place inclusive scan of an int64 row (LogCumSumExp
// is float only and never reaches it).
func intScan(op hal.ScanOp) func(x []int64) {
	if op == hal.Cumprod {
		return func(x []int64) {
			acc := int64(1)
			for i, v := range x {
				acc *= v
				x[i] = acc
			}
		}
	}
	return func(x []int64) {
		acc := int64(0)
		for i, v := range x {
			acc += v
			x[i] = acc
		}
	}
}

// scanRows runs scan on each row of in, converted to C, into out.
func scanRows[C float64 | int64](out, in operand, cols int, scan func(x []C)) {
	rows := in.Elements() / cols
	parallelFor(rows, max(1, scanGrain/cols), func(lo, hi int) {
		x := make([]C, cols)
		tmp := make([]uint64, cols)
		inCur := newCursor(in.layout(), lo*cols)
		outCur := newCursor(out.layout(), lo*cols)
		for r := lo; r < hi; r++ {
			load(x, &in, &inCur, tmp)
			scan(x)
			store(&out, &outCur, x, tmp)
		}
	})
}
