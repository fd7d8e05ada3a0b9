//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"maps"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// operand is a view checked against this device: its buffer is live and
// ours, and everything the view reaches lies inside the bound range.
type operand struct {
	hal.View
	alloc *device.Allocation
}

// operand validates v as an argument of op.
func (d *Device) operand(op string, v hal.View) (operand, error) {
	if err := v.Check(); err != nil {
		return operand{}, fmt.Errorf("webgpu: %s: %w", op, err)
	}
	if v.DType == hal.Float64 {
		return operand{}, fmt.Errorf("webgpu: %s: %v: WGSL has no float64: %w", op, v.DType, hal.ErrUnsupported)
	}
	if v.DType == hal.Float16 && !d.rt.HasF16() {
		return operand{}, fmt.Errorf("webgpu: %s: float16 needs the shader-f16 feature, which %s lacks: %w", op, d.info.Name, hal.ErrUnsupported)
	}
	b, err := d.rt.Own(op, v.Buf, 0)
	if err != nil {
		return operand{}, err
	}
	if d.rt.Closed() {
		return operand{}, fmt.Errorf("webgpu: %s on closed device: %w", op, hal.ErrClosed)
	}
	if err := d.rt.LostErr(op); err != nil {
		return operand{}, err
	}
	end := (uint64(v.Offset) + uint64(v.Span())) * uint64(v.DType.Size())
	if end > d.rt.BindSize(b.Allocation()) {
		// Elementwise ops, Reduce and MatMul take such views in windows
		// (chunk.go); other kernels fail with hal.ErrTooLarge.
		return operand{}, fmt.Errorf("webgpu: %s on %s: view %v reaches byte %d, past the %d bytes a kernel can bind (maxStorageBufferBindingSize): %w",
			op, d.info.Name, v, end, d.rt.BindSize(b.Allocation()), errBeyondBinding)
	}
	return operand{View: v, alloc: b.Allocation()}, nil
}

// operands validates several views.
func (d *Device) operands(op string, vs ...hal.View) ([]operand, error) {
	out := make([]operand, len(vs))
	for i, v := range vs {
		o, err := d.operand(op, v)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// wgslType is the WGSL scalar type that stores dtype t.
func wgslType(t hal.DType) string {
	switch t {
	case hal.Int32:
		return "i32"
	case hal.Float16:
		return "f16"
	}
	return "f32"
}

// floatTypes is the set of float dtypes this device computes in.
func (d *Device) floatTypes() hal.DTypeSet {
	if d.rt.HasF16() {
		return hal.SetOf(hal.Float32, hal.Float16)
	}
	return hal.SetOf(hal.Float32)
}

// numericTypes adds Int32 to the float dtypes.
func (d *Device) numericTypes() hal.DTypeSet { return d.floatTypes() | hal.SetOf(hal.Int32) }

// supports reports an ErrUnsupported error unless the device declares
// kernel for dtype t.
func (d *Device) supports(kernel string, t hal.DType) error {
	if d.caps.Supports(kernel, t) {
		return nil
	}
	return fmt.Errorf("webgpu: %s: %v on %s: %w", kernel, t, d.info.Name, hal.ErrUnsupported)
}

// Capabilities lists the kernels and dtypes this device runs. The caller
// gets its own copy.
func (d *Device) Capabilities() hal.Capabilities { return maps.Clone(d.caps) }

// declareCapabilities collects what each kernel family declares; Open
// calls it once, as the set depends only on the device's features.
func (d *Device) declareCapabilities() hal.Capabilities {
	c := hal.Capabilities{}
	d.elementwiseCapabilities(c)
	d.reduceCapabilities(c)
	d.softmaxCapabilities(c)
	d.layerNormCapabilities(c)
	d.windowCapabilities(c)
	d.stepCapabilities(c)
	d.sortCapabilities(c)
	d.scanCapabilities(c)
	d.resampleCapabilities(c)
	return c
}

// independent fails unless dst shares no buffer with the inputs, as every
// non-elementwise kernel requires.
func independent(op string, dst operand, inputs ...operand) error {
	for _, in := range inputs {
		if in.alloc == dst.alloc {
			return fmt.Errorf("webgpu: %s: the destination shares a buffer with an input: %w", op, hal.ErrInvalid)
		}
	}
	return nil
}

// enableF16 is the WGSL directive a kernel over any of the dtypes needs.
func enableF16(ts ...hal.DType) string {
	for _, t := range ts {
		if t == hal.Float16 {
			return "enable f16;"
		}
	}
	return ""
}

// lastAxisRows checks the operands of a kernel that maps each row of src
// along its last axis to the same row of dst (Softmax, Scan): a dtype the
// device runs, dst of src's dtype and shape, contiguous and apart from
// src. It returns the operands, the row length n and the number of rows;
// rows is 0 when there is nothing to compute.
func (d *Device) lastAxisRows(name string, dst, src hal.View) (out, in operand, n, rows int, err error) {
	ops, err := d.operands(name, dst, src)
	if err != nil {
		return out, in, 0, 0, err
	}
	out, in = ops[0], ops[1]
	if err := d.supports(name, in.DType); err != nil {
		return out, in, 0, 0, err
	}
	rank := len(in.Shape)
	switch {
	case out.DType != in.DType:
		err = fmt.Errorf("webgpu: %s of %v: dst is %v: %w", name, in.View, out.DType, hal.ErrInvalid)
	case rank == 0:
		err = fmt.Errorf("webgpu: %s: src %v has no last axis: %w", name, in.View, hal.ErrInvalid)
	case !slices.Equal(out.Shape, in.Shape):
		err = fmt.Errorf("webgpu: %s: dst %v and src %v differ in shape: %w", name, out.View, in.View, hal.ErrInvalid)
	case !out.Contiguous():
		err = fmt.Errorf("webgpu: %s: dst %v is not contiguous: %w", name, out.View, hal.ErrInvalid)
	default:
		err = independent(name, out, in)
	}
	if err != nil {
		return out, in, 0, 0, err
	}
	n = in.Shape[rank-1]
	if n == 0 || out.Elements() == 0 {
		return out, in, n, 0, nil
	}
	return out, in, n, out.Elements() / n, nil
}
