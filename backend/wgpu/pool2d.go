//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// Pool2D pools NCHW src into dst [N, C, OH, OW] (the output size comes
// from dst), as torch.nn.functional.max_pool2d (with indices) and
// avg_pool2d. PyTorch's average pooling has no dilation; here a dilated
// window averages its taps, dividing by the taps inside the padded input
// or the input (as the CPU backend does).
func (d *Device) Pool2D(op hal.PoolOp, dst, indices, src hal.View, w hal.Window, countIncludePad bool) error {
	name := op.Kernel()
	if op != hal.PoolMax && op != hal.PoolAvg {
		return fmt.Errorf("webgpu: pool2d: unknown pooling %v: %w", op, hal.ErrInvalid)
	}
	o, err := d.windowOperands(name, dst, src)
	if err != nil {
		return err
	}
	if err := rank4(name, "src", src); err != nil {
		return err
	}
	if err := rank4(name, "dst", dst); err != nil {
		return err
	}
	n, c, h, wd := src.Shape[0], src.Shape[1], src.Shape[2], src.Shape[3]
	oh, ow := dst.Shape[2], dst.Shape[3]
	if err := shapeIs(name, "dst", dst, n, c, oh, ow); err != nil {
		return err
	}
	// The window's OutH and OutW may be left 0; if set they must agree.
	if (w.OutH != 0 && w.OutH != oh) || (w.OutW != 0 && w.OutW != ow) {
		return fmt.Errorf("webgpu: %s: window output %d×%d disagrees with dst %v: %w", name, w.OutH, w.OutW, dst, hal.ErrInvalid)
	}
	w.OutH, w.OutW = oh, ow
	if err := checkWindow(name, w, h, wd); err != nil {
		return err
	}
	buffers := []*device.Allocation{o[0].alloc}
	if op == hal.PoolMax {
		io, err := d.operand(name, indices)
		if err != nil {
			return err
		}
		if indices.DType != hal.Int32 {
			return fmt.Errorf("webgpu: %s: indices %v must be int32: %w", name, indices, hal.ErrInvalid)
		}
		if err := contiguousDst(name, "indices", indices); err != nil {
			return err
		}
		if err := shapeIs(name, "indices", indices, dst.Shape...); err != nil {
			return err
		}
		if err := independent(name, io, o[0], o[1]); err != nil {
			return err
		}
		buffers = append(buffers, io.alloc)
	} else {
		if indices.Buf != nil {
			return fmt.Errorf("webgpu: %s: indices must be the zero View: %w", name, hal.ErrInvalid)
		}
	}
	if err := d.loopBudget(name, int64(w.KH)+int64(w.KH)*int64(w.KW), "a "+windowSize(w)+" window"); err != nil {
		return err
	}
	if dst.Elements() == 0 {
		return nil
	}
	buffers = append(buffers, o[1].alloc)
	k, err := d.rt.Kernel(fmt.Sprintf("pool2d/%v/%s", op, wgslType(dst.DType)), len(buffers), len(buffers)-1, func() (string, error) {
		data := d.shaderData(dst.DType)
		data["Max"] = op == hal.PoolMax
		return render("pool2d.wgsl", data)
	})
	if err != nil {
		return err
	}
	include := uint32(0)
	if countIncludePad {
		include = 1
	}
	return d.launch(name, k, dst.Elements(), buffers, func(p *params) {
		p.windowParams(c, h, wd, w).
			u32(include).u32(uint32(dst.Offset)).u32(uint32(indices.Offset)).u32(uint32(src.Offset)).
			vec4(src.Strides)
	})
}

// windowSize formats a window's kernel size for error messages.
func windowSize(w hal.Window) string { return fmt.Sprintf("%d×%d", w.KH, w.KW) }
