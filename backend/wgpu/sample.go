//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// GridSample samples NCHW src bilinearly at grid [N, OH, OW, 2] into dst
// [N, C, OH, OW], as torch.nn.functional.grid_sample(mode="bilinear").
func (d *Device) GridSample(dst, src, grid hal.View, padding hal.GridPadding, alignCorners bool) error {
	const op = hal.KernelGridSample
	if padding != hal.GridZeros && padding != hal.GridBorder {
		return fmt.Errorf("webgpu: %s: padding %v: %w", op, padding, hal.ErrUnsupported)
	}
	o, err := d.windowOperands(op, dst, src)
	if err != nil {
		return err
	}
	g, err := d.operand(op, grid)
	if err != nil {
		return err
	}
	if err := sameDType(op, dst.DType, dst, grid); err != nil {
		return err
	}
	if err := independent(op, o[0], g); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		v    hal.View
	}{{"src", src}, {"dst", dst}, {"grid", grid}} {
		if err := rank4(op, v.name, v.v); err != nil {
			return err
		}
	}
	n, c, h, w := src.Shape[0], src.Shape[1], src.Shape[2], src.Shape[3]
	oh, ow := dst.Shape[2], dst.Shape[3]
	if err := shapeIs(op, "dst", dst, n, c, oh, ow); err != nil {
		return err
	}
	if err := shapeIs(op, "grid", grid, n, oh, ow, 2); err != nil {
		return err
	}
	if dst.Elements() == 0 {
		return nil
	}
	k, err := d.rt.Kernel("grid_sample/"+wgslType(dst.DType), 3, 1, func() (string, error) {
		return render("grid_sample.wgsl", d.shaderData(dst.DType))
	})
	if err != nil {
		return err
	}
	flag := func(b bool) uint32 {
		if b {
			return 1
		}
		return 0
	}
	return d.launch(op, k, dst.Elements(), []*device.Allocation{o[0].alloc, o[1].alloc, g.alloc}, func(p *params) {
		p.u32(uint32(c)).u32(uint32(h)).u32(uint32(w)).u32(uint32(oh)).u32(uint32(ow)).
			u32(flag(padding == hal.GridBorder)).u32(flag(alignCorners)).
			u32(uint32(dst.Offset)).u32(uint32(src.Offset)).u32(uint32(grid.Offset)).
			vec4(src.Strides).vec4(grid.Strides)
	})
}
