package graph

import (
	"slices"

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
		next := resampleAxis(dev, t.DType(), out, 2+i, resample.Compute(a))
		if out != x {
			out.Release() // the graph keeps what the backward pass needs
		}
		out = next
	}
	return out
}

// resampleAxis is tensor's resampling of one axis, recorded: one
// IndexSelect of all K taps' positions, a Mul by their weights and a Sum
// over the K taps.
func resampleAxis(dev *tensor.Device, dtype tensor.DType, x *Value, axis int, taps resample.Taps) *Value {
	k, n := len(taps.Index), len(taps.Index[0])
	index := make([]int32, 0, k*n)
	weights := make([]float64, 0, k*n)
	for j := range taps.Index {
		index = append(index, taps.Index[j]...)
		weights = append(weights, taps.Weight[j]...)
	}
	idx := Constant(tensor.FromInt32(dev, index, k*n))
	g := x.IndexSelect(axis, idx)
	idx.Release()
	if k == 1 {
		return g // nearest: every weight is 1
	}
	shape := x.Shape()
	split := slices.Concat(shape[:axis], []int{k, n}, shape[axis+1:])
	gk := g.Reshape(split...)
	wshape := make([]int, len(split)-axis)
	for j := range wshape {
		wshape[j] = 1
	}
	wshape[0], wshape[1] = k, n
	w := Constant(weightTensor(dev, dtype, weights, wshape))
	weighted := Mul(gk, w)
	releaseAllValues(g, gk, w)
	defer weighted.Release()
	return weighted.Sum([]int{axis}, false)
}

// weightTensor uploads tap weights in dtype (float64 as they are, else through
// float32).
func weightTensor(dev *tensor.Device, dtype tensor.DType, w []float64, shape []int) *tensor.Tensor {
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
