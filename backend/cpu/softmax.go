package cpu

import (
	"github.com/webtensor/webtensor/hal"
)

// softmaxGrain is the number of elements a worker must get before softmax
// rows are split across goroutines: each element costs an exp.
const softmaxGrain = 1 << 13

// Softmax computes softmax or log_softmax over the last axis; see
// hal.Device. Each row is one pass for the max, one that writes e^(x−max)
// and sums it, and one that scales (or shifts, for log) in place, while
// the row is still in cache. Rows are shared among goroutines. A
// contiguous float32 row is read and written where it lies; other rows
// (strided src, float16, float64) go through a row of scratch.
func (d *Device) Softmax(dst, src hal.View, log bool) error {
	const op = hal.KernelSoftmax
	out, in, rows, cols, err := d.rowOperands(op, dst, src)
	if err != nil || rows == 0 {
		return err
	}
	switch in.DType {
	case hal.Float64:
		eachRow(out, in, rows, cols, softmaxGrain, func(dst, x []float64) { softmaxRowF64(dst, x, log) })
	default:
		eachRow(out, in, rows, cols, softmaxGrain, func(dst, x []float32) { softmaxRowF32(dst, x, log) })
	}
	return nil
}

// rowOperands checks the operands of a kernel over rows along the last
// axis (Softmax, LayerNorm): src of a dtype the device runs op in, dst
// contiguous, of src's shape and dtype, sharing no buffer with it. It
// returns them with the row count (0 when there is nothing to compute)
// and length.
func (d *Device) rowOperands(op string, dst, src hal.View) (out, in operand, rows, cols int, err error) {
	o, err := d.operands(op, "dst src", dst, src)
	if err != nil {
		return out, in, 0, 0, err
	}
	out, in = o[0], o[1]
	if !d.caps.Supports(op, in.DType) {
		return out, in, 0, 0, unsupportedDType(op, in.DType)
	}
	if err := needDType(op, "dst", out, in.DType); err != nil {
		return out, in, 0, 0, err
	}
	if err := needShape(op, "src", in, out.Shape); err != nil {
		return out, in, 0, 0, err
	}
	if err := needContiguous(op, "dst", out); err != nil {
		return out, in, 0, 0, err
	}
	if err := needDistinct(op, out, in); err != nil {
		return out, in, 0, 0, err
	}
	if len(in.Shape) == 0 {
		return out, in, 0, 0, errorf(op, hal.ErrInvalid, "src %s has no last axis", desc(in.View))
	}
	d.dispatch()
	cols = in.Shape[len(in.Shape)-1]
	if cols == 0 || out.Elements() == 0 {
		return out, in, 0, cols, nil
	}
	return out, in, out.Elements() / cols, cols, nil
}

// eachRow runs row on each of rows rows of cols elements, in C, the
// compute type, sharing the rows among goroutines once each gets grain
// elements. A contiguous row of type C is read and written where it lies;
// other rows (strided, or Float16 for C float32) go through a row of
// scratch, converted on the way in and rounded once on the way out.
func eachRow[C float32 | float64](out, in operand, rows, cols, grain int, row func(dst, x []C)) {
	parallelFor(rows, max(1, grain/cols), func(lo, hi int) {
		src, srcDirect := typed[C](&in)
		srcDirect = srcDirect && in.Contiguous()
		dst, dstDirect := typed[C](&out)
		var (
			x, y   []C
			tmp    []uint64
			inCur  cursor
			outCur cursor
		)
		if !srcDirect || !dstDirect {
			tmp = make([]uint64, cols)
		}
		if srcDirect {
			src = src[in.Offset:]
		} else {
			x = make([]C, cols)
			inCur = newCursor(in.layout(), lo*cols)
		}
		if dstDirect {
			dst = dst[out.Offset:]
		} else {
			y = make([]C, cols)
			outCur = newCursor(out.layout(), lo*cols)
		}
		for r := lo; r < hi; r++ {
			if srcDirect {
				x = src[r*cols : (r+1)*cols]
			} else {
				load(x, &in, &inCur, tmp)
			}
			if dstDirect {
				y = dst[r*cols : (r+1)*cols]
			}
			row(y, x)
			if !dstDirect {
				store(&out, &outCur, y, tmp)
			}
		}
	})
}
