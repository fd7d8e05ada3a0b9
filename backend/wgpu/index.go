//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// Gather computes dst[i] = src[i with axis coordinate index[i]], as
// torch.gather. An out-of-range index makes its element 0 and is reported
// through the fault word at the next Read or Sync.
func (d *Device) Gather(dst, src, index hal.View, axis int) error {
	const op = hal.KernelGather
	o, err := d.operands(op, dst, src, index)
	if err != nil {
		return err
	}
	if err := d.checkIndexing(op, o[0], o[1], o[2], "src", axis); err != nil {
		return err
	}
	if err := contiguousDst(op, "dst", dst); err != nil {
		return err
	}
	if err := shapeIs(op, "index", index, dst.Shape...); err != nil {
		return err
	}
	if dst.Elements() == 0 {
		return nil
	}
	dst, src, index = scalarAsVector(dst), scalarAsVector(src), scalarAsVector(index)
	k, err := d.rt.Kernel("gather/"+wgslType(dst.DType), 4, 2, func() (string, error) {
		return render("gather.wgsl", d.shaderData(dst.DType))
	})
	if err != nil {
		return err
	}
	return d.launch(op, k, dst.Elements(), []*device.Allocation{o[0].alloc, d.rt.FaultWord(), o[1].alloc, o[2].alloc}, func(p *params) {
		p.u32(uint32(len(dst.Shape))).u32(uint32(axis)).u32(uint32(src.Shape[axis])).
			u32(uint32(dst.Offset)).u32(uint32(src.Offset)).u32(uint32(index.Offset)).
			vec8(dst.Shape, 1).vec8(src.Strides, 0).vec8(index.Strides, 0)
	})
}

// ScatterAdd adds src[i] into dst[i with axis coordinate index[i]], as
// torch.Tensor.scatter_add_. Out-of-range indices are skipped and reported
// through the fault word at the next Read or Sync.
func (d *Device) ScatterAdd(dst, index, src hal.View, axis int) error {
	const op = hal.KernelScatterAdd
	o, err := d.operands(op, dst, src, index)
	if err != nil {
		return err
	}
	if err := d.checkIndexing(op, o[0], o[1], o[2], "dst", axis); err != nil {
		return err
	}
	if err := contiguousDst(op, "dst", dst); err != nil {
		return err
	}
	if err := shapeIs(op, "index", index, src.Shape...); err != nil {
		return err
	}
	if src.Elements() == 0 {
		return nil
	}
	dst, src, index = scalarAsVector(dst), scalarAsVector(src), scalarAsVector(index)
	mode := map[hal.DType]string{hal.Float32: "float", hal.Float16: "half", hal.Int32: "int"}[dst.DType]
	k, err := d.rt.Kernel("scatter_add/"+wgslType(dst.DType), 4, 2, func() (string, error) {
		data := d.shaderData(dst.DType)
		data["Mode"] = mode
		return render("scatter.wgsl", data)
	})
	if err != nil {
		return err
	}
	return d.launch(op, k, src.Elements(), []*device.Allocation{o[0].alloc, d.rt.FaultWord(), o[2].alloc, o[1].alloc}, func(p *params) {
		p.u32(uint32(len(src.Shape))).u32(uint32(axis)).u32(uint32(dst.Shape[axis])).
			u32(uint32(dst.Offset)).u32(uint32(src.Offset)).u32(uint32(index.Offset)).
			vec8(src.Shape, 1).vec8(dst.Strides, 0).vec8(src.Strides, 0).vec8(index.Strides, 0)
	})
}

// checkIndexing validates the operands of Gather (dst, src, index; the
// free axis belongs to src) and ScatterAdd (dst, src, index; the free axis
// belongs to dst): open device, supported dtypes, equal ranks, an axis
// in range, the free operand at least as large as the index on every other
// axis (as PyTorch allows), and no aliasing of dst.
func (d *Device) checkIndexing(op string, dst, src, index operand, free string, axis int) error {
	if err := d.open(op); err != nil {
		return err
	}
	if err := sameDType(op, dst.DType, dst.View, src.View); err != nil {
		return err
	}
	if err := d.supports(op, dst.DType); err != nil {
		return err
	}
	if index.DType != hal.Int32 {
		return fmt.Errorf("webgpu: %s: index %v must be int32: %w", op, index.View, hal.ErrInvalid)
	}
	rank := len(index.Shape)
	if len(dst.Shape) != rank || len(src.Shape) != rank {
		return fmt.Errorf("webgpu: %s: dst %v, src %v and index %v must have one rank: %w", op, dst.View, src.View, index.View, hal.ErrInvalid)
	}
	// A 0-d operand has the single axis 0 of size 1, as in PyTorch.
	if axis < 0 || axis >= max(rank, 1) {
		return fmt.Errorf("webgpu: %s: axis %d out of range for rank %d: %w", op, axis, rank, hal.ErrInvalid)
	}
	big := src
	if free == "dst" {
		big = dst
	}
	for a := range rank {
		if a != axis && big.Shape[a] < index.Shape[a] {
			return fmt.Errorf("webgpu: %s: %s %v is smaller than index %v along axis %d: %w", op, free, big.View, index.View, a, hal.ErrInvalid)
		}
	}
	return independent(op, dst, src, index)
}

// scalarAsVector gives a 0-d view one axis of size 1, so that the kernels
// always have an axis to index.
func scalarAsVector(v hal.View) hal.View {
	if len(v.Shape) == 0 {
		v.Shape, v.Strides = []int{1}, []int{0}
	}
	return v
}
