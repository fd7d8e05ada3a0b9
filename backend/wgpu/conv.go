//go:build cgo || (js && wasm)

package wgpu

import (
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// Im2Col unfolds NCHW images src [N, C, H, W] into columns dst
// [N, C·KH·KW, OH·OW], as torch.nn.functional.unfold.
func (d *Device) Im2Col(dst, src hal.View, w hal.Window) error {
	const op = hal.KernelIm2Col
	o, err := d.windowOperands(op, dst, src)
	if err != nil {
		return err
	}
	if err := rank4(op, "src", src); err != nil {
		return err
	}
	n, c, h, wd := src.Shape[0], src.Shape[1], src.Shape[2], src.Shape[3]
	if err := checkWindow(op, w, h, wd); err != nil {
		return err
	}
	if err := shapeIs(op, "dst", dst, n, c*w.KH*w.KW, w.OutH*w.OutW); err != nil {
		return err
	}
	if dst.Elements() == 0 {
		return nil
	}
	// One invocation per run of four columns (see im2col.wgsl).
	runs := dst.Elements() / max(w.OutW, 1) * ((w.OutW + 3) / 4)
	k, err := d.rt.Kernel("im2col/"+wgslType(dst.DType), 2, 1, func() (string, error) {
		return render("im2col.wgsl", d.shaderData(dst.DType))
	})
	if err != nil {
		return err
	}
	return d.launch(op, k, runs, []*device.Allocation{o[0].alloc, o[1].alloc}, func(p *params) {
		p.windowParams(c, h, wd, w).u32(uint32(dst.Offset)).u32(uint32(src.Offset)).vec4(src.Strides)
	})
}

// Col2Im folds columns src [N, C·KH·KW, OH·OW] back into images dst
// [N, C, H, W], summing overlaps, as torch.nn.functional.fold. Each pixel
// gathers its own sum, so the result is deterministic.
func (d *Device) Col2Im(dst, src hal.View, w hal.Window) error {
	const op = hal.KernelCol2Im
	o, err := d.windowOperands(op, dst, src)
	if err != nil {
		return err
	}
	if err := rank4(op, "dst", dst); err != nil {
		return err
	}
	n, c, h, wd := dst.Shape[0], dst.Shape[1], dst.Shape[2], dst.Shape[3]
	if err := checkWindow(op, w, h, wd); err != nil {
		return err
	}
	if err := shapeIs(op, "src", src, n, c*w.KH*w.KW, w.OutH*w.OutW); err != nil {
		return err
	}
	// The row loop runs KH times and the column loop KW times per row.
	if err := d.loopBudget(op, int64(w.KH)+int64(w.KH)*int64(w.KW), "a "+windowSize(w)+" kernel"); err != nil {
		return err
	}
	if dst.Elements() == 0 {
		return nil
	}
	k, err := d.rt.Kernel("col2im/"+wgslType(dst.DType), 2, 1, func() (string, error) {
		return render("col2im.wgsl", d.shaderData(dst.DType))
	})
	if err != nil {
		return err
	}
	return d.launch(op, k, dst.Elements(), []*device.Allocation{o[0].alloc, o[1].alloc}, func(p *params) {
		p.windowParams(c, h, wd, w).u32(uint32(dst.Offset)).u32(uint32(src.Offset)).vec4(src.Strides)
	})
}

// windowOperands validates dst and src of a windowed float kernel: an open
// device, a dtype the kernel runs, one dtype, a contiguous dst that shares
// no buffer with src.
func (d *Device) windowOperands(op string, dst, src hal.View) ([]operand, error) {
	if err := d.open(op); err != nil {
		return nil, err
	}
	o, err := d.operands(op, dst, src)
	if err != nil {
		return nil, err
	}
	if err := sameDType(op, dst.DType, dst, src); err != nil {
		return nil, err
	}
	if err := d.supports(op, dst.DType); err != nil {
		return nil, err
	}
	if err := contiguousDst(op, "dst", dst); err != nil {
		return nil, err
	}
	if err := independent(op, o[0], o[1]); err != nil {
		return nil, err
	}
	return o, nil
}
