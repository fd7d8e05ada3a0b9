package cpu

import (
	"github.com/webtensor/webtensor/hal"
)

const (
	// elementGrain is the number of elements a worker must get before an
	// elementwise kernel is split across goroutines: 32K float32s take some
	// 10 µs to stream, enough to amortize waking another goroutine.
	elementGrain = 1 << 15
	// mathGrain is the same for kernels that call a transcendental
	// function per element, which cost some 20× more.
	mathGrain = 1 << 11
	// block is how many elements the elementwise engine converts at a
	// time: small enough for the scratch blocks to stay in L1.
	block = 512
)

// kernel computes out[i] from a[i], b[i], c[i] (as many inputs as the op
// has; the rest are nil) on contiguous blocks of equal length. out may be
// the same memory as an input, so it must read each i before writing it.
type kernel[I, O storage] func(out []O, a, b, c []I)

// elementwise runs k over every element of dst in row-major order. Inputs
// have dst's shape and any strides and dtypes; each block of an input is
// converted to I (or used in place when it is contiguous and already I),
// and each block of results is converted from O into dst (or written in
// place likewise). Work is split across goroutines in contiguous ranges.
func elementwise[I, O storage](dst operand, ins []operand, grain int, k kernel[I, O]) {
	n := dst.Elements()
	if n == 0 {
		return
	}
	noConversion := allDirect[I, O](dst, ins)
	parallelFor(n, grain, func(lo, hi int) {
		if noConversion {
			// Nothing to convert: one call over the whole chunk lets the
			// SIMD kernels stream without a call per block.
			out := asType[O](dst.words)[dst.Offset:]
			var x [3][]I
			for j := range ins {
				x[j] = asType[I](ins[j].words)[ins[j].Offset+lo : ins[j].Offset+hi]
			}
			k(out[lo:hi], x[0], x[1], x[2])
			return
		}
		size := min(block, hi-lo)
		tmp := make([]uint64, size)
		var (
			direct [3][]I // whole buffer of a contiguous input of type I
			scr    [3][]I
			cur    [3]cursor
		)
		for j := range ins {
			if s, ok := typed[I](&ins[j]); ok && ins[j].Contiguous() {
				direct[j] = s[ins[j].Offset:]
			} else {
				scr[j] = make([]I, size)
				cur[j] = newCursor(ins[j].layout(), lo)
			}
		}
		outDirect, _ := typed[O](&dst)
		var (
			outScr []O
			outCur cursor
		)
		if outDirect != nil && dst.Contiguous() {
			outDirect = outDirect[dst.Offset:]
		} else {
			outDirect = nil
			outScr = make([]O, size)
			outCur = newCursor(dst.layout(), lo)
		}
		for i := lo; i < hi; i += size {
			m := min(size, hi-i)
			var x [3][]I
			for j := range ins {
				if direct[j] != nil {
					x[j] = direct[j][i : i+m]
				} else {
					x[j] = scr[j][:m]
					load(x[j], &ins[j], &cur[j], tmp)
				}
			}
			if outDirect != nil {
				k(outDirect[i:i+m], x[0], x[1], x[2])
			} else {
				k(outScr[:m], x[0], x[1], x[2])
				store(&dst, &outCur, outScr[:m], tmp)
			}
		}
	})
}

// allDirect reports whether every input is contiguous of type I and dst
// contiguous of type O, so that elementwise converts nothing.
func allDirect[I, O storage](dst operand, ins []operand) bool {
	if _, ok := typed[O](&dst); !ok || !dst.Contiguous() {
		return false
	}
	for j := range ins {
		if _, ok := typed[I](&ins[j]); !ok || !ins[j].Contiguous() {
			return false
		}
	}
	return true
}

// sameShapes checks that every input has dst's shape.
func sameShapes(op string, dst operand, names []string, ins ...operand) error {
	for i, in := range ins {
		if err := needShape(op, names[i], in, dst.Shape); err != nil {
			return err
		}
	}
	return nil
}

// Fill sets dst's elements, in row-major order i, to start + i·step
// computed in float64 and rounded to dst's dtype once.
func (d *Device) Fill(dst hal.View, start, step float64) error {
	const op = "fill"
	o, err := d.operands(op, "dst", dst)
	if err != nil {
		return err
	}
	out := o[0]
	if err := needNoOverlap(op, out); err != nil {
		return err
	}
	d.dispatch()
	if step == 0 && out.Contiguous() {
		// A constant (zeros for gradients, scalars for masks) needs its
		// value rounded once, not once per element through a closure.
		switch out.DType {
		case hal.Float32:
			fillConst[float32](out, start)
		case hal.Float64:
			fillConst[float64](out, start)
		case hal.Int32:
			fillConst[int32](out, start)
		case hal.Int64:
			fillConst[int64](out, start)
		case hal.Float16:
			fillConst[half](out, start)
		}
		return nil
	}
	generate(out, elementGrain, func(i int) float64 { return start + float64(i)*step })
	return nil
}

// fillConst sets every element of the contiguous out to v as stored in T.
func fillConst[T storage](out operand, v float64) {
	var x [1]T
	convert(x[:], []float64{v})
	fillValue(out, x[0])
}

// fillValue sets every element of contiguous out to x, in parallel runs
// filled by doubling copies (fillRun).
func fillValue[T storage](out operand, x T) {
	s := asType[T](out.words)[out.Offset : out.Offset+out.Elements()]
	parallelFor(len(s), elementGrain, func(lo, hi int) { fillRun(s[lo:hi], x) })
}

// generate sets out's elements, in row-major order i, to value(i) rounded
// to out's dtype, in parallel chunks of at least grain elements.
func generate(out operand, grain int, value func(i int) float64) {
	parallelFor(out.Elements(), grain, func(lo, hi int) {
		size := min(block, hi-lo)
		vals, tmp := make([]float64, size), make([]uint64, size)
		c := newCursor(out.layout(), lo)
		for i := lo; i < hi; i += size {
			v := vals[:min(size, hi-i)]
			for j := range v {
				v[j] = value(i + j)
			}
			store(&out, &c, v, tmp)
		}
	})
}

// Copy writes src into dst, converting the dtype. A copy within one dtype
// moves the stored bits untouched; across dtypes every value passes
// through float64, which holds all of them exactly (Int64 only while
// |v| ≤ 2⁵³; larger int64s round to the nearest float64 first), so each
// conversion rounds (or truncates to an integer, saturating) once.
// Int32 ↔ Int64 is exact for every int32.
func (d *Device) Copy(dst, src hal.View) error {
	const op = "copy"
	o, err := d.operands(op, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if err := needShape(op, "src", in, out.Shape); err != nil {
		return err
	}
	if err := needNoOverlap(op, out); err != nil {
		return err
	}
	if err := needInPlace(op, out, in); err != nil {
		return err
	}
	d.dispatch()
	if in.DType == out.DType && copyBroadcastScalar(out, in) {
		return nil
	}
	ins := []operand{in}
	if in.DType.IsInteger() && out.DType.IsInteger() && in.DType != out.DType {
		// Between integers through int64, exactly (int64 to int32
		// saturates).
		elementwise(out, ins, elementGrain, copyKernel[int64])
		return nil
	}
	if in.DType != out.DType {
		elementwise(out, ins, elementGrain, copyKernel[float64])
		return nil
	}
	switch in.DType {
	case hal.Float32:
		elementwise(out, ins, elementGrain, copyKernel[float32])
	case hal.Float64:
		elementwise(out, ins, elementGrain, copyKernel[float64])
	case hal.Int32:
		elementwise(out, ins, elementGrain, copyKernel[int32])
	case hal.Int64:
		elementwise(out, ins, elementGrain, copyKernel[int64])
	case hal.Float16:
		elementwise(out, ins, elementGrain, copyKernel[half])
	}
	return nil
}

func copyKernel[T storage](out, a, _, _ []T) { copy(out, a) }

// copyBroadcastScalar fills the contiguous out with in's one element when
// in is a single value broadcast over every axis (max pooling's backward
// scatters into such a zero), in place of a gather per block and a copy
// of it. It reports whether it did; in and out share a dtype.
func copyBroadcastScalar(out, in operand) bool {
	l := in.layout()
	if l.rank != 1 || l.strides[0] != 0 || l.shape[0] == 0 || !out.Contiguous() {
		return false
	}
	switch in.DType {
	case hal.Float32:
		fillFromScalar[float32](out, in)
	case hal.Float64:
		fillFromScalar[float64](out, in)
	case hal.Int32:
		fillFromScalar[int32](out, in)
	case hal.Int64:
		fillFromScalar[int64](out, in)
	case hal.Float16:
		fillFromScalar[half](out, in)
	default:
		return false
	}
	return true
}

func fillFromScalar[T storage](out, in operand) {
	fillValue(out, asType[T](in.words)[in.Offset])
}

// Where computes dst = cond ≠ 0 ? a : b. cond is loaded in the values'
// compute type, which keeps every nonzero int32 nonzero.
func (d *Device) Where(dst, cond, a, b hal.View) error {
	const op = "where"
	o, err := d.operands(op, "dst cond a b", dst, cond, a, b)
	if err != nil {
		return err
	}
	out, c, x, y := o[0], o[1], o[2], o[3]
	if err := needDType(op, "cond", c, hal.Int32); err != nil {
		return err
	}
	if x.DType != y.DType || out.DType != x.DType {
		return errorf(op, hal.ErrInvalid, "a %s, b %s and dst %s differ in dtype", desc(x.View), desc(y.View), desc(out.View))
	}
	if err := sameShapes(op, out, []string{"cond", "a", "b"}, c, x, y); err != nil {
		return err
	}
	if err := needContiguous(op, "dst", out); err != nil {
		return err
	}
	if err := needInPlace(op, out, c, x, y); err != nil {
		return err
	}
	d.dispatch()
	if whereFast(&out, &c, &x, &y) {
		return nil
	}
	ins := []operand{c, x, y}
	switch x.DType {
	case hal.Float32:
		elementwise(out, ins, elementGrain, where[float32])
	case hal.Float64:
		elementwise(out, ins, elementGrain, where[float64])
	case hal.Int32:
		elementwise(out, ins, elementGrain, where[int32])
	case hal.Int64:
		elementwise(out, ins, elementGrain, where[int64])
	case hal.Float16:
		// Selection needs no arithmetic, so float16 stays in storage
		// form; the int32 mask converts to a nonzero binary16 when nonzero.
		elementwise(out, ins, elementGrain, where[half])
	}
	return nil
}

func where[T storage](out, c, a, b []T) {
	c, a, b = c[:len(out)], a[:len(out)], b[:len(out)]
	var zero T
	for i := range out {
		if c[i] != zero {
			out[i] = a[i]
		} else {
			out[i] = b[i]
		}
	}
}
