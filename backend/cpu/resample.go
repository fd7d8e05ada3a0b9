package cpu

import "github.com/webtensor/webtensor/hal"

// Resample applies taps along axis of src into dst; see hal.Device.
// Float32 and float16 compute in float32, each product and sum rounded as
// float32 arithmetic would (so that a two-tap row is (w₀·x₀) + (w₁·x₁),
// as the composite of Gathers, Muls and Adds it replaces), float64 in
// float64. Rows of dst along the other axes are shared among goroutines.
func (d *Device) Resample(dst, src hal.View, axis int, taps hal.ResampleTaps) error {
	const op = hal.KernelResample
	o, err := d.operands(op, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if err := d.windowOp(op, op, out, in); err != nil {
		return err
	}
	if axis < 0 || axis >= len(in.Shape) {
		return errorf(op, hal.ErrInvalid, "axis %d of src %s", axis, desc(in.View))
	}
	want := append([]int(nil), in.Shape...)
	want[axis] = taps.Rows()
	if err := needShape(op, "dst", out, want); err != nil {
		return err
	}
	if err := taps.Check(op, in.Shape[axis]); err != nil {
		return err
	}
	d.dispatch()
	if out.Elements() == 0 {
		return nil
	}
	if in.DType == hal.Float64 {
		resample(out, in, axis, taps, taps.Weight)
	} else {
		w := make([]float32, len(taps.Weight))
		for i, v := range taps.Weight {
			w[i] = float32(v)
		}
		resample(out, in, axis, taps, w)
	}
	return nil
}

// resample computes out = taps·in along axis in T. The conversion of each
// product rounds it, which keeps the compiler from fusing it with the sum.
func resample[T float32 | float64](out, in operand, axis int, taps hal.ResampleTaps, weight []T) {
	src, off, st := dense[T](&in)
	dst, commit := output[T](&out, false)
	defer commit()
	outerOff := offsets(in.Shape[:axis], st[:axis], off)
	innerOff := offsets(in.Shape[axis+1:], st[axis+1:], 0)
	inner, rows, step := len(innerOff), taps.Rows(), st[axis]
	parallelFor(len(outerOff)*rows, max(1, elementGrain/(inner*4)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			base, j := outerOff[r/rows], r%rows
			row := dst[r*inner : (r+1)*inner]
			first, last := taps.Offsets[j], taps.Offsets[j+1]
			if first == last {
				clear(row)
				continue
			}
			for i, io := range innerOff {
				at := base + io
				acc := T(weight[first] * src[at+int(taps.Index[first])*step])
				for e := first + 1; e < last; e++ {
					acc += T(weight[e] * src[at+int(taps.Index[e])*step])
				}
				row[i] = acc
			}
		}
	})
}

// offsets lists, in row-major order, the element offsets of every
// position of shape with strides, plus base.
func offsets(shape, strides []int, base int) []int {
	out := []int{base}
	for k, n := range shape {
		next := make([]int, 0, len(out)*n)
		for _, o := range out {
			for i := range n {
				next = append(next, o+i*strides[k])
			}
		}
		out = next
	}
	return out
}
