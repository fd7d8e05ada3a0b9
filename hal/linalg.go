package hal

import (
	"errors"
	"fmt"
)

// LinalgOp names a dense linear-algebra kernel of the Linalg family: a
// solve, an inverse or a decomposition of the matrices in the last two
// axes of its input, as torch.linalg computes them (PyTorch 1.13).
//
// The family is optional (tiers.go) without a composition: a device that
// does not declare it cannot run these ops, and package tensor routes them
// to the CPU backend under a placement policy that moves operands (Auto and
// the others), and refuses them with hal.ErrUnsupported under Explicit.
type LinalgOp uint8

// Linalg ops. dst lists the outputs in the order given; every view has the
// same batch axes (a's leading axes) and every output is contiguous.
const (
	// LinalgSolve: dst [X [.., n, k]] with a·X = b, for a [.., n, n] and
	// b [.., n, k] (LU with partial pivoting).
	LinalgSolve LinalgOp = iota
	// LinalgInv: dst [a⁻¹ [.., n, n]] (LU with partial pivoting).
	LinalgInv
	// LinalgCholesky: dst [L [.., n, n]], lower triangular with a = L·Lᵀ,
	// read from a's lower triangle; with Upper, dst [U] = Lᵀ, a = Uᵀ·U.
	LinalgCholesky
	// LinalgQR: dst [Q, R] with a = Q·R for a [.., m, n]: reduced, Q
	// [.., m, k] and R [.., k, n] with k = min(m, n); with Full (mode
	// "complete"), Q [.., m, m] and R [.., m, n].
	LinalgQR
	// LinalgSVD: dst [U, S, Vh] with a = U·diag(S)·Vh for a [.., m, n],
	// S [.., k] descending, k = min(m, n): reduced, U [.., m, k] and Vh
	// [.., k, n]; with Full, U [.., m, m] and Vh [.., n, n]. dst [S] alone
	// computes the singular values only (torch.linalg.svdvals).
	LinalgSVD
	// LinalgEigh: dst [W [.., n], V [.., n, n]] with a = V·diag(W)·Vᵀ for
	// a symmetric a [.., n, n], W ascending; a is read from its lower
	// triangle, its upper one with Upper (torch's UPLO). dst [W] alone
	// computes the eigenvalues only (torch.linalg.eigvalsh).
	LinalgEigh
	numLinalgOps
)

// LinalgOps lists every linalg op.
var LinalgOps = enumerate[LinalgOp](numLinalgOps)

func (op LinalgOp) String() string { return name(linalgNames, op, "LinalgOp") }

// Kernel is the op's key in Capabilities, e.g. "linalg.solve".
func (op LinalgOp) Kernel() string { return kernelName(linalgKernels, op, "linalg.") }

// Info returns op's entry in the kernel table; an unknown op has a zero
// entry.
func (op LinalgOp) Info() KernelInfo { return entry(linalgTable[:], op) }

// LinalgArgs are the options of a Linalg kernel.
type LinalgArgs struct {
	// Upper: Cholesky writes U = Lᵀ; Eigh reads a's upper triangle.
	Upper bool
	// Full: QR's mode "complete", SVD's full_matrices.
	Full bool
}

func linalgKernel(name, key, doc string) KernelInfo {
	return KernelInfo{Key: key, Name: name, Family: FamilyLinalg, DTypes: SetOf(Float32, Float64),
		Optional: true, Differentiable: true, Doc: doc}
}

var linalgTable = [numLinalgOps]KernelInfo{
	LinalgSolve:    linalgKernel("LinalgSolve", "linalg.solve", "X with A·X = B, LU with partial pivoting"),
	LinalgInv:      linalgKernel("LinalgInv", "linalg.inv", "A⁻¹, LU with partial pivoting"),
	LinalgCholesky: linalgKernel("LinalgCholesky", "linalg.cholesky", "L with A = L·Lᵀ (or U = Lᵀ)"),
	LinalgQR:       linalgKernel("LinalgQR", "linalg.qr", "Q, R with A = Q·R, reduced or complete"),
	LinalgSVD:      linalgKernel("LinalgSVD", "linalg.svd", "U, S, Vh with A = U·diag(S)·Vh, S descending"),
	LinalgEigh:     linalgKernel("LinalgEigh", "linalg.eigh", "eigenvalues ascending and eigenvectors of a symmetric A"),
}

var (
	linalgKernels = keysOf(linalgTable[:])
	linalgNames   = shortNames(linalgTable[:])
)

// Sentinels of the Linalg kernels' data-dependent failures, wrapped in a
// *LinalgError.
var (
	// ErrSingular: an LU factorization met an exactly zero pivot.
	ErrSingular = errors.New("the input matrix is singular")
	// ErrNotPositiveDefinite: a Cholesky factorization met a leading
	// minor that is not positive-definite.
	ErrNotPositiveDefinite = errors.New("the input is not positive-definite")
	// ErrNotConverged: an iterative decomposition (SVD, eigh) did not
	// converge, as for an input holding NaN or ±Inf.
	ErrNotConverged = errors.New("the algorithm did not converge")
)

// LinalgError is the failure of a Linalg kernel on one matrix of the
// batch, worded as PyTorch words it, on every backend. The kernel still
// writes every output (the failed matrix's with unspecified values).
type LinalgError struct {
	Kernel string // e.g. "linalg.cholesky"
	Batch  int    // the row-major index of the failed matrix in the batch
	// Order is, for ErrNotPositiveDefinite, the order of the leading
	// minor that is not positive-definite and, for ErrSingular, the
	// (1-based) index of the zero diagonal element of U; else 0. Which
	// element of U is zero depends on the LU's pivoting, so it can
	// differ from PyTorch's (LAPACK builds differ too).
	Order int
	Err   error // ErrSingular, ErrNotPositiveDefinite or ErrNotConverged
}

func (e *LinalgError) Error() string {
	head := fmt.Sprintf("%s: (Batch element %d): ", e.Kernel, e.Batch)
	switch e.Err {
	case ErrNotPositiveDefinite:
		return head + fmt.Sprintf("The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite)", e.Order)
	case ErrSingular:
		if e.Kernel == LinalgSolve.Kernel() {
			return head + "The solver failed because the input matrix is singular"
		}
		return head + fmt.Sprintf("The diagonal element %d is zero, the inversion could not be completed because the input matrix is singular", e.Order)
	}
	return head + fmt.Sprintf("%v", e.Err)
}

// Unwrap makes errors.Is(err, ErrSingular) and the others hold.
func (e *LinalgError) Unwrap() error { return e.Err }

// Outputs returns the shapes of op's outputs for an input a (and b, for
// LinalgSolve) of the given shapes: n of them, where n may be fewer than
// the op's full list only for LinalgSVD ([S]) and LinalgEigh ([W]). It
// is the shape rule every backend checks dst against; shapes that break
// the op's contract are ErrInvalid.
func (op LinalgOp) Outputs(a, b []int, args LinalgArgs, n int) ([][]int, error) {
	bad := func(format string, v ...any) ([][]int, error) {
		return nil, fmt.Errorf("%v: %s: %w", op.Kernel(), fmt.Sprintf(format, v...), ErrInvalid)
	}
	if len(a) < 2 {
		return bad("a %v is not a batch of matrices", a)
	}
	batch, m, k := a[:len(a)-2], a[len(a)-2], a[len(a)-1]
	with := func(tail ...int) []int { return append(append([]int(nil), batch...), tail...) }
	square := func() error {
		if m != k {
			_, err := bad("a %v is not a batch of square matrices", a)
			return err
		}
		return nil
	}
	want := 1
	var out [][]int
	switch op {
	case LinalgSolve:
		if err := square(); err != nil {
			return nil, err
		}
		if len(b) != len(a) || !equalInts(b[:len(b)-2], batch) || b[len(b)-2] != m {
			return bad("b %v does not fit a %v", b, a)
		}
		out = [][]int{with(m, b[len(b)-1])}
	case LinalgInv, LinalgCholesky:
		if err := square(); err != nil {
			return nil, err
		}
		out = [][]int{with(m, m)}
	case LinalgQR:
		want = 2
		r := min(m, k)
		if args.Full {
			r = m
		}
		out = [][]int{with(m, r), with(r, k)}
	case LinalgSVD:
		want = 3
		r := min(m, k)
		u, v := r, r
		if args.Full {
			u, v = m, k
		}
		out = [][]int{with(m, u), with(r), with(v, k)}
		if n == 1 {
			return [][]int{with(r)}, nil
		}
	case LinalgEigh:
		want = 2
		if err := square(); err != nil {
			return nil, err
		}
		out = [][]int{with(m), with(m, m)}
		if n == 1 {
			return out[:1], nil
		}
	default:
		return bad("unknown op")
	}
	if op != LinalgSolve && b != nil {
		return bad("takes no b, got %v", b)
	}
	if n != want {
		return bad("writes %d outputs, got %d", want, n)
	}
	return out, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
