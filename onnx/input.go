package onnx

import (
	"math/rand/v2"
	"strings"

	"github.com/webtensor/webtensor/tensor"
)

// RandomInput makes an input of v's shape on dev, each open dimension
// set to batch: N(0, 1) float32s for a floating input, and Int32 values
// in [0, intMax) for an integer one (token ids, indices), drawn from r.
// Benchmarks and cmd/onnxrun feed models with it.
func (v ValueInfo) RandomInput(dev *tensor.Device, batch int, r *rand.Rand, intMax int) *tensor.Tensor {
	shape := make([]int, len(v.Shape))
	n := 1
	for k, d := range v.Shape {
		if d < 0 {
			d = batch
		}
		shape[k] = d
		n *= d
	}
	if !strings.Contains(v.ElemType, "FLOAT") && v.ElemType != "DOUBLE" {
		ints := make([]int32, n)
		for k := range ints {
			ints[k] = int32(r.IntN(max(intMax, 1)))
		}
		return tensor.FromInt32(dev, ints, shape...)
	}
	floats := make([]float32, n)
	for k := range floats {
		floats[k] = float32(r.NormFloat64())
	}
	return tensor.FromFloat32(dev, floats, shape...)
}
