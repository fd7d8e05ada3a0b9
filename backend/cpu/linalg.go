package cpu

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/webtensor/webtensor/hal"
)

// linalgGrain is the number of multiply-adds a worker must get before the
// matrices of a batch are shared among goroutines.
const linalgGrain = 1 << 15

// Linalg runs a solve, inverse or decomposition on each matrix of a batch;
// see hal.Device and hal.LinalgOp. The factorizations are gonum's LAPACK
// (lapack64, row-major), in float64: Float32 matrices are widened on the
// way in and rounded once on the way out, so a float32 result is as
// accurate as its rounding. A matrix on which LAPACK reports a failure
// fails the call with a *hal.LinalgError naming the first such batch
// element; the other matrices are still computed.
func (d *Device) Linalg(op hal.LinalgOp, dst []hal.View, a, b hal.View, args hal.LinalgArgs) error {
	key := op.Kernel()
	views := append([]hal.View{a, b}, dst...)
	names := "a b?"
	for range dst {
		names += " dst"
	}
	o, err := d.operands(key, names, views...)
	if err != nil {
		return err
	}
	in, rhs, outs := o[0], o[1], o[2:]
	if op >= hal.LinalgOp(len(hal.LinalgOps)) {
		return errorf(key, hal.ErrUnsupported, "unknown linalg op %d", int(op))
	}
	if !d.caps.Supports(key, in.DType) {
		return unsupportedDType(key, in.DType)
	}
	var bShape []int
	if rhs.Buf != nil {
		if err := needDType(key, "b", rhs, in.DType); err != nil {
			return err
		}
		bShape = rhs.Shape
	}
	shapes, err := op.Outputs(in.Shape, bShape, args, len(outs))
	if err != nil {
		return errorf(key, hal.ErrInvalid, "%v", err)
	}
	for i, out := range outs {
		if err := needDType(key, "dst", out, in.DType); err != nil {
			return err
		}
		if err := needShape(key, "dst", out, shapes[i]); err != nil {
			return err
		}
		if err := needContiguous(key, "dst", out); err != nil {
			return err
		}
		if err := needDistinct(key, out, in, rhs); err != nil {
			return err
		}
	}
	d.dispatch()
	m, n := in.Shape[len(in.Shape)-2], in.Shape[len(in.Shape)-1]
	batch := 1
	for _, s := range in.Shape[:len(in.Shape)-2] {
		batch *= s
	}
	if batch == 0 {
		return nil
	}
	x := gatherFloat64(&in)
	var y []float64
	if rhs.Buf != nil {
		y = gatherFloat64(&rhs)
	}
	results := make([][]float64, len(outs))
	for i, out := range outs {
		results[i] = make([]float64, out.Elements())
	}
	job := linalgJob{op: op, args: args, m: m, n: n, rank: len(in.Shape), a: x, b: y, outs: results, shapes: shapes}
	failures := make([]*hal.LinalgError, batch)
	cost := max(1, m*n*min(m, n))
	parallelFor(batch, max(1, linalgGrain/cost), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if order, err := job.run(i); err != nil {
				failures[i] = &hal.LinalgError{Kernel: key, Batch: i, Order: order, Err: err}
			}
		}
	})
	for i := range outs {
		storeAll(&outs[i], results[i])
	}
	for _, f := range failures {
		if f != nil {
			return f
		}
	}
	return nil
}

// gatherFloat64 is o's elements in row-major order, as float64.
func gatherFloat64(o *operand) []float64 {
	data := make([]float64, o.Elements())
	c := newCursor(o.layout(), 0)
	tmp := make([]uint64, block)
	for k := 0; k < len(data); k += block {
		load(data[k:min(k+block, len(data))], o, &c, tmp)
	}
	return data
}

// linalgJob is one Linalg call over row-major float64 copies of its
// operands and outputs.
type linalgJob struct {
	op     hal.LinalgOp
	args   hal.LinalgArgs
	m, n   int // a's matrices are m×n
	rank   int // a's rank, that of the outputs that are matrices
	a, b   []float64
	outs   [][]float64
	shapes [][]int
}

// matrix returns the i-th matrix of data, whose matrices are rows×cols,
// as a blas64.General over a copy when copied, else over data itself.
func matrix(data []float64, i, rows, cols int, copied bool) blas64.General {
	s := data[i*rows*cols : (i+1)*rows*cols]
	if copied {
		s = slices.Clone(s)
	}
	return blas64.General{Rows: rows, Cols: cols, Stride: max(1, cols), Data: s}
}

// out is the i-th matrix (or vector: S, W) of output k.
func (j *linalgJob) out(k, i int) blas64.General {
	s := j.shapes[k]
	rows, cols := 1, s[len(s)-1]
	if len(s) == j.rank {
		rows = s[len(s)-2]
	}
	return matrix(j.outs[k], i, rows, cols, false)
}

// run computes matrix i. For a failure it returns the sentinel and, for a
// singular or indefinite matrix, the order hal.LinalgError names.
func (j *linalgJob) run(i int) (order int, err error) {
	defer func() {
		// gonum panics on arguments it rejects; the checks above should
		// leave none, but a panic on a worker goroutine would end the
		// process, so it becomes this matrix's failure instead.
		if r := recover(); r != nil {
			order, err = 0, fmt.Errorf("LAPACK refused the matrix: %v: %w", r, hal.ErrInvalid)
		}
	}()
	a := matrix(j.a, i, j.m, j.n, true)
	switch j.op {
	case hal.LinalgSolve:
		x := j.out(0, i)
		copy(x.Data, j.b[i*len(x.Data):(i+1)*len(x.Data)])
		ipiv := make([]int, j.n)
		if !lapack64.Getrf(a, ipiv) {
			return zeroPivot(a), hal.ErrSingular
		}
		lapack64.Getrs(blas.NoTrans, a, x, ipiv)
	case hal.LinalgInv:
		ipiv := make([]int, j.n)
		if !lapack64.Getrf(a, ipiv) {
			fillNaN(j.out(0, i).Data)
			return zeroPivot(a), hal.ErrSingular
		}
		work := make([]float64, 1)
		lapack64.Getri(a, ipiv, work, -1)
		work = make([]float64, max(1, int(work[0])))
		lapack64.Getri(a, ipiv, work, len(work))
		copy(j.out(0, i).Data, a.Data)
	case hal.LinalgCholesky:
		return j.cholesky(a, j.out(0, i), i)
	case hal.LinalgQR:
		j.qr(a, j.out(0, i), j.out(1, i))
	case hal.LinalgSVD:
		return 0, j.svd(a, i)
	case hal.LinalgEigh:
		return 0, j.eigh(a, i)
	}
	return 0, nil
}

func (j *linalgJob) cholesky(a, out blas64.General, i int) (int, error) {
	uplo := blas.Lower
	if j.args.Upper {
		uplo = blas.Upper
	}
	t, ok := lapack64.Potrf(blas64.Symmetric{Uplo: uplo, N: j.n, Stride: a.Stride, Data: a.Data})
	if !ok {
		fillNaN(out.Data)
		return indefiniteMinor(matrix(j.a, i, j.n, j.n, false), uplo == blas.Upper), hal.ErrNotPositiveDefinite
	}
	n := j.n
	for r := range n {
		for c := range n {
			if uplo == blas.Lower && c <= r || uplo == blas.Upper && c >= r {
				out.Data[r*n+c] = t.Data[r*t.Stride+c]
			}
		}
	}
	return 0, nil
}

func (j *linalgJob) qr(a, q, r blas64.General) {
	m, n := j.m, j.n
	k := min(m, n)
	if k == 0 {
		identity(q) // LAPACK has nothing to do; PyTorch's Q is I, R is 0
		return
	}
	tau := make([]float64, k)
	work := make([]float64, 1)
	lapack64.Geqrf(a, tau, work, -1)
	work = make([]float64, max(1, int(work[0])))
	lapack64.Geqrf(a, tau, work, len(work))
	for row := 0; row < r.Rows; row++ {
		for c := row; c < n; c++ {
			r.Data[row*r.Stride+c] = a.Data[row*a.Stride+c]
		}
	}
	if q.Cols == 0 {
		return
	}
	for row := range m {
		copy(q.Data[row*q.Stride:row*q.Stride+min(q.Cols, n)], a.Data[row*a.Stride:row*a.Stride+min(q.Cols, n)])
	}
	work = make([]float64, 1)
	lapack64.Orgqr(q, tau, work, -1)
	work = make([]float64, max(1, int(work[0])))
	lapack64.Orgqr(q, tau, work, len(work))
}

func (j *linalgJob) svd(a blas64.General, i int) error {
	values := len(j.outs) == 1
	s := j.out(map[bool]int{true: 0, false: 1}[values], i).Data
	jobU, jobVT := lapack.SVDNone, lapack.SVDNone
	var u, vt blas64.General
	u.Stride, vt.Stride = 1, 1
	if !values {
		u, vt = j.out(0, i), j.out(2, i)
		jobU, jobVT = lapack.SVDStore, lapack.SVDStore
		if j.args.Full {
			jobU, jobVT = lapack.SVDAll, lapack.SVDAll
		}
	}
	if min(j.m, j.n) == 0 {
		// LAPACK does nothing here; the vectors of a full SVD of an
		// empty matrix are an identity, as PyTorch gives.
		identity(u)
		identity(vt)
		return nil
	}
	work := make([]float64, 1)
	lapack64.Gesvd(jobU, jobVT, a, u, vt, s, work, -1)
	work = make([]float64, max(1, int(work[0])))
	if !lapack64.Gesvd(jobU, jobVT, a, u, vt, s, work, len(work)) {
		return hal.ErrNotConverged
	}
	return nil
}

func (j *linalgJob) eigh(a blas64.General, i int) error {
	uplo := blas.Lower
	if j.args.Upper {
		uplo = blas.Upper
	}
	job := lapack.EVNone
	if len(j.outs) == 2 {
		job = lapack.EVCompute
	}
	sym := blas64.Symmetric{Uplo: uplo, N: j.n, Stride: a.Stride, Data: a.Data}
	w := j.out(0, i).Data
	work := make([]float64, 1)
	lapack64.Syev(job, sym, w, work, -1)
	work = make([]float64, max(1, int(work[0])))
	if !lapack64.Syev(job, sym, w, work, len(work)) {
		fillNaN(w)
		return hal.ErrNotConverged
	}
	if job == lapack.EVCompute {
		copy(j.out(1, i).Data, a.Data)
	}
	return nil
}

// zeroPivot is the 1-based index of the first zero on the diagonal of an
// LU factorization, the element PyTorch's message names.
func zeroPivot(lu blas64.General) int {
	for k := range min(lu.Rows, lu.Cols) {
		if lu.Data[k*lu.Stride+k] == 0 {
			return k + 1
		}
	}
	return 0
}

func fillNaN(s []float64) {
	for i := range s {
		s[i] = math.NaN()
	}
}

func identity(g blas64.General) {
	for r := range g.Rows {
		if r < g.Cols {
			g.Data[r*g.Stride+r] = 1
		}
	}
}

// indefiniteMinor is the order of the first leading minor of the
// symmetric matrix a (read from its upper triangle when upper) that is
// not positive-definite, found by an unblocked Cholesky: potrf reports
// only that one exists, and PyTorch's message names it.
func indefiniteMinor(a blas64.General, upper bool) int {
	n := a.Rows
	at := func(r, c int) float64 {
		if upper {
			r, c = c, r
		}
		return a.Data[r*a.Stride+c]
	}
	l := make([]float64, n*n)
	for k := range n {
		d := at(k, k)
		for p := range k {
			d -= l[k*n+p] * l[k*n+p]
		}
		if !(d > 0) {
			return k + 1
		}
		l[k*n+k] = math.Sqrt(d)
		for r := k + 1; r < n; r++ {
			v := at(r, k)
			for p := range k {
				v -= l[r*n+p] * l[k*n+p]
			}
			l[r*n+k] = v / l[k*n+k]
		}
	}
	return n
}
