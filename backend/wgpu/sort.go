//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// sortShader is the data of shaders/sort.wgsl.
type sortShader struct {
	Mode, Src, Enable string
	Block             int
}

// sortCapabilities declares Sort for the dtypes the device holds (hal's
// kernel table: Int32 and the floats it computes in).
func (d *Device) sortCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilySort)
}

// sortBlock is the pairs one workgroup sorts in workgroup memory: twice
// the workgroup size, a power of two (512 with the usual 256
// invocations).
func (d *Device) sortBlock() int {
	wg := 1 << (bits.Len(uint(d.workgroupSize())) - 1)
	return 2 * wg
}

// Sort sorts each row of src along its last axis; see hal.Device and
// shaders/sort.wgsl. Each row is padded to a power of two P of
// (key, position) pairs in scratch memory and sorted by a bitonic network:
// the stages up to the block size in one "local" dispatch, then for each
// longer stage one "global" dispatch per step of distance ≥ the block and
// one "local" dispatch for the short steps: about log²(P/block)/2 + 2·log(P/block)
// + 3 dispatches, whatever the row count. The position breaks every tie,
// so every sort is stable (hal allows that for stable=false).
func (d *Device) Sort(values, indices, src hal.View, descending, stable bool) error {
	const name = hal.KernelSort
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	ops, err := d.operands(name, values, indices, src)
	if err != nil {
		return err
	}
	vals, idx, in := ops[0], ops[1], ops[2]
	if err := d.supports(name, in.DType); err != nil {
		return err
	}
	rank := len(in.Shape)
	switch {
	case vals.DType != in.DType:
		return fmt.Errorf("webgpu: %s of %v: values are %v: %w", name, in.View, vals.DType, hal.ErrInvalid)
	case idx.DType != hal.Int32:
		return fmt.Errorf("webgpu: %s of %v: indices are %v, want int32: %w", name, in.View, idx.DType, hal.ErrInvalid)
	case rank == 0:
		return fmt.Errorf("webgpu: %s: src %v has no last axis: %w", name, in.View, hal.ErrInvalid)
	case !slices.Equal(vals.Shape, in.Shape) || !slices.Equal(idx.Shape, in.Shape):
		return fmt.Errorf("webgpu: %s: values %v and indices %v must have src %v's shape: %w", name, vals.View, idx.View, in.View, hal.ErrInvalid)
	case !vals.Contiguous() || !idx.Contiguous():
		return fmt.Errorf("webgpu: %s: values %v and indices %v must be contiguous: %w", name, vals.View, idx.View, hal.ErrInvalid)
	}
	if err := independent(name, vals, in, idx); err != nil {
		return err
	}
	if err := independent(name, idx, in); err != nil {
		return err
	}
	n := in.Shape[rank-1]
	if n == 0 || in.Elements() == 0 {
		return nil
	}
	rows := in.Elements() / n
	p := 1 << bits.Len(uint(n-1))
	block := d.sortBlock()
	blk := min(block, p)
	scratch := int64(rows) * int64(p) * 8
	if uint64(scratch) > d.limits.MaxStorageBufferBindingSize || int64(rows)*int64(p) >= 1<<32 {
		return fmt.Errorf("webgpu: %s of %v: %d rows padded to %d need %d bytes of scratch, past the %d a kernel can bind: %w",
			name, in.View, rows, p, scratch, d.limits.MaxStorageBufferBindingSize, hal.ErrTooLarge)
	}
	buf, err := d.Alloc(scratch)
	if err != nil {
		return fmt.Errorf("webgpu: %s of %v: scratch: %w", name, in.View, err)
	}
	// Later uses of the memory are ordered after the passes recorded here.
	defer d.Free(buf)
	pairs := buf.(*device.Buffer).Allocation()

	outer, st := collapse(in.Shape[:rank-1], in.Strides[:rank-1])
	sh := sortShader{Src: wgslType(in.DType), Enable: enableF16(in.DType), Block: block}
	wg := block / 2
	run := func(mode string, threads int, kLo, kHi int, writable int, buffers ...*device.Allocation) error {
		sh.Mode = mode
		k, err := d.rt.Kernel(fmt.Sprintf("sort%+v", sh), len(buffers), writable, func() (string, error) { return render("sort.wgsl", sh) })
		if err != nil {
			return err
		}
		groups := ceilDiv(threads, wg)
		if mode == "local" {
			groups = threads
		}
		x, y, err := d.grid(groups)
		if err != nil {
			return err
		}
		var q params
		q.u32(uint32(rows)).u32(uint32(n)).u32(uint32(p)).u32(x).u32(uint32(kLo)).u32(uint32(kHi)).u32(uint32(blk)).
			u32(b2u(descending)).u32(uint32(in.Offset)).u32(uint32(in.Strides[rank-1])).u32(uint32(len(outer))).u32(0).
			u32(uint32(vals.Offset)).u32(uint32(idx.Offset)).vec8(outer, 1).vec8(st[0], 0)
		d.record(dispatch{k: k, buffers: buffers, params: q, x: x, y: y, z: 1})
		return nil
	}
	fail := func(err error) error { return fmt.Errorf("webgpu: %s of %v: %w", name, in.View, err) }
	if err := run("load", rows*p, 0, 0, 1, pairs, in.alloc); err != nil {
		return fail(err)
	}
	blocks := rows * p / blk
	if err := run("local", blocks, 2, blk, 1, pairs); err != nil {
		return fail(err)
	}
	for k := 2 * blk; k <= p; k *= 2 {
		for j := k / 2; j >= blk; j /= 2 {
			if err := run("global", rows*p/2, k, j, 1, pairs); err != nil {
				return fail(err)
			}
		}
		if err := run("local", blocks, k, k, 1, pairs); err != nil {
			return fail(err)
		}
	}
	if err := run("store", rows*n, 0, 0, 2, vals.alloc, idx.alloc, in.alloc, pairs); err != nil {
		return fail(err)
	}
	return nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
