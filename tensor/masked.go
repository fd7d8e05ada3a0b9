package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// MaskedFill returns a copy of t with value wherever mask (an Int32 mask,
// nonzero is true; see Masks) is set, as torch.Tensor.masked_fill. The
// mask broadcasts to t's shape (not the other way round); value may be NaN
// or ±Inf for a float t, and must fit an integer t's dtype.
func (t *Tensor) MaskedFill(mask *Tensor, value float64) *Tensor {
	const op = "MaskedFill"
	t.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(t), func() *Tensor {
		checkMask(op, t, mask)
		checkOp(op, t.dev, t.dtype)
		shape := broadcastShapes(op, mask.shape, t.shape)
		if !slices.Equal(shape, t.shape) {
			misuse(op, "mask of shape %v does not broadcast to the tensor's shape %v (%v on %s)", mask.shape, t.shape, t.dtype, t.dev.Name())
		}
		fill := full(op, t.dev, t.dtype, value, nil)
		defer fill.Release()
		return whereBroadcast(op, mask, fill, t, shape)
	}, &t, &mask)
}

// MaskedSelect returns, as a 1-D tensor, the elements of t where mask is
// set, in row-major order, as torch.masked_select; t and mask broadcast
// against each other. The result's length depends on the data, so
// MaskedSelect reads the mask back to the host once (waiting for the
// device) to find the selected positions, uploads them as an index and
// gathers on the device.
func (t *Tensor) MaskedSelect(mask *Tensor) *Tensor {
	const op = "MaskedSelect"
	t.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(t, mask), func() *Tensor {
		checkMask(op, t, mask)
		checkOp(op, t.dev, t.dtype)
		shape := broadcastShapes(op, mask.shape, t.shape)
		idx := maskIndex(op, mask, shape)
		x := t.BroadcastTo(shape...)
		flat := x.Reshape(-1)
		defer releaseAll(idx, x, flat)
		return flat.indexSelect(op, 0, idx)
	}, &t, &mask)
}

// maskIndex returns the row-major positions (Int32, 1-D, on mask's
// device, uploaded without placement) of the set elements of mask
// broadcast to shape. It reads the mask back to the host once.
func maskIndex(op string, mask *Tensor, shape []int) *Tensor {
	m := mask.BroadcastTo(shape...)
	defer m.Release()
	bits, err := m.Int32s()
	if err != nil {
		panic(&Error{Op: op, Msg: "reading the mask of shape " + formatShapes([][]int{mask.shape}), Err: err})
	}
	var idx []int32
	for i, v := range bits {
		if v != 0 {
			idx = append(idx, int32(i))
		}
	}
	if idx == nil {
		idx = []int32{}
	}
	return fromHost("FromInt32", mask.dev, Int32, sliceBytes(idx), len(idx), []int{len(idx)})
}

// checkMask checks a mask operand: Int32, on t's device.
func checkMask(op string, t, mask *Tensor) {
	if mask == nil {
		misuse(op, "nil mask for %v", t)
	}
	mask.checkLive(op)
	sameDevice(op, t, mask)
	if mask.dtype != Int32 {
		misuse(op, "mask must be Int32 (nonzero is true; comparisons make one), got %v of shape %v for a %v tensor of shape %v on %s",
			mask.dtype, mask.shape, t.dtype, t.shape, t.dev.Name())
	}
}

var _ = registerOps(
	Op{Name: "MaskedFill", Family: FamilyIndex, DTypes: kernelTypes(hal.KernelWhere), Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelFill, t), k(hal.KernelWhere, t))
	}},
	Op{Name: "MaskedSelect", Family: FamilyIndex, DTypes: kernelTypes(hal.KernelGather), Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelCopy, t), k(hal.KernelGather, t))
	}},
)
