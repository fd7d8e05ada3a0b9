//go:build cgo || (js && wasm)

package wgpu

import (
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// operands lists the job's views, dst first.
func (j ewJob) operands() []operand {
	out := []operand{j.dst}
	for _, a := range j.args {
		out = append(out, a.o)
	}
	return out
}

// ewChunked runs an elementwise job whose operands reach past one binding
// as pieces of dst's row-major index space, each a box of the merged axes
// whose operands all fit a window (chunk.go). A piece is a run of
// consecutive indices, so an op whose value depends on the index (Fill,
// Random) only shifts its start. Pieces never join a fused group: the
// pending one goes first.
func (d *Device) ewChunked(j ewJob) error {
	strides := [][]int{j.dst.Strides}
	for _, a := range j.args {
		strides = append(strides, a.o.Strides)
	}
	shape, merged := collapse(j.dst.Shape, strides...)
	ops := j.operands()
	views := make([]chunkView, len(ops))
	for i, o := range ops {
		views[i] = viewOf(o, merged[i])
	}
	c := d.newChunker(shape, views)
	if err := c.plan(); err != nil {
		return d.tooLarge(j.op, "no split into windows: "+err.Error(), viewsOf(ops)...)
	}
	d.fuse.flush()
	for _, p := range c.out {
		wins := c.bind(p)
		sub := j
		sub.windowed = true
		sub.dst = pieceOperand(j.dst, p, 0, shape, merged[0], wins)
		sub.args = make([]ewArg, len(j.args))
		for i, a := range j.args {
			a.o = pieceOperand(a.o, p, i+1, shape, merged[i+1], wins)
			sub.args[i] = a
		}
		if j.rebase != nil {
			j.rebase(&sub, p.base)
		}
		if err := sub.run(d); err != nil {
			return err
		}
	}
	return nil
}

// pieceOperand is operand o (view k of the chunker) restricted to piece p
// over the merged axes, rebased into its buffer's window.
func pieceOperand(o operand, p chunkPiece, k int, shape, strides []int, wins []*device.Allocation) operand {
	w := wins[k]
	v := o.View
	v.Shape = p.shape(shape)
	v.Strides = append([]int(nil), strides[p.axis:]...)
	v.Offset = rebase(p.offsets[k], w, o.DType.Size())
	return operand{View: v, alloc: w}
}

// viewsOf lists the operands' views, for errors.
func viewsOf(ops []operand) []hal.View {
	out := make([]hal.View, len(ops))
	for i, o := range ops {
		out[i] = o.View
	}
	return out
}
