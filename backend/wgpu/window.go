//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// The indexing and windowed kernels live in index.go (Gather, ScatterAdd),
// conv.go (Im2Col, Col2Im), pool2d.go (Pool2D) and sample.go (GridSample);
// this file holds what they share.

// windowCapabilities declares indexing and windowed (conv, pool, sampling)
// kernels at the dtypes of hal's kernel table that the device holds: Int32
// for the indexing kernels, which only move or add values, and the float
// dtypes for every one.
func (d *Device) windowCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilyGather, hal.FamilyScatterAdd, hal.FamilyIm2Col, hal.FamilyCol2Im,
		hal.FamilyPool2D, hal.FamilyGridSample, hal.FamilyConv2D)
}

// softwareLoopLimit is the most loop iterations a kernel may run per
// invocation on a software adapter: llvmpipe silently stops a shader's
// loops after 65,535 iterations in total, leaving a wrong result and no
// error. A little headroom stays for the kernels' short setup loops.
const softwareLoopLimit = 65000

// loopBudget refuses a kernel whose invocations would loop more than
// softwareLoopLimit times on a software adapter; hardware adapters have no
// such limit.
func (d *Device) loopBudget(op string, iterations int64, what string) error {
	if d.info.Type != hal.AdapterCPU || iterations <= softwareLoopLimit {
		return nil
	}
	return fmt.Errorf("webgpu: %s: %s needs %d loop iterations per invocation; the software adapter %s stops loops after 65,535, so the limit is %d: %w",
		op, what, iterations, d.info.Name, softwareLoopLimit, hal.ErrUnsupported)
}

// launch records a kernel with one invocation per element of n over a 2-D
// grid: the parameters start with n and the grid's row stride (the words
// every kernel here declares first), then whatever fill appends.
func (d *Device) launch(op string, k *device.Kernel, n int, buffers []*device.Allocation, fill func(p *params)) error {
	wg := d.workgroupSize()
	x, y, err := d.grid((n + wg - 1) / wg)
	if err != nil {
		return fmt.Errorf("webgpu: %s: %w", op, err)
	}
	var p params
	p.u32(uint32(n)).u32(x * uint32(wg))
	fill(&p)
	d.record(dispatch{k: k, buffers: buffers, params: p, x: x, y: y, z: 1})
	return nil
}

// open fails if the device is closed: kernels recorded after Close would
// vanish silently.
func (d *Device) open(op string) error {
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", op, hal.ErrClosed)
	}
	return d.rt.LostErr(op)
}

// contiguousDst fails unless dst is row-major, as every kernel here
// requires of its outputs. An empty view addresses nothing, so its strides
// do not matter (hal.View.Contiguous judges them even then).
func contiguousDst(op, name string, v hal.View) error {
	if v.Elements() > 0 && !v.Contiguous() {
		return fmt.Errorf("webgpu: %s: %s %v must be contiguous: %w", op, name, v, hal.ErrInvalid)
	}
	return nil
}

// sameDType fails unless every view has want's dtype.
func sameDType(op string, want hal.DType, vs ...hal.View) error {
	for _, v := range vs {
		if v.DType != want {
			return fmt.Errorf("webgpu: %s: operands %v and %v must share a dtype: %w", op, vs[0], v, hal.ErrInvalid)
		}
	}
	return nil
}

// rank4 fails unless v has four axes (NCHW or the grid's NHW2).
func rank4(op, name string, v hal.View) error {
	if len(v.Shape) != 4 {
		return fmt.Errorf("webgpu: %s: %s %v must have 4 axes: %w", op, name, v, hal.ErrInvalid)
	}
	return nil
}

// shapeIs fails unless v's shape is want.
func shapeIs(op, name string, v hal.View, want ...int) error {
	if !slices.Equal(v.Shape, want) {
		return fmt.Errorf("webgpu: %s: %s %v must have shape %v: %w", op, name, v, want, hal.ErrInvalid)
	}
	return nil
}

// checkWindow validates a window's geometry: positive kernel, stride and
// dilation, non-negative padding and output size, and every extent the
// kernels compute in 32 bits small enough to fit.
func checkWindow(op string, w hal.Window, h, wd int) error {
	bad := w.KH < 1 || w.KW < 1 || w.StrideH < 1 || w.StrideW < 1 || w.DilationH < 1 || w.DilationW < 1 ||
		w.PadH < 0 || w.PadW < 0 || w.OutH < 0 || w.OutW < 0
	if bad {
		return fmt.Errorf("webgpu: %s: window %+v: kernel, stride and dilation must be ≥ 1, padding and output ≥ 0: %w", op, w, hal.ErrInvalid)
	}
	// The kernels form out·stride + k·dilation, size + 2·pad and the tap
	// count KH·KW in 32 bits.
	reach := func(out, stride, k, dil, pad, size int) bool {
		return int64(out)*int64(stride)+int64(k)*int64(dil) < math.MaxInt32 &&
			int64(size)+2*int64(pad) < math.MaxInt32
	}
	if !reach(w.OutH, w.StrideH, w.KH, w.DilationH, w.PadH, h) || !reach(w.OutW, w.StrideW, w.KW, w.DilationW, w.PadW, wd) ||
		int64(w.KH)*int64(w.KW) >= math.MaxInt32 {
		return fmt.Errorf("webgpu: %s: window %+v over %d×%d reaches past 2³¹: %w", op, w, h, wd, hal.ErrUnsupported)
	}
	return nil
}

// windowParams appends the geometry words the windowed kernels declare
// after n and row_stride: channels, height, width, then kh, kw, out_h,
// out_w, stride, pad and dilation (shaders/common.wgsl "window_params").
func (p *params) windowParams(c, h, wd int, w hal.Window) *params {
	return p.u32(uint32(c)).u32(uint32(h)).u32(uint32(wd)).
		u32(uint32(w.KH)).u32(uint32(w.KW)).u32(uint32(w.OutH)).u32(uint32(w.OutW)).
		u32(uint32(w.StrideH)).u32(uint32(w.StrideW)).u32(uint32(w.PadH)).u32(uint32(w.PadW)).
		u32(uint32(w.DilationH)).u32(uint32(w.DilationW))
}

// vec4 appends four words (a vec4<u32>) after aligning to 16 bytes.
func (p *params) vec4(v []int) *params {
	p.align(16)
	for i := range 4 {
		if i < len(v) {
			p.u32(uint32(v[i]))
		} else {
			p.u32(0)
		}
	}
	return p
}

// shaderData is what every template here takes: the value type, the f16
// directive when it is needed, and the workgroup size.
func (d *Device) shaderData(t hal.DType) map[string]any {
	return map[string]any{"T": wgslType(t), "Enable": enableF16(t), "WorkgroupSize": d.workgroupSize()}
}
