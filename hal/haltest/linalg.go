package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// The Linalg kernels are checked by the properties that define their
// results, computed here in float64 from the values the kernel wrote: a
// solve's and an inverse's residual, L·Lᵀ = A with L triangular, Q with
// orthonormal columns and Q·R = A with R triangular, U·diag(S)·Vh = A with
// orthonormal U and Vh and S descending, A·V = V·diag(W) with V
// orthonormal and W ascending. Together these pin every result but the
// signs (the gauge) of the QR, SVD and eigenvector columns, which are not
// unique. Solve and Cholesky are also compared with the suite's own
// float64 Gauss–Jordan and Cholesky. Inputs are well conditioned (random
// plus a dominant diagonal, or Bᵀ·B + n·I for the symmetric ones), so
// every bound is a small multiple of n·u·scale.

// linalgTol is the bound on a property's residual for matrices of order n
// and entries of magnitude scale: a few roundings per term of an
// n-term sum, and the conditioning (≤ 3 by construction) of the inputs.
func linalgTol(dt hal.DType, n int, scale float64) float64 {
	return 32 * float64(n+1) * unitRoundoff(dt) * max(1, scale)
}

// linalgShapes are the matrix sizes (rows, cols) and batch shapes tried.
var (
	linalgSquare  = [][2]int{{1, 1}, {2, 2}, {5, 5}, {7, 7}}
	linalgRect    = [][2]int{{1, 1}, {1, 4}, {4, 1}, {5, 3}, {3, 5}, {7, 7}}
	linalgBatches = [][]int{nil, {3}, {2, 2}}
)

// matrixLayouts are inputLayouts without those that broadcast a matrix
// axis (a matrix of repeated rows or columns is singular).
func matrixLayouts(rank int) []layout {
	var out []layout
	for _, l := range inputLayouts(rank) {
		if l.bcast != nil && (l.bcast[rank-1] || l.bcast[rank-2]) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// linalgInput draws a batch of m×n matrices: random entries in [−1, 1)
// plus n on the diagonal for a square general one, Bᵀ·B/n + I for a
// symmetric positive-definite one (sym), or plain random entries.
func linalgInput(rng *rand.Rand, batch []int, m, n int, kind string) []float64 {
	count := numel(batch)
	v := make([]float64, count*m*n)
	for b := range count {
		a := v[b*m*n : (b+1)*m*n]
		switch kind {
		case "sym":
			x := make([]float64, n*n)
			for i := range x {
				x[i] = 2*rng.Float64() - 1
			}
			for i := range n {
				for j := range n {
					s := 0.0
					for k := range n {
						s += x[k*n+i] * x[k*n+j]
					}
					a[i*n+j] = s / float64(n)
				}
				a[i*n+i]++
			}
		default:
			for i := range a {
				a[i] = 2*rng.Float64() - 1
			}
			if kind == "dominant" {
				for i := range min(m, n) {
					a[i*n+i] += float64(n)
				}
			}
		}
	}
	return v
}

func linalgProbe(t *testing.T, s *suite, op hal.LinalgOp, dt hal.DType) error {
	a := s.zeros(t, dt, 2, 2)
	switch op {
	case hal.LinalgSolve:
		return s.dev.Linalg(op, []hal.View{s.zeros(t, dt, 2, 1)}, a, s.zeros(t, dt, 2, 1), hal.LinalgArgs{})
	case hal.LinalgQR:
		return s.dev.Linalg(op, []hal.View{s.zeros(t, dt, 2, 2), s.zeros(t, dt, 2, 2)}, a, hal.View{}, hal.LinalgArgs{})
	case hal.LinalgSVD:
		return s.dev.Linalg(op, []hal.View{s.zeros(t, dt, 2, 2), s.zeros(t, dt, 2), s.zeros(t, dt, 2, 2)}, a, hal.View{}, hal.LinalgArgs{})
	case hal.LinalgEigh:
		return s.dev.Linalg(op, []hal.View{s.zeros(t, dt, 2), s.zeros(t, dt, 2, 2)}, a, hal.View{}, hal.LinalgArgs{})
	}
	return s.dev.Linalg(op, []hal.View{s.zeros(t, dt, 2, 2)}, a, hal.View{}, hal.LinalgArgs{})
}

// testLinalg checks one Linalg kernel on random batches in every matrix
// layout, then its failures and misuse.
func testLinalg(t *testing.T, s *suite, op hal.LinalgOp, dt hal.DType) {
	sizes := linalgSquare
	if op == hal.LinalgQR || op == hal.LinalgSVD {
		sizes = linalgRect
	}
	variants := []hal.LinalgArgs{{}}
	switch op {
	case hal.LinalgCholesky, hal.LinalgEigh:
		variants = append(variants, hal.LinalgArgs{Upper: true})
	case hal.LinalgQR, hal.LinalgSVD:
		variants = append(variants, hal.LinalgArgs{Full: true})
	}
	for _, args := range variants {
		for _, batch := range linalgBatches {
			for _, size := range sizes {
				shape := append(append([]int(nil), batch...), size[0], size[1])
				for _, l := range matrixLayouts(len(shape)) {
					name := fmt.Sprintf("%+v/%s/%s", args, shapeName(shape), l.name)
					t.Run(name, func(t *testing.T) {
						rng := newRand(op.Kernel() + "/" + dt.String() + "/" + name)
						kind := "dominant"
						switch op {
						case hal.LinalgCholesky, hal.LinalgEigh:
							kind = "sym"
						case hal.LinalgQR, hal.LinalgSVD:
							kind = "plain"
						}
						a := s.fromValues(t, dt, shape, l, linalgInput(rng, batch, size[0], size[1], kind), rng)
						checkLinalg(t, s, op, dt, args, a, batch, size[0], size[1], rng)
					})
				}
			}
		}
	}
	if op == hal.LinalgSVD || op == hal.LinalgEigh {
		t.Run("values-only", func(t *testing.T) {
			rng := newRand(op.Kernel() + "/values/" + dt.String())
			kind := map[hal.LinalgOp]string{hal.LinalgSVD: "plain", hal.LinalgEigh: "sym"}[op]
			a := s.fromValues(t, dt, []int{3, 5, 5}, contiguous, linalgInput(rng, []int{3}, 5, 5, kind), rng)
			full := linalgOutputs(t, s, op, dt, a.Shape, nil, hal.LinalgArgs{}, 0)
			require.NoError(t, s.dev.Linalg(op, views(full), a.View, hal.View{}, hal.LinalgArgs{}))
			vals := linalgOutputs(t, s, op, dt, a.Shape, nil, hal.LinalgArgs{}, 1)
			require.NoError(t, s.dev.Linalg(op, views(vals), a.View, hal.View{}, hal.LinalgArgs{}))
			which := map[hal.LinalgOp]int{hal.LinalgSVD: 1, hal.LinalgEigh: 0}[op]
			want, got := s.result(t, full[which]), s.result(t, vals[0])
			closeAll(t, "values alone vs with vectors", got, want, linalgTol(dt, 5, 5))
		})
	}
	t.Run("failures", func(t *testing.T) { testLinalgFailures(t, s, op, dt) })
	t.Run("misuse", func(t *testing.T) {
		a := s.zeros(t, dt, 2, 3)
		switch op {
		case hal.LinalgQR, hal.LinalgSVD:
			a = s.zeros(t, dt, 3) // not a matrix
		}
		assert.ErrorIs(t, linalgProbeWith(t, s, op, dt, a), hal.ErrInvalid, "a non-square (or non-matrix) a")
		wrong := s.zeros(t, dt, 3, 3)
		assert.ErrorIs(t, s.dev.Linalg(op, []hal.View{wrong}, s.zeros(t, dt, 2, 2), hal.View{}, hal.LinalgArgs{}), hal.ErrInvalid, "a dst of the wrong shape or count")
		other := hal.Float64
		if dt == hal.Float64 {
			other = hal.Float32
		}
		full := linalgOutputs(t, s, op, other, []int{2, 2}, []int{2, 1}, hal.LinalgArgs{}, 0)
		var b hal.View
		if op == hal.LinalgSolve {
			b = s.zeros(t, dt, 2, 1)
		}
		assert.ErrorIs(t, s.dev.Linalg(op, views(full), s.zeros(t, dt, 2, 2), b, hal.LinalgArgs{}), hal.ErrInvalid, "a dst of another dtype")
	})
}

func linalgProbeWith(t *testing.T, s *suite, op hal.LinalgOp, dt hal.DType, a hal.View) error {
	var b hal.View
	if op == hal.LinalgSolve {
		b = s.zeros(t, dt, a.Shape[0], 1)
	}
	n := a.Shape[0]
	return s.dev.Linalg(op, []hal.View{s.zeros(t, dt, n, n)}, a, b, hal.LinalgArgs{})
}

// linalgOutputs makes op's outputs for an a of shape (and b, for a solve),
// count of them (0: all), filled with the sentinel.
func linalgOutputs(t testing.TB, s *suite, op hal.LinalgOp, dt hal.DType, a, b []int, args hal.LinalgArgs, count int) []operand {
	t.Helper()
	if op != hal.LinalgSolve {
		b = nil
	}
	n := map[hal.LinalgOp]int{hal.LinalgQR: 2, hal.LinalgSVD: 3, hal.LinalgEigh: 2}[op]
	if n == 0 {
		n = 1
	}
	if count > 0 {
		n = count
	}
	shapes, err := op.Outputs(a, b, args, n)
	require.NoError(t, err)
	out := make([]operand, len(shapes))
	for i, sh := range shapes {
		out[i] = s.output(t, dt, sh, contiguous)
	}
	return out
}

func views(os []operand) []hal.View {
	out := make([]hal.View, len(os))
	for i, o := range os {
		out[i] = o.View
	}
	return out
}

// checkLinalg runs op on a (a batch of m×n matrices) and checks the
// defining properties of what it wrote.
func checkLinalg(t *testing.T, s *suite, op hal.LinalgOp, dt hal.DType, args hal.LinalgArgs, a operand, batch []int, m, n int, rng *rand.Rand) {
	var b operand
	var bShape []int
	k := 3
	if op == hal.LinalgSolve {
		bShape = append(append([]int(nil), batch...), n, k)
		vals := make([]float64, numel(bShape))
		for i := range vals {
			vals[i] = 2*rng.Float64() - 1
		}
		b = s.fromValues(t, dt, bShape, contiguous, vals, rng)
	}
	outs := linalgOutputs(t, s, op, dt, a.Shape, bShape, args, 0)
	require.NoError(t, s.dev.Linalg(op, views(outs), a.View, b.View, args))
	got := make([][]float64, len(outs))
	for i, o := range outs {
		got[i] = s.result(t, o)
	}
	av := a.values()
	tol := linalgTol(dt, max(m, n), float64(max(m, n)))
	for bi := range numel(batch) {
		A := av[bi*m*n : (bi+1)*m*n]
		at := func(i, j int) float64 { return A[i*n+j] }
		switch op {
		case hal.LinalgSolve:
			X := got[0][bi*n*k : (bi+1)*n*k]
			want := gaussJordan(A, b.values()[bi*n*k:(bi+1)*n*k], n, k)
			closeAll(t, fmt.Sprintf("batch %d: X vs the suite's Gauss–Jordan", bi), X, want, tol)
		case hal.LinalgInv:
			X := got[0][bi*n*n : (bi+1)*n*n]
			closeAll(t, fmt.Sprintf("batch %d: A·A⁻¹", bi), matmul(A, X, n, n, n), eye(n), tol)
			closeAll(t, fmt.Sprintf("batch %d: A⁻¹ vs Gauss–Jordan", bi), X, gaussJordan(A, eye(n), n, n), tol)
		case hal.LinalgCholesky:
			L := got[0][bi*n*n : (bi+1)*n*n]
			if args.Upper {
				L = transpose(L, n, n)
			}
			for i := range n {
				for j := i + 1; j < n; j++ {
					assert.Zero(t, L[i*n+j], "batch %d: the factor is not triangular at %d,%d", bi, i, j)
				}
			}
			closeAll(t, fmt.Sprintf("batch %d: L vs the suite's Cholesky", bi), L, refCholesky(at, n), tol)
		case hal.LinalgQR:
			r := outs[0].Shape[len(outs[0].Shape)-1]
			Q := got[0][bi*m*r : (bi+1)*m*r]
			R := got[1][bi*r*n : (bi+1)*r*n]
			for i := range r {
				for j := range min(i, n) {
					assert.Zero(t, R[i*n+j], "batch %d: R is not upper triangular at %d,%d", bi, i, j)
				}
			}
			closeAll(t, fmt.Sprintf("batch %d: QᵀQ", bi), matmul(transpose(Q, m, r), Q, r, m, r), eye(r), tol)
			closeAll(t, fmt.Sprintf("batch %d: Q·R", bi), matmul(Q, R, m, r, n), A, tol)
		case hal.LinalgSVD:
			kk := min(m, n)
			ur, vr := outs[0].Shape[len(outs[0].Shape)-1], outs[2].Shape[len(outs[2].Shape)-2]
			U := got[0][bi*m*ur : (bi+1)*m*ur]
			S := got[1][bi*kk : (bi+1)*kk]
			Vh := got[2][bi*vr*n : (bi+1)*vr*n]
			for i := range kk {
				assert.GreaterOrEqual(t, S[i], 0.0, "batch %d: S[%d] < 0", bi, i)
				if i > 0 {
					assert.GreaterOrEqual(t, S[i-1], S[i], "batch %d: S is not descending at %d", bi, i)
				}
			}
			closeAll(t, fmt.Sprintf("batch %d: UᵀU", bi), matmul(transpose(U, m, ur), U, ur, m, ur), eye(ur), tol)
			closeAll(t, fmt.Sprintf("batch %d: Vh·Vhᵀ", bi), matmul(Vh, transpose(Vh, vr, n), vr, n, vr), eye(vr), tol)
			us := make([]float64, m*kk) // the first k columns of U, scaled
			for i := range m {
				for j := range kk {
					us[i*kk+j] = U[i*ur+j] * S[j]
				}
			}
			closeAll(t, fmt.Sprintf("batch %d: U·diag(S)·Vh", bi), matmul(us, Vh[:kk*n], m, kk, n), A, tol)
		case hal.LinalgEigh:
			W := got[0][bi*n : (bi+1)*n]
			V := got[1][bi*n*n : (bi+1)*n*n]
			for i := 1; i < n; i++ {
				assert.GreaterOrEqual(t, W[i], W[i-1], "batch %d: eigenvalues not ascending at %d", bi, i)
			}
			sym := make([]float64, n*n) // a as the kernel reads it: one triangle
			for i := range n {
				for j := range n {
					lo, hi := max(i, j), min(i, j)
					if args.Upper {
						lo, hi = hi, lo
					}
					sym[i*n+j] = at(lo, hi)
				}
			}
			vw := make([]float64, n*n)
			for i := range n {
				for j := range n {
					vw[i*n+j] = V[i*n+j] * W[j]
				}
			}
			closeAll(t, fmt.Sprintf("batch %d: VᵀV", bi), matmul(transpose(V, n, n), V, n, n, n), eye(n), tol)
			closeAll(t, fmt.Sprintf("batch %d: A·V = V·diag(W)", bi), matmul(sym, V, n, n, n), vw, tol)
		}
	}
}

// testLinalgFailures checks the data-dependent failures: a singular
// matrix (solve, inv), an indefinite one (cholesky) and NaN (svd, eigh)
// in the second matrix of a batch fail with a *hal.LinalgError naming
// that batch element, and the first matrix is still computed.
func testLinalgFailures(t *testing.T, s *suite, op hal.LinalgOp, dt hal.DType) {
	good := []float64{4, 1, 0, 1, 3, 0, 0, 0, 2}
	var bad []float64
	var want error
	order := 0
	switch op {
	case hal.LinalgSolve, hal.LinalgInv:
		bad, want, order = []float64{1, 2, 3, 2, 4, 6, 1, 1, 1}, hal.ErrSingular, 3
	case hal.LinalgCholesky:
		bad, want, order = []float64{1, 2, 0, 2, 1, 0, 0, 0, 1}, hal.ErrNotPositiveDefinite, 2
	case hal.LinalgSVD, hal.LinalgEigh:
		bad, want = []float64{1, math.NaN(), 0, math.NaN(), 1, 0, 0, 0, 1}, hal.ErrNotConverged
	default:
		return // QR has no failure: it factors any matrix
	}
	a := s.fromValues(t, dt, []int{2, 3, 3}, contiguous, append(append([]float64(nil), good...), bad...), newRand("linalg-fail"))
	var b operand
	var bShape []int
	if op == hal.LinalgSolve {
		bShape = []int{2, 3, 1}
		b = s.fromValues(t, dt, bShape, contiguous, []float64{1, 2, 3, 4, 5, 6}, newRand("linalg-fail-b"))
	}
	outs := linalgOutputs(t, s, op, dt, a.Shape, bShape, hal.LinalgArgs{}, 0)
	err := s.dev.Linalg(op, views(outs), a.View, b.View, hal.LinalgArgs{})
	if op == hal.LinalgSVD || op == hal.LinalgEigh {
		// LAPACK may also "converge" on NaN; then NaN must come out.
		if err == nil {
			got := s.result(t, outs[0])
			assert.True(t, anyNaN(got[len(got)/2:]), "NaN in, yet no NaN out and no error")
			return
		}
	}
	var le *hal.LinalgError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, want)
	assert.Equal(t, 1, le.Batch, "the failed batch element")
	assert.Equal(t, order, le.Order, "the order the message names")
	assert.Contains(t, err.Error(), "Batch element 1")
	if op == hal.LinalgCholesky {
		L := s.result(t, outs[0])[:9]
		assert.InDelta(t, 2, L[0], 1e-6, "the good matrix is still factored")
	}
}

func anyNaN(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

// closeAll asserts |got − want| ≤ tol elementwise.
func closeAll(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			t.Errorf("%s: element %d is %v, want %v (±%.3g)", what, i, got[i], want[i], tol)
			return
		}
	}
}

func eye(n int) []float64 {
	out := make([]float64, n*n)
	for i := range n {
		out[i*n+i] = 1
	}
	return out
}

func transpose(a []float64, m, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			out[j*m+i] = a[i*n+j]
		}
	}
	return out
}

// matmul is the m×p product of a (m×k) and b (k×p), in float64.
func matmul(a, b []float64, m, k, p int) []float64 {
	out := make([]float64, m*p)
	for i := range m {
		for j := range p {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[l*p+j]
			}
			out[i*p+j] = s
		}
	}
	return out
}

// gaussJordan solves a·x = b (n×n, n×k) by Gauss–Jordan elimination with
// partial pivoting: the suite's own reference, independent of LAPACK.
func gaussJordan(a, b []float64, n, k int) []float64 {
	w := n + k
	m := make([]float64, n*w)
	for i := range n {
		copy(m[i*w:], a[i*n:(i+1)*n])
		copy(m[i*w+n:], b[i*k:(i+1)*k])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r*w+c]) > math.Abs(m[p*w+c]) {
				p = r
			}
		}
		for j := range w {
			m[c*w+j], m[p*w+j] = m[p*w+j], m[c*w+j]
		}
		for r := range n {
			if r == c {
				continue
			}
			f := m[r*w+c] / m[c*w+c]
			for j := c; j < w; j++ {
				m[r*w+j] -= f * m[c*w+j]
			}
		}
	}
	x := make([]float64, n*k)
	for i := range n {
		for j := range k {
			x[i*k+j] = m[i*w+n+j] / m[i*w+i]
		}
	}
	return x
}

// refCholesky is the lower Cholesky factor of the symmetric matrix whose
// lower triangle at gives.
func refCholesky(at func(i, j int) float64, n int) []float64 {
	l := make([]float64, n*n)
	for j := range n {
		d := at(j, j)
		for p := range j {
			d -= l[j*n+p] * l[j*n+p]
		}
		l[j*n+j] = math.Sqrt(d)
		for i := j + 1; i < n; i++ {
			v := at(i, j)
			for p := range j {
				v -= l[i*n+p] * l[j*n+p]
			}
			l[i*n+j] = v / l[j*n+j]
		}
	}
	return l
}
