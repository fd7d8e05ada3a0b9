package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// Binary computes dst = a op b elementwise, broadcasting through stride-0
// axes. float16 is computed in float32, which rounds +, −, · and / exactly
// as binary16 arithmetic would.
func (d *Device) Binary(op hal.BinaryOp, dst, a, b hal.View) error {
	name := "binary " + op.String()
	o, err := d.operands(name, "dst a b", dst, a, b)
	if err != nil {
		return err
	}
	out, x, y := o[0], o[1], o[2]
	if x.DType != y.DType {
		return errorf(name, hal.ErrInvalid, "a %s and b %s differ in dtype", desc(x.View), desc(y.View))
	}
	if !d.caps.Supports(op.Kernel(), x.DType) {
		return unsupportedDType(name, x.DType)
	}
	want := x.DType
	if op.IsComparison() {
		want = hal.Int32
	}
	if err := needDType(name, "dst", out, want); err != nil {
		return err
	}
	if !sameShape(x.Shape, out.Shape) || !sameShape(y.Shape, out.Shape) {
		return errorf(name, hal.ErrInvalid, "a %s and b %s do not match dst %v", desc(x.View), desc(y.View), out.Shape)
	}
	if err := needContiguous(name, "dst", out); err != nil {
		return err
	}
	if err := needInPlace(name, out, x, y); err != nil {
		return err
	}
	d.dispatch()
	if op.IsComparison() && compareFastAny(op, &out, &x, &y) {
		return nil
	}
	ins := []operand{x, y}
	grain := elementGrain
	if op == hal.Pow {
		grain = mathGrain
	}
	switch x.DType {
	case hal.Float32, hal.Float16:
		binaryFloat[float32](op, out, ins, grain)
	case hal.Float64:
		binaryFloat[float64](op, out, ins, grain)
	case hal.Int32:
		if op.IsComparison() {
			elementwise(out, ins, grain, compare[int32](op))
		} else {
			elementwise(out, ins, grain, arith[int32](op))
		}
	case hal.Int64:
		if op.IsComparison() {
			elementwise(out, ins, grain, compare[int64](op))
		} else {
			elementwise(out, ins, grain, arith[int64](op))
		}
	}
	return nil
}

func binaryFloat[T float32 | float64](op hal.BinaryOp, out operand, ins []operand, grain int) {
	if _, f32 := any(T(0)).(float32); f32 && hasSIMD && (op == hal.Add || op == hal.Sub || op == hal.Mul || op == hal.Div || op == hal.ReLUGrad) {
		elementwise(out, ins, grain, func(out, a, b, _ []float32) { binaryF32(op, out, a, b) })
		return
	}
	switch op {
	case hal.Div:
		elementwise(out, ins, grain, func(out, a, b, _ []T) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] / b[i]
			}
		})
	case hal.Pow:
		elementwise(out, ins, grain, zip(func(a, b T) T { return T(math.Pow(float64(a), float64(b))) }))
	default:
		if op.IsComparison() {
			elementwise(out, ins, grain, compare[T](op))
		} else {
			elementwise(out, ins, grain, arith[T](op))
		}
	}
}

// arith returns the kernel of an arithmetic op every compute type runs.
// The hot ops are written out as loops: through a function value the
// compiler cannot inline them, and a call per element made them 3× slower.
// The builtin max and min propagate NaN and order −0 below +0.
func arith[T compute](op hal.BinaryOp) kernel[T, T] {
	switch op {
	case hal.Add:
		return func(out, a, b, _ []T) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] + b[i]
			}
		}
	case hal.Sub:
		return func(out, a, b, _ []T) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] - b[i]
			}
		}
	case hal.Mul:
		return func(out, a, b, _ []T) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] * b[i]
			}
		}
	case hal.ReLUGrad:
		return reluGrad[T]
	case hal.Maximum:
		return zip(func(a, b T) T { return max(a, b) })
	case hal.Minimum:
		return zip(func(a, b T) T { return min(a, b) })
	}
	panic("cpu: binary " + op.String() + " is not arithmetic")
}

// reluGrad sets out = b ≤ 0 ? 0 : a (a NaN b passes a, as torch's
// threshold_backward), the one pass that replaces a comparison and a
// Where in ReLU's backward. The zero is +0, as the Where's constant was.
func reluGrad[T compute](out, a, b, _ []T) {
	a, b = a[:len(out)], b[:len(out)]
	for i := range out {
		v := a[i]
		if b[i] <= 0 {
			v = 0
		}
		out[i] = v
	}
}

// compare returns the kernel of a comparison, writing 1 or 0. Every
// comparison with NaN is false except Ne, as IEEE 754 says.
func compare[T compute](op hal.BinaryOp) kernel[T, int32] {
	switch op {
	case hal.Eq:
		return test(func(a, b T) bool { return a == b })
	case hal.Ne:
		return test(func(a, b T) bool { return a != b })
	case hal.Lt:
		return test(func(a, b T) bool { return a < b })
	case hal.Le:
		return test(func(a, b T) bool { return a <= b })
	case hal.Gt:
		return test(func(a, b T) bool { return a > b })
	case hal.Ge:
		return test(func(a, b T) bool { return a >= b })
	}
	panic("cpu: binary " + op.String() + " is not a comparison")
}

func zip[T compute](f func(a, b T) T) kernel[T, T] {
	return func(out, a, b, _ []T) {
		a, b = a[:len(out)], b[:len(out)]
		for i := range out {
			out[i] = f(a[i], b[i])
		}
	}
}

func test[T compute](f func(a, b T) bool) kernel[T, int32] {
	return func(out []int32, a, b, _ []T) {
		a, b = a[:len(out)], b[:len(out)]
		for i := range out {
			if f(a[i], b[i]) {
				out[i] = 1
			} else {
				out[i] = 0
			}
		}
	}
}
