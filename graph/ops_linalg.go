package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// The linalg ops of package tensor (Solve, Inv, Cholesky, QR, SVD,
// SVDVals, Eigh, EigvalsH), recorded, with PyTorch's gradients
// (rules_linalg.go).
//
// An op with several results (QR, SVD, Eigh) is recorded as one node whose
// result packs them, flattened, along its last axis; the results the
// caller gets are recorded views of it (Slice and Reshape), so that the
// gradients of all of them meet in the one rule, as PyTorch's backward of
// the op sees gU, gS and gVh together. A result the loss does not use
// contributes a zero gradient.

// Solve is tensor.Solve, recorded: X with A·X = B. A vector b ([.., n])
// and broadcast batch axes are recorded as a reshape and a broadcast, so
// their gradients are summed back to b's and a's shapes.
func Solve(a, b *Value) *Value {
	const op = "Solve"
	live(op, a, b)
	xs, done := autocast(op, a, b)
	defer done()
	a, b = xs[0], xs[1]
	t := live(op, a, b)
	ta, tb := t[0], t[1]
	if ta.Rank() < 2 || tb.Rank() < 1 {
		// tensor.Solve reports the misuse with its shapes.
		return record(op, tensor.Solve(ta, tb), []*Value{a, b}, nil)
	}
	as, bs := ta.Shape(), tb.Shape()
	vector := len(bs) == 1 || len(bs) == len(as)-1 && slices.Equal(bs, as[:len(as)-1])
	bm := b
	if vector {
		bm = b.Unsqueeze(-1)
		defer bm.Release()
	}
	ms := bm.Shape()
	if len(ms) < 2 {
		return record(op, tensor.Solve(ta, tb), []*Value{a, b}, nil)
	}
	batch := broadcastBatch(as[:len(as)-2], ms[:len(ms)-2])
	am := a
	if batch != nil {
		am = a.BroadcastTo(append(slices.Clone(batch), as[len(as)-2:]...)...)
		defer am.Release()
		if !slices.Equal(ms[:len(ms)-2], batch) {
			b2 := bm.BroadcastTo(append(slices.Clone(batch), ms[len(ms)-2:]...)...)
			defer b2.Release()
			bm = b2
		}
	}
	x := record(op, tensor.Solve(am.t, bm.t), []*Value{am, bm}, nil)
	if !vector {
		return x
	}
	defer x.Release()
	return x.Squeeze(-1)
}

// broadcastBatch is the broadcast of two batch shapes, or nil when they
// are equal; shapes that do not broadcast are left to tensor.Solve.
func broadcastBatch(a, b []int) []int {
	if slices.Equal(a, b) {
		return nil
	}
	r := max(len(a), len(b))
	out := make([]int, r)
	for i := range out {
		da, db := 1, 1
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil
		}
	}
	return out
}

// Inv is tensor.Inv, recorded.
func Inv(a *Value) *Value {
	const op = "Inv"
	live(op, a)
	xs, done := autocast(op, a)
	defer done()
	a = xs[0]
	t := live(op, a)
	return record(op, tensor.Inv(t[0]), []*Value{a}, nil)
}

// Cholesky is tensor.Cholesky, recorded. Its gradient is PyTorch's, the
// symmetric matrix that treats a as symmetric: differentiate a function
// of a symmetrized input ((A + Aᵀ)/2) to compare it with finite
// differences of the triangle the factorization reads.
func Cholesky(a *Value, upper bool) *Value {
	const op = "Cholesky"
	live(op, a)
	xs, done := autocast(op, a)
	defer done()
	a = xs[0]
	t := live(op, a)
	return record(op, tensor.Cholesky(t[0], upper), []*Value{a}, choleskyAttrs{upper})
}

type choleskyAttrs struct{ upper bool }

// QR is tensor.QR, recorded, with PyTorch's gradient (for a full-rank a);
// a complete QR with m > n is not differentiable, as in PyTorch: its
// Backward fails naming the op and shape.
func QR(a *Value, mode tensor.QRMode) (q, r *Value) {
	const op = "QR"
	live(op, a)
	xs, done := autocast(op, a)
	defer done()
	a = xs[0]
	t := live(op, a)
	tq, tr := tensor.QR(t[0], mode)
	vs := packResults(t[0].Rank()-2, tq, tr).record(op, a)
	return vs[0], vs[1]
}

// SVD is tensor.SVD, recorded. Its gradient is PyTorch's: it holds for
// distinct nonzero singular values (the gradient of the singular vectors
// divides by S_j² − S_i² and, for a non-square a, by S; with repeated or
// zero singular values it is infinite or NaN, as PyTorch's, unless the
// loss depends on the vectors only through gauge-invariant quantities).
// With fullMatrices, as in PyTorch, the vectors beyond min(m, n) get no
// gradient.
func SVD(a *Value, fullMatrices bool) (u, s, vh *Value) {
	const op = "SVD"
	live(op, a)
	xs, done := autocast(op, a)
	defer done()
	a = xs[0]
	t := live(op, a)
	tu, ts, tvh := tensor.SVD(t[0], fullMatrices)
	vs := packResults(t[0].Rank()-2, tu, ts, tvh).record(op, a)
	return vs[0], vs[1], vs[2]
}

// SVDVals is tensor.SVDVals, recorded: it runs SVD, whose vectors the
// gradient needs (as PyTorch's svdvals does while recording).
func SVDVals(a *Value) *Value {
	u, s, vh := SVD(a, false)
	u.Release()
	vh.Release()
	return s
}

// Eigh is tensor.Eigh, recorded. Its gradient is PyTorch's, for distinct
// eigenvalues (the eigenvectors' part divides by w_j − w_i; with repeated
// eigenvalues it is infinite or NaN unless the loss depends on the
// eigenvectors only through gauge-invariant quantities), and symmetric:
// differentiate a function of a symmetrized input to compare it with
// finite differences of the triangle the op reads.
func Eigh(a *Value, upper bool) (w, v *Value) {
	const op = "Eigh"
	live(op, a)
	xs, done := autocast(op, a)
	defer done()
	a = xs[0]
	t := live(op, a)
	tw, tv := tensor.Eigh(t[0], upper)
	vs := packResults(t[0].Rank()-2, tw, tv).record(op, a)
	return vs[0], vs[1]
}

// EigvalsH is tensor.EigvalsH, recorded: it runs Eigh, whose vectors the
// gradient needs.
func EigvalsH(a *Value, upper bool) *Value {
	w, v := Eigh(a, upper)
	v.Release()
	return w
}

// packed is the results of a multi-result op flattened and concatenated
// along a last axis, and their shapes; it is the node's attrs.
type packed struct {
	t      *tensor.Tensor // the packing (owned by the node once recorded)
	batch  []int
	shapes [][]int // each result's shape without the batch axes
}

// packResults packs results (which it releases) whose leading batchRank
// axes are a's batch axes.
func packResults(batchRank int, results ...*tensor.Tensor) packed {
	defer func() {
		for _, r := range results {
			r.Release()
		}
	}()
	p := packed{batch: results[0].Shape()[:batchRank]}
	flat := make([]*tensor.Tensor, len(results))
	for i, r := range results {
		s := r.Shape()
		p.shapes = append(p.shapes, s[batchRank:])
		flat[i] = r.Reshape(append(slices.Clone(p.batch), -1)...)
	}
	p.t = tensor.Concat(-1, flat...)
	for _, f := range flat {
		f.Release()
	}
	return p
}

// record records the packing as op's node and returns its results.
func (p packed) record(op string, a *Value) []*Value {
	layout := p
	layout.t = nil // the node owns the tensor as its result
	x := record(op, p.t, []*Value{a}, layout)
	defer x.Release()
	return layout.unpack(x)
}

// unpack returns x's pieces (x is a packing of p's layout, a result or
// its gradient) in p's shapes, as recorded views.
func (p packed) unpack(x *Value) []*Value {
	out := make([]*Value, len(p.shapes))
	start := 0
	for i, s := range p.shapes {
		n := 1
		for _, d := range s {
			n *= d
		}
		piece := x.Slice(-1, start, start+n, 1)
		out[i] = piece.Reshape(append(slices.Clone(p.batch), s...)...)
		piece.Release()
		start += n
	}
	return out
}
