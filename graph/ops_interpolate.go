package graph

import (
	"github.com/webtensor/webtensor/internal/resample"
	"github.com/webtensor/webtensor/tensor"
)

// Interpolate is tensor.Interpolate, recorded as its parts: per spatial
// axis, a Gather (IndexSelect) per tap and a weighted sum, so the gradient
// is each tap's weighted gradient scattered back (ScatterAdd), the same
// linear map transposed.
func Interpolate(x *Value, o tensor.InterpolateOptions) *Value {
	const op = "Interpolate"
	t := live(op, x)[0]
	if !t.DType().IsFloat() {
		misuse(op, "need a float tensor, got %v", t)
	}
	axes, err := resample.Resolve(t.Shape(), o.Size, o.ScaleFactor, string(o.Mode), o.AlignCorners, o.RecomputeScaleFactor, t.DType() == tensor.Float64)
	if err != nil {
		misuse(op, "%v (input %v %v on %s)", err, t.Shape(), t.DType(), t.Device().Name())
	}
	dev := t.Device()
	out := x
	for i, a := range axes {
		axis := 2 + i
		taps := resample.Compute(a)
		n := a.Out
		wshape := make([]int, x.Rank()-axis)
		for j := range wshape {
			wshape[j] = 1
		}
		wshape[0] = n
		var sum *Value
		for k := range taps.Index {
			idx := Constant(tensor.FromInt32(dev, taps.Index[k], n))
			term := out.IndexSelect(axis, idx)
			idx.Release()
			if a.Mode != resample.Nearest {
				w := Constant(weights(dev, t.DType(), taps.Weight[k], wshape))
				weighted := Mul(term, w)
				releaseAllValues(term, w)
				term = weighted
			}
			if sum == nil {
				sum = term
			} else {
				next := Add(sum, term)
				releaseAllValues(sum, term)
				sum = next
			}
		}
		// The graph keeps what the backward pass needs.
		if out != x {
			out.Release()
		}
		out = sum
	}
	return out
}

// weights uploads tap weights in dtype (float64 as they are, else through
// float32).
func weights(dev *tensor.Device, dtype tensor.DType, w []float64, shape []int) *tensor.Tensor {
	if dtype == tensor.Float64 {
		return tensor.FromFloat64(dev, w, shape...)
	}
	f := make([]float32, len(w))
	for i, v := range w {
		f[i] = float32(v)
	}
	t := tensor.FromFloat32(dev, f, shape...)
	if dtype == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(dtype)
}
