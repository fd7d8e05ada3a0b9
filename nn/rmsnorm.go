package nn

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// RMSNorm scales its input by the reciprocal root mean square over the
// trailing Shape axes, as torch.nn.RMSNorm (PyTorch 2.4; 1.13 has none):
//
//	y = x / √(mean(x², trailing axes) + eps) · weight
//
// It is composed of graph ops (square, mean, rsqrt, multiply), so its
// gradients come from the graph engine.
type RMSNorm struct {
	Weight *graph.Value // of Shape; nil for elementwise_affine=False
	Shape  []int
	// Eps is added to the mean square. Zero stands for PyTorch's
	// eps=None: the machine epsilon of the input's dtype
	// (torch.finfo(dtype).eps: 2⁻²³ for float32, 2⁻⁵² for float64,
	// 2⁻¹⁰ for float16).
	Eps float64
	mode
}

// NewRMSNorm returns an RMSNorm over the trailing axes shape with
// PyTorch's arguments (normalized_shape, eps, elementwise_affine); eps 0
// is PyTorch's default eps=None (see Eps). The weight starts at 1.
func NewRMSNorm(dev *tensor.Device, shape []int, eps float64, elementwiseAffine bool) *RMSNorm {
	if len(shape) == 0 {
		misuse("NewRMSNorm", "empty normalized shape")
	}
	for _, d := range shape {
		if d <= 0 {
			misuse("NewRMSNorm", "normalized shape %v must be positive", shape)
		}
	}
	if !(eps >= 0) {
		misuse("NewRMSNorm", "eps %v must not be negative", eps)
	}
	r := &RMSNorm{Shape: slices.Clone(shape), Eps: eps, mode: mode{true}}
	if elementwiseAffine {
		r.Weight = fullParam(dev, 1, shape...)
	}
	return r
}

// Forward normalizes x, whose shape must end in Shape.
func (r *RMSNorm) Forward(x *graph.Value) *graph.Value {
	xs := x.Shape()
	k := len(r.Shape)
	if len(xs) < k || !slices.Equal(xs[len(xs)-k:], r.Shape) {
		misuse("RMSNorm", "input %v does not end with normalized shape %v", xs, r.Shape)
	}
	eps := r.Eps
	if eps == 0 {
		eps = machineEpsilon(x.DType())
	}
	dims := make([]int, k)
	for i := range dims {
		dims[i] = len(xs) - k + i
	}
	sq := x.Square()
	meanSq := sq.Mean(dims, true)
	sq.Release()
	shifted := meanSq.AddScalar(eps)
	meanSq.Release()
	inv := shifted.Rsqrt()
	shifted.Release()
	y := x.Mul(inv)
	inv.Release()
	if r.Weight == nil {
		return y
	}
	defer y.Release()
	return y.Mul(r.Weight)
}

// machineEpsilon is torch.finfo(dt).eps: the gap between 1 and the next
// representable number.
func machineEpsilon(dt tensor.DType) float64 {
	switch dt {
	case tensor.Float64:
		return math.Ldexp(1, -52)
	case tensor.Float16:
		return math.Ldexp(1, -10)
	default:
		return math.Ldexp(1, -23)
	}
}

// Parameters returns "weight".
func (r *RMSNorm) Parameters() []Named { return named("weight", r.Weight) }

// Buffers returns nothing.
func (r *RMSNorm) Buffers() []Named { return nil }
