package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// matmulGonum computes dst[m×n] = a[m×k]·b[k×n] with gonum's Sgemm, which
// is blocked, parallel and uses SIMD assembly for its inner loops.
func matmulGonum(dst, a, b []float32, m, k, n int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		// BLAS rejects a zero leading dimension; the empty sum is zero.
		clear(dst[:m*n])
		return
	}
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas32.General{Rows: m, Cols: k, Stride: k, Data: a[:m*k]},
		blas32.General{Rows: k, Cols: n, Stride: n, Data: b[:k*n]},
		0,
		blas32.General{Rows: m, Cols: n, Stride: n, Data: dst[:m*n]})
}
