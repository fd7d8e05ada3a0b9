package tensor_test

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// Least squares: the line y ≈ c₀ + c₁·x through four points, from the
// normal equations (XᵀX)·c = Xᵀy with Solve, and from QR (R·c = Qᵀy),
// which is better conditioned.
func ExampleSolve() {
	dev, _ := tensor.Open("cpu")
	x := tensor.FromFloat64(dev, []float64{1, 0, 1, 1, 1, 2, 1, 3}, 4, 2) // columns 1, x
	y := tensor.FromFloat64(dev, []float64{1, 3, 5, 7.5}, 4)
	xt := x.T()
	normal := tensor.MatMul(xt, x)
	rhs := tensor.MatVec(xt, y)
	c := tensor.Solve(normal, rhs)

	q, r := tensor.QR(x, tensor.QRReduced)
	qty := tensor.MatVec(q.T(), y)
	c2 := tensor.Solve(r, qty)
	for _, t := range []*tensor.Tensor{x, y, xt, normal, rhs, c, q, r, qty, c2} {
		defer t.Release()
	}
	v, _ := c.Float64s()
	v2, _ := c2.Float64s()
	fmt.Printf("normal equations: %.3f\nQR:               %.3f\n", v, v2)
	// Output:
	// normal equations: [0.900 2.150]
	// QR:               [0.900 2.150]
}

// Whitening: with Σ = L·Lᵀ the covariance of the rows of x, x·L⁻ᵀ has
// identity covariance; Eigh gives Σ's principal axes, and a matrix that
// is not positive-definite fails Cholesky with PyTorch's message.
func ExampleCholesky() {
	dev, _ := tensor.Open("cpu")
	sigma := tensor.FromFloat64(dev, []float64{4, 2, 2, 3}, 2, 2)
	l := tensor.Cholesky(sigma, false)
	w, v := tensor.Eigh(sigma, false)
	bad := tensor.FromFloat64(dev, []float64{1, 2, 2, 1}, 2, 2)
	failed := tensor.Cholesky(bad, false)
	for _, t := range []*tensor.Tensor{sigma, l, w, v, bad, failed} {
		defer t.Release()
	}
	lv, _ := l.Float64s()
	wv, _ := w.Float64s()
	fmt.Printf("L = %.4f\neigenvalues %.4f\n", lv, wv)
	_, err := failed.Float64s()
	fmt.Println(errors.Is(err, hal.ErrNotPositiveDefinite))
	fmt.Println(err)
	// Output:
	// L = [2.0000 0.0000 1.0000 1.4142]
	// eigenvalues [1.4384 5.5616]
	// true
	// tensor: Cholesky: [2 2] float64 on cpu: linalg.cholesky: (Batch element 0): The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite)
}

// SVD and its singular values alone; U·diag(S)·Vh rebuilds the matrix.
func ExampleSVD() {
	dev, _ := tensor.Open("cpu")
	a := tensor.FromFloat32(dev, []float32{3, 0, 0, 0, 2, 0}, 2, 3)
	u, s, vh := tensor.SVD(a, false)
	vals := tensor.SVDVals(a)
	for _, t := range []*tensor.Tensor{a, u, s, vh, vals} {
		defer t.Release()
	}
	sv, _ := s.Float32s()
	fmt.Println(u.Shape(), sv, vh.Shape())
	// Output: [2 2] [3 2] [2 3]
}
