package tensor

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// RBFKernel returns the Gaussian (radial basis function) kernel matrix of
// the rows of x [n, d] and y [m, d]:
//
//	K[i, j] = exp(−gamma·‖x_i − y_j‖²)
//
// as sklearn.metrics.pairwise.rbf_kernel. The squared distances come from
// ‖x_i‖² + ‖y_j‖² − 2·x_i·y_j, one GEMM instead of an n·m·d difference
// tensor; rounding can push a distance of (nearly) zero below zero, so it
// is clamped at 0 before the exponential, keeping K ≤ 1.
func RBFKernel(x, y *Tensor, gamma float64) *Tensor {
	const op = "RBFKernel"
	return routed(op, familyMatMul, matmulSize(x, false, y, true), func() *Tensor { return rbfKernel(op, x, y, gamma) }, &x, &y)
}

// rbfKernel is RBFKernel on its operands' device.
func rbfKernel(op string, x, y *Tensor, gamma float64) *Tensor {
	nnCheckFloat(op, "x", x)
	nnCheckFloat(op, "y", y)
	sameDevice(op, x, y)
	switch {
	case x.Rank() != 2 || y.Rank() != 2:
		misuse(op, "x %s and y %s must be 2-D [n, d] and [m, d]", nnDescribe(x), nnDescribe(y))
	case x.shape[1] != y.shape[1]:
		misuse(op, "x %s and y %s have different feature sizes %d and %d", nnDescribe(x), nnDescribe(y), x.shape[1], y.shape[1])
	case x.DType() != y.DType():
		misuse(op, "x %s and y %s have different dtypes", nnDescribe(x), nnDescribe(y))
	case math.IsNaN(gamma) || math.IsInf(gamma, 0):
		misuse(op, "gamma %v must be finite", gamma)
	}
	checkOp(op, x.dev, x.dtype)
	var tmp nnScope
	defer tmp.release()
	square := func(t *Tensor) *Tensor { return tmp.add(unary(op, hal.Square, t, hal.Args{})) }
	xNorm := tmp.add(square(x).reduceHere(op, hal.Sum, []int{1}, true)) // [n, 1]
	yNorm := tmp.add(square(y).reduceHere(op, hal.Sum, []int{1}, false))
	yRow := tmp.add(yNorm.Unsqueeze(0))                  // [1, m]
	norms := tmp.add(binaryOp(op, hal.Add, xNorm, yRow)) // [n, m]
	sq := tmp.add(gemm(op, -2, x, false, y, true, 1, norms))
	clamped := tmp.add(unary(op, hal.Clamp, sq, hal.Args{Alpha: 0, Beta: math.Inf(1)}))
	scaled := tmp.add(binaryScalar(op, hal.Mul, clamped, -gamma))
	return unary(op, hal.Exp, scaled, hal.Args{})
}
