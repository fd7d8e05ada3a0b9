//go:build cgo || (js && wasm)

package wgpu

import (
	"errors"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// matmulChunked runs a product whose operands reach past one binding. The
// pieces are boxes of the batch axes followed by M (chunk.go): each covers
// some batches, or some rows of one batch, of a and dst, with the whole of
// b's matrices, and runs as an ordinary product of its sub-views. When
// even one row of a with b's whole matrix does not fit a window, K is cut
// into slabs (a's columns and b's rows k0..k1) taken one after another,
// the first with beta and the rest accumulating into dst (beta 1), as the
// kernels' own K passes do. A row of dst or of b wider than a window
// cannot be split this way: hal.ErrTooLarge. Pieces bypass the fusion
// engine, so no epilogue joins them.
func (d *Device) matmulChunked(g *gemm) error {
	out, x, y := g.out, g.x, g.y
	r := len(out.Shape)
	nb := len(g.batchShape)
	shape := append(slices.Clone(g.batchShape), g.m)
	dstBatch := make([]int, nb)
	step := g.m * g.n
	for a := nb - 1; a >= 0; a-- {
		dstBatch[a], step = step, step*g.batchShape[a]
	}
	aStrides := append(slices.Clone(g.batchStrides[0]), x.Strides[r-2])
	bStrides := append(slices.Clone(g.batchStrides[1]), 0)
	dstStrides := append(dstBatch, g.n)

	// views are the chunker's operands for slabs of kc from k0: dst, then
	// a and b unless the slab is empty.
	views := func(k0, kc int) []chunkView {
		v := []chunkView{viewOf(out, dstStrides)}
		v[0].tail = g.n - 1
		if kc > 0 {
			a, b := viewOf(x, aStrides), viewOf(y, bStrides)
			a.offset += k0 * x.Strides[r-1]
			a.tail = (kc - 1) * x.Strides[r-1]
			b.offset += k0 * y.Strides[r-2]
			b.tail = (kc-1)*y.Strides[r-2] + (g.n-1)*y.Strides[r-1]
			v = append(v, a, b)
		}
		return v
	}
	// The widest slab whose pieces all fit.
	kc := g.k
	var c *chunker
	for {
		c = d.newChunker(shape, views(0, kc))
		err := c.plan()
		if err == nil {
			break
		}
		if !errors.Is(err, errNoFit) || kc <= 1 {
			why := "no split into windows: " + err.Error()
			if errors.Is(err, errNoFit) {
				why = "one row of dst or of b is wider than a window"
			}
			return d.tooLarge(hal.KernelMatMul, why, x.View, y.View, out.View)
		}
		kc = ceilDiv(kc, 2)
	}
	d.fuse.flush()
	beta := g.beta
	for k0 := 0; k0 == 0 || k0 < g.k; k0 += kc {
		cur := min(kc, g.k-k0)
		if k0 > 0 {
			c = d.newChunker(shape, views(k0, cur))
			if err := c.plan(); err != nil {
				// A narrower last slab fits wherever a full one did.
				return d.tooLarge(hal.KernelMatMul, err.Error(), x.View, y.View, out.View)
			}
		}
		for _, p := range c.out {
			if err := g.piece(c, p, shape, aStrides, bStrides, cur, beta); err != nil {
				return err
			}
		}
		beta = 1
		if g.k == 0 {
			break
		}
	}
	return nil
}

// piece runs the product of piece p of a slab of kc columns of a.
func (g *gemm) piece(c *chunker, p chunkPiece, shape, aStrides, bStrides []int, kc int, beta float64) error {
	r := len(g.out.Shape)
	nb := len(g.batchShape)
	wins := c.bind(p)
	ps := p.shape(shape)
	batch := ps[:len(ps)-1]
	mc := ps[len(ps)-1]
	from := min(p.axis, nb)
	aBatch, bBatch := aStrides[from:nb], bStrides[from:nb]
	sub := func(o operand, k int, shape, strides []int) operand {
		if k >= len(p.offsets) {
			// An empty slab (K = 0) reads nothing of a and b.
			return operand{View: hal.View{Buf: o.Buf, DType: o.DType, Shape: shape, Strides: strides}, alloc: o.alloc}
		}
		w := wins[k]
		v := hal.View{Buf: o.Buf, DType: o.DType, Offset: rebase(p.offsets[k], w, o.DType.Size()), Shape: shape, Strides: strides}
		return operand{View: v, alloc: w}
	}
	out := sub(g.out, 0, slices.Concat(batch, []int{mc, g.n}), hal.RowMajorStrides(slices.Concat(batch, []int{mc, g.n})))
	x := sub(g.x, 1, slices.Concat(batch, []int{mc, kc}), slices.Concat(aBatch, []int{g.x.Strides[r-2], g.x.Strides[r-1]}))
	y := sub(g.y, 2, slices.Concat(batch, []int{kc, g.n}), slices.Concat(bBatch, []int{g.y.Strides[r-2], g.y.Strides[r-1]}))
	h := &gemm{d: g.d, out: out, x: x, y: y, m: mc, k: kc, n: g.n, alpha: g.alpha, beta: beta, shapes: g.shapes,
		producer: func(run func(epi *epilogue, s sink) error) error { return run(nil, sink{d: g.d}) }}
	h.batchShape, h.batchStrides = collapse(batch, aBatch, bBatch)
	h.batch = hal.View{Shape: h.batchShape}.Elements()
	return h.run(h.plan())
}
