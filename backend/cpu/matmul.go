package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/webtensor/webtensor/hal"
)

// matmulGrain is the number of multiply-adds below which a batch of
// products runs one product per goroutine; above it each product is big
// enough for gonum to split it across goroutines itself.
const matmulGrain = 1 << 18

// MatMul computes dst = alpha·a·b + beta·dst over the last two axes. Each
// product is one gonum GEMM call: float32 through Sgemm and float64
// through Dgemm, which are blocked, parallel and use SIMD assembly (about
// 2× the best pure-Go loop on this machine). A matrix whose strides are
// row-major or transposed row-major goes to GEMM as it lies, with the
// transpose flag and leading dimension taken from its strides; any other
// (broadcast rows, a sliced inner axis) is packed first. float16 is
// converted to float32, multiplied, and rounded back once.
func (d *Device) MatMul(dst, a, b hal.View, alpha, beta float64) error {
	const op = "matmul"
	o, err := d.operands(op, "dst a b", dst, a, b)
	if err != nil {
		return err
	}
	out, x, y := o[0], o[1], o[2]
	if x.DType != y.DType || out.DType != x.DType {
		return errorf(op, hal.ErrInvalid, "a %s, b %s and dst %s differ in dtype", desc(x.View), desc(y.View), desc(out.View))
	}
	if !d.caps.Supports(hal.KernelMatMul, x.DType) {
		return unsupportedDType(op, x.DType)
	}
	r := len(out.Shape)
	if r < 2 || len(x.Shape) != r || len(y.Shape) != r ||
		!sameShape(x.Shape[:r-2], out.Shape[:r-2]) || !sameShape(y.Shape[:r-2], out.Shape[:r-2]) ||
		x.Shape[r-2] != out.Shape[r-2] || y.Shape[r-1] != out.Shape[r-1] || x.Shape[r-1] != y.Shape[r-2] {
		return errorf(op, hal.ErrInvalid, "a %s times b %s does not give dst %s", desc(x.View), desc(y.View), desc(out.View))
	}
	if err := needContiguous(op, "dst", out); err != nil {
		return err
	}
	if err := needDistinct(op, out, x, y); err != nil {
		return err
	}
	d.dispatch()
	if out.Elements() == 0 {
		return nil
	}
	switch x.DType {
	case hal.Float64:
		matmul[float64](out, x, y, alpha, beta)
	default:
		matmul[float32](out, x, y, alpha, beta)
	}
	return nil
}

// matrices is a batch of strided matrices in compute type T.
type matrices[T float32 | float64] struct {
	data    []T
	off     int
	strides []int
	shape   []int
}

func matricesOf[T float32 | float64](o *operand) matrices[T] {
	data, off, strides := dense[T](o)
	return matrices[T]{data, off, strides, o.Shape}
}

// matrix returns batch element k's matrix as GEMM wants it: a slice,
// whether it is stored transposed, and its leading dimension. pack is
// reusable space for the matrices that must be packed.
func (m matrices[T]) matrix(k int, pack *[]T) (data []T, trans bool, ld int) {
	r := len(m.shape)
	off := m.off
	for i := r - 3; i >= 0; i-- {
		off += k % m.shape[i] * m.strides[i]
		k /= m.shape[i]
	}
	rows, cols := m.shape[r-2], m.shape[r-1]
	rs, cs := m.strides[r-2], m.strides[r-1]
	// A size-1 axis may have any stride; the leading dimension only has
	// to be at least the other size for GEMM's checks.
	switch {
	case (cs == 1 || cols == 1) && (rows == 1 || rs >= cols):
		if rows == 1 {
			rs = cols
		}
		return m.data[off : off+(rows-1)*rs+cols], false, rs
	case (rs == 1 || rows == 1) && (cols == 1 || cs >= rows):
		if cols == 1 {
			cs = rows
		}
		return m.data[off : off+(cols-1)*cs+rows], true, cs
	}
	p := (*pack)[:0]
	for i := range rows {
		for j := range cols {
			p = append(p, m.data[off+i*rs+j*cs])
		}
	}
	*pack = p
	return p, false, cols
}

func matmul[T float32 | float64](out, x, y operand, alpha, beta float64) {
	r := len(out.Shape)
	M, K, N := x.Shape[r-2], x.Shape[r-1], y.Shape[r-1]
	a, b := matricesOf[T](&x), matricesOf[T](&y)
	c, commit := output[T](&out, beta != 0)
	batches := out.Elements() / (M * N)
	grain := max(1, matmulGrain/max(1, M*N*K))
	parallelFor(batches, grain, func(lo, hi int) {
		var packA, packB []T
		for k := lo; k < hi; k++ {
			ck := c[k*M*N : (k+1)*M*N]
			if K == 0 {
				// GEMM wants a nonzero leading dimension even for an
				// empty product, which is 0.
				if beta == 0 {
					clear(ck)
				}
				for i := range ck {
					ck[i] *= T(beta)
				}
				continue
			}
			ad, at, lda := a.matrix(k, &packA)
			bd, bt, ldb := b.matrix(k, &packB)
			gemm(at, bt, M, N, K, alpha, ad, lda, bd, ldb, beta, ck, N)
		}
	})
	commit()
}

func gemm[T float32 | float64](at, bt bool, m, n, k int, alpha float64, a []T, lda int, b []T, ldb int, beta float64, c []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if at {
		ta = blas.Trans
	}
	if bt {
		tb = blas.Trans
	}
	switch c := any(c).(type) {
	case []float32:
		blas32.Implementation().Sgemm(ta, tb, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		blas64.Implementation().Dgemm(ta, tb, m, n, k, alpha, any(a).([]float64), lda, any(b).([]float64), ldb, beta, c, ldc)
	}
}
