//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// reduceChunked runs a reduction whose source or destination reaches past
// one binding. The pieces are boxes of the source's kept axes followed by
// its reduced ones (chunk.go):
//   - a piece of whole rows is an ordinary reduction of those rows into
//     their (consecutive) destination elements;
//   - a row that does not fit one window splits into pieces of
//     consecutive elements, each folded into one partial (the same words a
//     multi-pass reduction leaves between passes: a value, or the (value,
//     index) and (max, Σexp) pairs of arg- and logsumexp-reductions) in a
//     scratch buffer, and a last pass folds the row's partials into its
//     destination element. Every op combines exactly as it does across
//     passes; argmax and argmin get each piece's first index added
//     (reduceSource.indexBase), so ties still go to the first index.
func (d *Device) reduceChunked(op hal.ReduceOp, s reduceSource, rows, n int, out, in operand, reduced int) error {
	name := op.Kernel()
	sh := d.newReduceShader(op, in.DType)
	kept := len(s.outer)
	shape := slices.Concat(s.outer, s.inner)
	srcStrides := slices.Concat(s.outerStrides, s.innerStrides)
	dstStrides := make([]int, len(shape)) // 0 along the reduced axes
	step := 1
	for a := kept - 1; a >= 0; a-- {
		dstStrides[a], step = step, step*s.outer[a]
	}
	views := []chunkView{viewOf(out, dstStrides)}
	if n > 0 {
		views = append(views, viewOf(in, srcStrides))
	} else {
		// Nothing is read: the pieces split the destination only.
		shape, dstStrides = s.outer, dstStrides[:kept]
		views[0].strides = dstStrides
	}
	c := d.newChunker(shape, views)
	if err := c.plan(); err != nil {
		return d.tooLarge(name, fmt.Sprintf("over %d axes: no split into windows: %v", reduced, err), out.View, in.View)
	}
	d.fuse.flush()
	fail := func(err error) error {
		return fmt.Errorf("webgpu: %s of %v over %d axes, in windows: %w", name, in.View, reduced, err)
	}
	for i := 0; i < len(c.out); {
		p := c.out[i]
		wins := c.bind(p)
		dstWin := wins[0]
		src := reduceSource{alloc: in.alloc.Origin(), dtype: s.dtype, inner: s.inner, innerStrides: s.innerStrides}
		if n > 0 {
			src.alloc = wins[1]
			src.offset = rebase(p.offsets[1], src.alloc, in.DType.Size())
		}
		dst := func(rows int) operand {
			v := hal.View{Buf: out.Buf, DType: out.DType, Offset: rebase(p.offsets[0], dstWin, out.DType.Size()), Shape: []int{rows}, Strides: []int{1}}
			return operand{View: v, alloc: dstWin}
		}
		if p.axis < kept || len(shape) == 0 {
			// Whole rows.
			ps := p.shape(shape)
			src.outer = ps[:max(kept-p.axis, 0)]
			src.outerStrides = srcStrides[min(p.axis, kept):kept]
			r := hal.View{Shape: src.outer}.Elements()
			if err := d.reduceRows(sh, src, r, n, dst(r), 1, 0); err != nil {
				return fail(err)
			}
			i++
			continue
		}
		// Pieces of one row: those that follow p share its row.
		row := p.base / int64(n)
		last := i + 1
		for last < len(c.out) && c.out[last].axis >= kept && c.out[last].base/int64(n) == row {
			last++
		}
		if err := d.reduceRowPieces(sh, c, c.out[i:last], shape, srcStrides, kept, n, src, in, dst(1)); err != nil {
			return fail(err)
		}
		i = last
	}
	return nil
}

// reduceRowPieces folds the pieces of one row into one partial each, then
// the partials into dst.
func (d *Device) reduceRowPieces(sh reduceShader, c *chunker, pieces []chunkPiece, shape, srcStrides []int, kept, n int,
	src reduceSource, in operand, dst operand) error {
	// Each partial gets a slot of its own, so that each is bound at an
	// aligned offset.
	slot := c.align
	scratch, err := d.Alloc(int64(len(pieces)) * slot)
	if err != nil {
		return fmt.Errorf("partials: %w", err)
	}
	defer d.Free(scratch) // later uses are ordered after these passes
	part := scratch.(*device.Buffer).Allocation()
	for q, p := range pieces {
		wins := c.bind(p)
		piece := src
		piece.alloc = wins[1]
		piece.offset = rebase(p.offsets[1], piece.alloc, in.DType.Size())
		piece.outer, piece.outerStrides = nil, nil
		piece.inner = p.shape(shape)
		piece.innerStrides = srcStrides[p.axis:]
		piece.indexBase = int(p.base % int64(n))
		target := operand{alloc: part.Window(int64(q)*slot, slot)}
		if err := d.reduceRowsTo(sh, piece, 1, hal.View{Shape: piece.inner}.Elements(), target, true, 1, 0); err != nil {
			return err
		}
	}
	partials := reduceSource{alloc: part, inner: []int{len(pieces)}, innerStrides: []int{int(slot / 4)}}
	return d.reduceRows(sh, partials, 1, len(pieces), dst, 1, 0)
}
