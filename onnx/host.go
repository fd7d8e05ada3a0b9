package onnx

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// maxHostElements bounds the shapes the importer accepts, and
// maxComputedElements every tensor it computes on the host (folded
// constants, shape arithmetic, ConstantOfShape, Range, Expand), so a
// hostile file or shape cannot ask for unbounded memory or time.
// Initializers may be larger: their size is checked against the bytes
// present in the file before anything is allocated.
const (
	maxHostElements     = 1 << 31
	maxComputedElements = 1 << 22
)

// hostTensor is a value held on the host: an initializer, a constant, or
// the result of shape arithmetic. Floating-point element types keep their
// values in f, integer and bool types in i (as int64, ONNX's index type),
// so shape arithmetic never needs a 64-bit integer on a device.
type hostTensor struct {
	elem  onnxpb.TensorProto_DataType
	shape []int
	f     []float64
	i     []int64
}

func isFloatType(t onnxpb.TensorProto_DataType) bool {
	switch t {
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		return true
	}
	return false
}

func isIntType(t onnxpb.TensorProto_DataType) bool {
	switch t {
	case onnxpb.TensorProto_INT64, onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT16, onnxpb.TensorProto_INT8,
		onnxpb.TensorProto_UINT8, onnxpb.TensorProto_UINT16, onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64,
		onnxpb.TensorProto_BOOL:
		return true
	}
	return false
}

func (h *hostTensor) isFloat() bool { return isFloatType(h.elem) }

func (h *hostTensor) len() int {
	if h.isFloat() {
		return len(h.f)
	}
	return len(h.i)
}

// computedCount is elemCount for a tensor computed on the host from ins:
// it may be as large as the largest input (a folded weight) or
// maxComputedElements, not more.
func computedCount(shape []int, ins ...*hostTensor) (int, error) {
	n, err := elemCount(shape)
	limit := maxComputedElements
	for _, in := range ins {
		if in != nil {
			limit = max(limit, in.len())
		}
	}
	if err == nil && n > limit {
		err = fmt.Errorf("shape %v: %d elements is more than the importer computes on the host (%d)", shape, n, limit)
	}
	return n, err
}

// elemCount returns the product of shape, or an error when a dimension is
// negative or the product exceeds maxHostElements.
func elemCount(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", shape)
		}
		if d != 0 && n > maxHostElements/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, maxHostElements)
		}
		n *= d
	}
	return n, nil
}

func newHostInts(elem onnxpb.TensorProto_DataType, shape []int, v []int64) *hostTensor {
	return &hostTensor{elem: elem, shape: shape, i: v}
}

func newHostFloats(elem onnxpb.TensorProto_DataType, shape []int, v []float64) *hostTensor {
	return &hostTensor{elem: elem, shape: shape, f: v}
}

// float returns element k as float64 whatever the element type.
func (h *hostTensor) float(k int) float64 {
	if h.isFloat() {
		return h.f[k]
	}
	return float64(h.i[k])
}

// int returns element k as int64 whatever the element type.
func (h *hostTensor) int(k int) int64 {
	if h.isFloat() {
		return int64(h.f[k])
	}
	return h.i[k]
}

// ints returns all elements as int64.
func (h *hostTensor) ints() []int64 {
	out := make([]int64, h.len())
	for k := range out {
		out[k] = h.int(k)
	}
	return out
}

// intsAsInt returns all elements as int (shape and axis arguments).
func (h *hostTensor) intsAsInt() []int {
	out := make([]int, h.len())
	for k := range out {
		out[k] = int(h.int(k))
	}
	return out
}

// int32s narrows an integer tensor to int32 for a device, failing on the
// first element that does not fit.
func (h *hostTensor) int32s(what string) ([]int32, error) {
	out := make([]int32, h.len())
	for k := range out {
		v := h.int(k)
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, fmt.Errorf("%s: element %d = %d overflows int32 (devices hold integer tensors as Int32)", what, k, v)
		}
		out[k] = int32(v)
	}
	return out, nil
}

// cast converts h to element type to, as ONNX's Cast: floats to integers
// truncate toward zero, anything to bool is x ≠ 0.
func (h *hostTensor) cast(to onnxpb.TensorProto_DataType) (*hostTensor, error) {
	n := h.len()
	switch {
	case isFloatType(to):
		out := make([]float64, n)
		for k := range out {
			out[k] = h.float(k)
		}
		if to == onnxpb.TensorProto_FLOAT {
			for k, v := range out {
				out[k] = float64(float32(v))
			}
		}
		return newHostFloats(to, h.shape, out), nil
	case isIntType(to):
		out := make([]int64, n)
		for k := range out {
			if to == onnxpb.TensorProto_BOOL {
				if h.float(k) != 0 {
					out[k] = 1
				}
				continue
			}
			if h.isFloat() {
				f := math.Trunc(h.f[k])
				if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
					return nil, fmt.Errorf("Cast: %v does not fit in %v", h.f[k], to)
				}
				out[k] = int64(f)
			} else {
				out[k] = h.i[k]
			}
		}
		return newHostInts(to, h.shape, out), nil
	}
	return nil, fmt.Errorf("Cast to %v is not supported", to)
}

// broadcastShapes returns NumPy's broadcast of the shapes.
func broadcastShapes(shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for k := range out {
		out[k] = 1
	}
	for _, s := range shapes {
		for k, d := range s {
			o := rank - len(s) + k
			switch {
			case d == out[o] || d == 1:
			case out[o] == 1:
				out[o] = d
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast", shapes)
			}
		}
	}
	return out, nil
}

// broadcastIndex maps a flat index of out to the flat index of a tensor of
// shape s broadcast to out.
func broadcastIndex(out, s []int, flat int) int {
	idx, stride := 0, 1
	for k := len(out) - 1; k >= 0; k-- {
		c := flat % out[k]
		flat /= out[k]
		sk := k - (len(out) - len(s))
		if sk >= 0 {
			if s[sk] != 1 {
				idx += c * stride
			}
			stride *= s[sk]
		}
	}
	return idx
}

// strides returns the contiguous strides of shape.
func stridesOf(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = acc
		acc *= shape[k]
	}
	return st
}

// normAxis resolves a possibly negative axis against rank.
func normAxis(axis, rank int) (int, error) {
	if axis < -rank || axis >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += rank
	}
	return axis, nil
}
