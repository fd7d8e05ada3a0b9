//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// scanChunk is the elements one invocation scans sequentially: short
// enough that a row of a million elements makes thousands of tasks and
// that no loop nears llvmpipe's 65,535 iterations, long enough that the
// totals one level up are few (a 16M-element row takes three levels).
// Tests lower it to cover the recursion on short rows.
var scanChunk = 256

// scanShader is the data of shaders/scan.wgsl.
type scanShader struct {
	Mode, Op, Src, Dst, Acc, Enable string
	Carry                           bool
}

// scanCapabilities declares the scans for the dtypes the device holds
// (hal's kernel table: Int32 and the floats it computes in; logcumsumexp
// floats only).
func (d *Device) scanCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilyScan)
}

// scanSource is what one level of a scan reads: a strided view's rows
// (outer axes collapsed) or a level's contiguous totals.
type scanSource struct {
	alloc              *device.Allocation
	typ                string
	offset, stride     int
	outer, outerStride []int
}

// Scan computes the inclusive scan op of each row of src along its last
// axis; see hal.Device and shaders/scan.wgsl: chunk totals ("reduce"),
// their scan (the same, one level up, recursively), then each chunk
// scanned from its carry into dst ("scan").
func (d *Device) Scan(op hal.ScanOp, dst, src hal.View) error {
	name := op.Kernel()
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	out, in, n, rows, err := d.lastAxisRows(name, dst, src)
	if err != nil || rows == 0 {
		return err
	}
	rank := len(in.Shape)
	outer, st := collapse(in.Shape[:rank-1], in.Strides[:rank-1])
	acc := "f32"
	if in.DType == hal.Int32 {
		acc = "i32"
	}
	s := scanSource{alloc: in.alloc, typ: wgslType(in.DType), offset: in.Offset, stride: in.Strides[rank-1], outer: outer, outerStride: st[0]}
	if err := d.scanLevel(op, acc, out.alloc, wgslType(out.DType), out.Offset, s, rows, n); err != nil {
		return fmt.Errorf("webgpu: %s of %v: %w", name, in.View, err)
	}
	return nil
}

// scanLevel scans rows of n elements of s into dst (of WGSL type dstType,
// contiguous from dstOffset), recursing on the chunk totals when a row has
// more than one chunk.
func (d *Device) scanLevel(op hal.ScanOp, acc string, dst *device.Allocation, dstType string, dstOffset int, s scanSource, rows, n int) error {
	chunks := ceilDiv(n, scanChunk)
	run := func(sh scanShader, buffers ...*device.Allocation) error {
		sh.Op, sh.Src, sh.Acc = op.String(), s.typ, acc
		sh.Enable = enableF16Types(sh.Src, sh.Dst)
		k, err := d.rt.Kernel(fmt.Sprintf("scan%+v", sh), len(buffers), 1, func() (string, error) { return render("scan.wgsl", sh) })
		if err != nil {
			return err
		}
		x, y, err := d.grid(ceilDiv(rows*chunks, 64))
		if err != nil {
			return err
		}
		var q params
		q.u32(uint32(rows*chunks)).u32(uint32(n)).u32(uint32(chunks)).u32(uint32(scanChunk)).u32(x).
			u32(uint32(s.offset)).u32(uint32(dstOffset)).u32(uint32(s.stride)).u32(uint32(len(s.outer))).u32(0).
			vec8(s.outer, 1).vec8(s.outerStride, 0)
		d.record(dispatch{k: k, buffers: buffers, params: q, x: x, y: y, z: 1})
		return nil
	}
	if chunks == 1 {
		return run(scanShader{Mode: "scan", Dst: dstType}, dst, s.alloc)
	}
	if rows*chunks >= 1<<31 {
		return fmt.Errorf("%d rows of %d chunks: %w", rows, chunks, hal.ErrTooLarge)
	}
	// totals and their scan: rows × chunks of the compute type (4 bytes).
	level := int64(rows) * int64(chunks) * 4
	tb, err := d.Alloc(level)
	if err != nil {
		return fmt.Errorf("chunk totals: %w", err)
	}
	defer d.Free(tb) // later uses are ordered after the passes recorded here
	pb, err := d.Alloc(level)
	if err != nil {
		return fmt.Errorf("chunk prefixes: %w", err)
	}
	defer d.Free(pb)
	totals, prefix := tb.(*device.Buffer).Allocation(), pb.(*device.Buffer).Allocation()
	if err := run(scanShader{Mode: "reduce", Dst: acc}, totals, s.alloc); err != nil {
		return err
	}
	up := scanSource{alloc: totals, typ: acc, stride: 1, outer: []int{rows}, outerStride: []int{chunks}}
	if err := d.scanLevel(op, acc, prefix, acc, 0, up, rows, chunks); err != nil {
		return err
	}
	return run(scanShader{Mode: "scan", Dst: dstType, Carry: true}, dst, s.alloc, prefix)
}
