package cpu

import "sync/atomic"

// gemmKernel is a microkernel and the blocking that suits it. run computes
// the mr×nr tile c = alpha·A·B + beta·c (c row stride ldc) from a packed
// A panel (k groups of mr) and B panel (k groups of nr); beta = 0 must not
// read c.
type gemmKernel[T float32 | float64] struct {
	name       string
	mr, nr     int
	mc, kc, nc int
	run        func(k int, a, b, c []T, ldc int, alpha, beta T)
}

// The kernels this CPU can run, fastest first; the portable Go kernel is
// always last. gemm_amd64.go prepends assembly ones at init.
var (
	kernelsF32 = []*gemmKernel[float32]{{"go", 4, 4, 128, 256, 2048, goKernel4x4[float32]}}
	kernelsF64 = []*gemmKernel[float64]{{"go", 4, 4, 128, 256, 2048, goKernel4x4[float64]}}
)

// gemmChoice indexes the kernel lists; tests move it to cover every kernel,
// the Go one included. 0 is the fastest.
var gemmChoice atomic.Int32

func gemmKernelFor[T float32 | float64]() *gemmKernel[T] {
	i := int(gemmChoice.Load())
	var z T
	if _, ok := any(z).(float32); ok {
		return any(kernelsF32[min(i, len(kernelsF32)-1)]).(*gemmKernel[T])
	}
	return any(kernelsF64[min(i, len(kernelsF64)-1)]).(*gemmKernel[T])
}

// goKernel4x4 is the portable microkernel: sixteen accumulators in locals,
// which fit the register file on arm64 and most other targets.
func goKernel4x4[T float32 | float64](k int, a, b, c []T, ldc int, alpha, beta T) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	a, b = a[:4*k], b[:4*k]
	for p := 0; p+4 <= len(a); p += 4 {
		ap, bp := a[p:p+4:p+4], b[p:p+4:p+4]
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	storeRow4(c[0:4:4], alpha, beta, c00, c01, c02, c03)
	storeRow4(c[ldc:ldc+4:ldc+4], alpha, beta, c10, c11, c12, c13)
	storeRow4(c[2*ldc:2*ldc+4:2*ldc+4], alpha, beta, c20, c21, c22, c23)
	storeRow4(c[3*ldc:3*ldc+4:3*ldc+4], alpha, beta, c30, c31, c32, c33)
}

func storeRow4[T float32 | float64](row []T, alpha, beta, v0, v1, v2, v3 T) {
	if beta == 0 {
		row[0], row[1], row[2], row[3] = alpha*v0, alpha*v1, alpha*v2, alpha*v3
		return
	}
	row[0] = alpha*v0 + beta*row[0]
	row[1] = alpha*v1 + beta*row[1]
	row[2] = alpha*v2 + beta*row[2]
	row[3] = alpha*v3 + beta*row[3]
}
