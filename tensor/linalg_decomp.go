package tensor

import (
	"errors"
	"fmt"
	"runtime"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// The solves and decompositions of torch.linalg (PyTorch 1.13): Solve,
// Inv, Cholesky, QR, SVD, SVDVals, Eigh and EigvalsH. Each works on the
// matrices in the last two axes of its operand, batched over the leading
// axes, in Float32 and Float64.
//
// They run on the devices that declare hal's linalg kernels: the CPU
// backend, over gonum's LAPACK in float64 (Float32 rounds once at the
// end). WebGPU does not run them (small pivoting factorizations do not pay
// on a GPU), so under every placement policy but Explicit an op whose
// operands are on a GPU runs on the CPU, its result staying there, and
// under Explicit (the default) it panics with an *Error wrapping
// hal.ErrUnsupported that names the op, the shapes, dtype and device.
//
// A matrix the op cannot factor (a singular one for Solve and Inv, one
// that is not positive-definite for Cholesky, NaN for SVD and Eigh) fails
// the results with an *Error wrapping a *hal.LinalgError, which names the
// batch element and wraps hal.ErrSingular, hal.ErrNotPositiveDefinite or
// hal.ErrNotConverged, worded as PyTorch's errors. The failure is
// data-dependent, found as the op runs, so it surfaces as device failures
// do, from the results' readers and Err (PyTorch raises at the call); it
// is not recorded on the device, so Device.Sync and later work are not
// affected.

var _ = registerOps(
	linalgOp("Solve", hal.LinalgSolve),
	linalgOp("Inv", hal.LinalgInv),
	linalgOp("Cholesky", hal.LinalgCholesky),
	linalgOp("QR", hal.LinalgQR),
	linalgOp("SVD", hal.LinalgSVD),
	linalgOp("SVDVals", hal.LinalgSVD),
	linalgOp("Eigh", hal.LinalgEigh),
	linalgOp("EigvalsH", hal.LinalgEigh),
)

func linalgOp(name string, op hal.LinalgOp) Op {
	return Op{Name: name, Family: FamilyLinalg, DTypes: kernelTypes(op.Kernel()), Kernels: one(op.Kernel())}
}

// QRMode is the mode of QR, as torch.linalg.qr's.
type QRMode string

const (
	// QRReduced gives Q [.., m, k] and R [.., k, n], k = min(m, n).
	QRReduced QRMode = "reduced"
	// QRComplete gives Q [.., m, m] and R [.., m, n].
	QRComplete QRMode = "complete"
)

// Solve returns X with A·X = B, as torch.linalg.solve: a is [.., n, n]
// and b is [.., n, k] or, as a batch of vectors, [.., n] (when b has one
// axis, or a's shape without its last axis). The batch axes broadcast.
// It factors A by LU with partial pivoting.
func Solve(a, b *Tensor) *Tensor {
	const op = "Solve"
	return routedLinalg(op, hal.LinalgSolve, a, b, func() *Tensor {
		checkSquare(op, a)
		b.checkLive(op)
		if a.dtype != b.dtype {
			misuse(op, "dtype mismatch: a %v %v vs b %v %v", a.shape, a.dtype, b.shape, b.dtype)
		}
		n := a.shape[len(a.shape)-1]
		vector := len(b.shape) == 1 || len(b.shape) == len(a.shape)-1 && slices.Equal(b.shape, a.shape[:len(a.shape)-1])
		bm := b.alias()
		defer bm.Release()
		if vector {
			bm.Release()
			bm = b.Unsqueeze(-1)
		}
		if len(bm.shape) < 2 || bm.shape[len(bm.shape)-2] != n {
			misuse(op, "b %v does not fit a %v: want [.., %d, k] or [.., %d]", b.shape, a.shape, n, n)
		}
		batch := broadcastShapes(op, a.shape[:len(a.shape)-2], bm.shape[:len(bm.shape)-2])
		av := a.BroadcastTo(append(slices.Clone(batch), n, n)...)
		bv := bm.BroadcastTo(append(slices.Clone(batch), n, bm.shape[len(bm.shape)-1])...)
		defer releaseAll(av, bv)
		x := launchLinalg(op, hal.LinalgSolve, hal.LinalgArgs{}, 1, av, bv)[0]
		if !vector {
			return x
		}
		defer x.Release()
		return x.Squeeze(-1)
	}, &a, &b)
}

// Inv returns A⁻¹ for a [.., n, n], as torch.linalg.inv (LU with partial
// pivoting).
func Inv(a *Tensor) *Tensor {
	const op = "Inv"
	return routedLinalg(op, hal.LinalgInv, a, nil, func() *Tensor {
		checkSquare(op, a)
		return launchLinalg(op, hal.LinalgInv, hal.LinalgArgs{}, 1, a, nil)[0]
	}, &a)
}

// Cholesky returns the lower-triangular L with A = L·Lᵀ of a symmetric
// positive-definite a [.., n, n], read from its lower triangle, as
// torch.linalg.cholesky; with upper, the upper-triangular U = Lᵀ with
// A = Uᵀ·U, read from its upper triangle.
func Cholesky(a *Tensor, upper bool) *Tensor {
	const op = "Cholesky"
	return routedLinalg(op, hal.LinalgCholesky, a, nil, func() *Tensor {
		checkSquare(op, a)
		return launchLinalg(op, hal.LinalgCholesky, hal.LinalgArgs{Upper: upper}, 1, a, nil)[0]
	}, &a)
}

// QR returns Q with orthonormal columns and upper-triangular R with
// A = Q·R for a [.., m, n], as torch.linalg.qr (Householder). The signs of
// R's diagonal are LAPACK's, as PyTorch's: QR is unique only up to them.
func QR(a *Tensor, mode QRMode) (q, r *Tensor) {
	const op = "QR"
	if mode != QRReduced && mode != QRComplete {
		misuse(op, "mode %q: want %q or %q", mode, QRReduced, QRComplete)
	}
	var rr *Tensor
	q = routedLinalg(op, hal.LinalgQR, a, nil, func() *Tensor {
		checkMatrices(op, a)
		outs := launchLinalg(op, hal.LinalgQR, hal.LinalgArgs{Full: mode == QRComplete}, 2, a, nil)
		rr.Release()
		rr = outs[1]
		return outs[0]
	}, &a)
	return q, rr
}

// SVD returns U, S and Vh with A = U·diag(S)·Vh for a [.., m, n], as
// torch.linalg.svd: S [.., k] holds the singular values in descending
// order, k = min(m, n); U is [.., m, k] and Vh [.., k, n], or with
// fullMatrices [.., m, m] and [.., n, n]. The singular vectors are
// unique only up to the sign of each pair (and, for repeated singular
// values, up to a rotation), as in PyTorch.
func SVD(a *Tensor, fullMatrices bool) (u, s, vh *Tensor) {
	const op = "SVD"
	var ss, vv *Tensor
	u = routedLinalg(op, hal.LinalgSVD, a, nil, func() *Tensor {
		checkMatrices(op, a)
		outs := launchLinalg(op, hal.LinalgSVD, hal.LinalgArgs{Full: fullMatrices}, 3, a, nil)
		releaseAll(ss, vv)
		ss, vv = outs[1], outs[2]
		return outs[0]
	}, &a)
	return u, ss, vv
}

// SVDVals returns the singular values of a [.., m, n] in descending
// order, [.., min(m, n)], as torch.linalg.svdvals.
func SVDVals(a *Tensor) *Tensor {
	const op = "SVDVals"
	return routedLinalg(op, hal.LinalgSVD, a, nil, func() *Tensor {
		checkMatrices(op, a)
		return launchLinalg(op, hal.LinalgSVD, hal.LinalgArgs{}, 1, a, nil)[0]
	}, &a)
}

// Eigh returns the eigenvalues w [.., n], ascending, and the orthonormal
// eigenvectors v [.., n, n] (columns) of a symmetric a [.., n, n], with
// A = v·diag(w)·vᵀ, as torch.linalg.eigh. a is read from its lower
// triangle, or its upper one with upper (PyTorch's UPLO="U"). Each
// eigenvector is unique only up to its sign (and, for repeated
// eigenvalues, up to a rotation), as in PyTorch.
func Eigh(a *Tensor, upper bool) (w, v *Tensor) {
	const op = "Eigh"
	var vv *Tensor
	w = routedLinalg(op, hal.LinalgEigh, a, nil, func() *Tensor {
		checkSquare(op, a)
		outs := launchLinalg(op, hal.LinalgEigh, hal.LinalgArgs{Upper: upper}, 2, a, nil)
		vv.Release()
		vv = outs[1]
		return outs[0]
	}, &a)
	return w, vv
}

// EigvalsH returns the eigenvalues of a symmetric a [.., n, n] in
// ascending order, as torch.linalg.eigvalsh; upper as in Eigh.
func EigvalsH(a *Tensor, upper bool) *Tensor {
	const op = "EigvalsH"
	return routedLinalg(op, hal.LinalgEigh, a, nil, func() *Tensor {
		checkSquare(op, a)
		return launchLinalg(op, hal.LinalgEigh, hal.LinalgArgs{Upper: upper}, 1, a, nil)[0]
	}, &a)
}

// routedLinalg places a linalg op: see placement's RoutedWhereRuns. Its
// size is the multiply-adds of one factorization, m·n·min(m, n), times
// the batch.
func routedLinalg(op string, kernel hal.LinalgOp, a, b *Tensor, run func() *Tensor, ps ...**Tensor) *Tensor {
	var size int64
	if a != nil && !a.released.Load() && len(a.shape) >= 2 {
		m, n := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
		size = int64(a.Len()) * int64(min(m, n))
	}
	runs := func(dev *Device) bool {
		return dev.caps().Supports(kernel.Kernel(), a.dtype)
	}
	return router.RoutedWhereRuns(op, familyMatMul, size, runs, run, ps...)
}

// checkMatrices panics unless a is a live float batch of matrices.
func checkMatrices(op string, a *Tensor) {
	a.checkLive(op)
	if len(a.shape) < 2 {
		misuse(op, "need a matrix or a batch of matrices (rank ≥ 2), got %v %v", a.shape, a.dtype)
	}
}

// checkSquare panics unless a is a batch of square matrices.
func checkSquare(op string, a *Tensor) {
	checkMatrices(op, a)
	if m, n := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]; m != n {
		misuse(op, "need square matrices, got %v %v (%d×%d)", a.shape, a.dtype, m, n)
	}
}

// launchLinalg runs kernel on a (and b) into count new outputs on a's
// device. The op must run there for a's dtype: else it panics with an
// *Error wrapping hal.ErrUnsupported naming the shapes, dtype and device.
// A kernel failure fails every output; a *hal.LinalgError is not recorded
// on the device (see the file's comment).
func launchLinalg(op string, kernel hal.LinalgOp, args hal.LinalgArgs, count int, a, b *Tensor) []*Tensor {
	dev := a.dev
	inputs := []*Tensor{a}
	var bShape []int
	if b != nil {
		sameDevice(op, a, b)
		inputs = append(inputs, b)
		bShape = b.shape
	}
	if !dev.caps().Supports(kernel.Kernel(), a.dtype) {
		msg := fmt.Sprintf("%v %v on %v", a.shape, a.dtype, dev)
		if b != nil {
			msg = fmt.Sprintf("%v and %v %v on %v", a.shape, b.shape, a.dtype, dev)
		}
		if a.dtype == Float32 || a.dtype == Float64 {
			msg += " (linalg runs on the CPU: copy the operands there with To, or route it with SetPlacement(Auto))"
		}
		panic(&Error{Op: op, Msg: msg, Err: fmt.Errorf("%w (no %s kernel for %v)", hal.ErrUnsupported, kernel.Kernel(), a.dtype)})
	}
	shapes, err := kernel.Outputs(a.shape, bShape, args, count)
	if err != nil {
		misuse(op, "%v", err)
	}
	outs := make([]*Tensor, count)
	views := make([]hal.View, count)
	for i, shape := range shapes {
		outs[i] = newTensor(op, dev, a.dtype, shape)
		adopt(outs[i], inputs...)
	}
	fail := func(err error) []*Tensor {
		for _, o := range outs {
			o.setFailed(err)
		}
		return outs
	}
	if err := inputsErr(op, inputs...); err != nil {
		return fail(err)
	}
	empty := true
	for i, o := range outs {
		views[i] = o.view()
		empty = empty && o.Len() == 0
	}
	if empty {
		return outs
	}
	var bv hal.View
	if b != nil {
		bv = b.view()
	}
	err = dev.hal.Linalg(kernel, views, a.view(), bv, args)
	runtime.KeepAlive(inputs)
	if err == nil {
		return outs
	}
	if le := (*hal.LinalgError)(nil); errors.As(err, &le) {
		return fail(&Error{Op: op, Msg: fmt.Sprintf("%v %v on %s", a.shape, a.dtype, dev.name), Err: err})
	}
	return fail(dev.fail(op, err))
}
