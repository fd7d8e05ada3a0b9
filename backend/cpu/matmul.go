package cpu

import (
	"github.com/webtensor/webtensor/hal"
)

// matmulGrain is the number of multiply-adds a goroutine of a batched
// product gets at least.
const matmulGrain = gemmParallelMin

// MatMul computes dst = alpha·a·b + beta·dst over the last two axes. Each
// product is one call of the packed, cache-blocked gemm (gemm.go, with
// AVX-512 or AVX2 microkernels on amd64), which
// reads a and b through their strides while packing, so transposed,
// broadcast and sliced operands need no copy. float16 is converted to
// float32, multiplied, and rounded back once.
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

// matrix returns batch element k's matrix.
func (m matrices[T]) matrix(k int) strided[T] {
	r := len(m.shape)
	off := m.off
	for i := r - 3; i >= 0; i-- {
		off += k % m.shape[i] * m.strides[i]
		k /= m.shape[i]
	}
	return strided[T]{m.data, off, m.strides[r-2], m.strides[r-1]}
}

func matmul[T float32 | float64](out, x, y operand, alpha, beta float64) {
	r := len(out.Shape)
	M, K, N := x.Shape[r-2], x.Shape[r-1], y.Shape[r-1]
	a, b := matricesOf[T](&x), matricesOf[T](&y)
	c, commit := output[T](&out, beta != 0)
	batches := out.Elements() / (M * N)
	mat := func(k, workers int) {
		gemmWorkers(workers, M, N, K, alpha, a.matrix(k), b.matrix(k), beta, c[k*M*N:(k+1)*M*N], N)
	}
	// Enough products to occupy every worker: one product per goroutine at
	// a time, each serial. Otherwise each product is split by gemm.
	if batches >= maxWorkers() && batches > 1 {
		parallelFor(batches, max(1, matmulGrain/max(1, M*N*K)), func(lo, hi int) {
			for k := lo; k < hi; k++ {
				mat(k, 1)
			}
		})
	} else {
		for k := range batches {
			mat(k, maxWorkers())
		}
	}
	commit()
}
