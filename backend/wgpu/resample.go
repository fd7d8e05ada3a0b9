//go:build cgo || (js && wasm)

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// resampleCapabilities declares Resample for the float dtypes the device
// holds (it computes).
func (d *Device) resampleCapabilities(c hal.Capabilities) {
	c.Declare(d.floatTypes(), hal.FamilyResample)
}

// Resample applies taps along axis of src into dst; see hal.Device and
// shaders/resample.wgsl. The taps travel in one small buffer uploaded per
// call: the CSR offsets, then the indices, then the weights as float32
// bits. One invocation computes one element of dst; a row has at most
// hal.MaxResampleRow entries, so its loop stays under llvmpipe's limit.
func (d *Device) Resample(dst, src hal.View, axis int, taps hal.ResampleTaps) error {
	const op = hal.KernelResample
	o, err := d.windowOperands(op, dst, src)
	if err != nil {
		return err
	}
	rank := len(src.Shape)
	if axis < 0 || axis >= rank {
		return fmt.Errorf("webgpu: %s: axis %d of src %v: %w", op, axis, src, hal.ErrInvalid)
	}
	want := append([]int(nil), src.Shape...)
	want[axis] = taps.Rows()
	if err := shapeIs(op, "dst", dst, want...); err != nil {
		return err
	}
	if err := taps.Check("webgpu: "+op, src.Shape[axis]); err != nil {
		return err
	}
	n := dst.Elements()
	if n == 0 {
		return nil
	}
	if n >= 1<<31 || src.Elements() >= 1<<31 || 2*len(taps.Index)+len(taps.Offsets) >= 1<<30 {
		return fmt.Errorf("webgpu: %s: dst %v: %w", op, dst, hal.ErrTooLarge)
	}
	words := make([]byte, 0, 4*(len(taps.Offsets)+2*len(taps.Index)))
	for _, v := range taps.Offsets {
		words = binary.LittleEndian.AppendUint32(words, uint32(v))
	}
	for _, v := range taps.Index {
		words = binary.LittleEndian.AppendUint32(words, uint32(v))
	}
	for _, v := range taps.Weight {
		words = binary.LittleEndian.AppendUint32(words, math.Float32bits(float32(v)))
	}
	tb, err := d.Alloc(int64(len(words)))
	if err != nil {
		return fmt.Errorf("webgpu: %s: taps: %w", op, err)
	}
	defer d.Free(tb) // the kernel recorded below is ordered before its reuse
	if err := d.Write(tb, words); err != nil {
		return fmt.Errorf("webgpu: %s: taps: %w", op, err)
	}
	inner := 1
	for _, s := range dst.Shape[axis+1:] {
		inner *= s
	}
	// The fast path reads a contiguous src by arithmetic alone; the
	// general one unravels dst's index over its shape and dots it with
	// src's strides, the axis's stride zeroed (the taps supply it).
	strided := !src.Contiguous()
	data := d.shaderData(dst.DType)
	data["Strided"] = strided
	k, err := d.rt.Kernel(fmt.Sprintf("resample/%s/%t", wgslType(dst.DType), strided), 3, 1, func() (string, error) {
		return render("resample.wgsl", data)
	})
	if err != nil {
		return err
	}
	strides := append([]int(nil), src.Strides...)
	strides[axis] = 0
	indexStart := len(taps.Offsets)
	return d.launch(op, k, n, []*device.Allocation{o[0].alloc, o[1].alloc, tb.(*device.Buffer).Allocation()}, func(p *params) {
		p.u32(uint32(taps.Rows())).u32(uint32(inner)).u32(uint32(src.Shape[axis])).
			u32(uint32(src.Strides[axis])).u32(uint32(src.Offset)).u32(uint32(dst.Offset)).
			u32(uint32(indexStart)).u32(uint32(indexStart+len(taps.Index))).u32(uint32(rank)).u32(0).
			vec8(dst.Shape, 1).vec8(strides, 0)
	})
}
