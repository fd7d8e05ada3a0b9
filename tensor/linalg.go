package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// MatMul returns the matrix product of a and b with torch.matmul's
// semantics:
//   - 1-D · 1-D is the dot product (a scalar);
//   - a 1-D a is a row vector [1, K] and a 1-D b a column [K, 1], and the
//     added axis is dropped from the result;
//   - otherwise the last two axes are matrices and the leading ones batch
//     axes, which broadcast as NumPy (so [B,H,T,D]·[B,H,D,T] and
//     [B,T,D]·[D,E] both work). Broadcast batches are stride-0 views: no
//     operand is copied.
func MatMul(a, b *Tensor) *Tensor {
	return routed("MatMul", familyMatMul, matmulSize(a, false, b, false), func() *Tensor {
		return gemm("MatMul", 1, a, false, b, false, 0, nil)
	}, &a, &b)
}

// MatMul returns t · b; see the package function MatMul.
func (t *Tensor) MatMul(b *Tensor) *Tensor { return MatMul(t, b) }

// Gemm returns alpha·op(a)·op(b) + beta·c, where op transposes the last
// two axes when trans is set (a view, not a copy), as BLAS's GEMM with
// torch.matmul's batching (a and b need ≥ 2 axes). c broadcasts to the
// result; it may be nil when beta is 0.
func Gemm(alpha float64, a *Tensor, transA bool, b *Tensor, transB bool, beta float64, c *Tensor) *Tensor {
	const op = "Gemm"
	return routed(op, familyMatMul, matmulSize(a, transA, b, transB), func() *Tensor {
		sameDevice(op, a, b)
		if len(a.shape) < 2 || len(b.shape) < 2 {
			misuse(op, "need tensors of rank ≥ 2, got %v and %v", a.shape, b.shape)
		}
		if c == nil && beta != 0 {
			misuse(op, "beta is %v but c is nil", beta)
		}
		return gemm(op, alpha, a, transA, b, transB, beta, c)
	}, &a, &b, &c)
}

// MatVec returns the matrix-vector product a·x of a [.., M, K] and x [K].
func MatVec(a, x *Tensor) *Tensor {
	const op = "MatVec"
	return routed(op, familyMatMul, matmulSize(a, false, x, false), func() *Tensor {
		sameDevice(op, a, x)
		if len(a.shape) < 2 || len(x.shape) != 1 {
			misuse(op, "need a matrix (rank ≥ 2) and a vector, got %v and %v", a.shape, x.shape)
		}
		return gemm(op, 1, a, false, x, false, 0, nil)
	}, &a, &x)
}

// Outer returns the outer product a ⊗ b of vectors a [M] and b [N], of
// shape [M, N]. Each element is one exact product (a broadcast Mul).
func Outer(a, b *Tensor) *Tensor {
	const op = "Outer"
	return routed(op, familyElementwise, elementwiseSize(a)*elementwiseSize(b), func() *Tensor {
		sameDevice(op, a, b)
		if len(a.shape) != 1 || len(b.shape) != 1 {
			misuse(op, "need two vectors, got %v and %v", a.shape, b.shape)
		}
		sameDType(op, a, b)
		checkOp(op, a.dev, a.dtype)
		col, row := a.Unsqueeze(1), b.Unsqueeze(0)
		defer releaseAll(col, row)
		return binaryOp(op, hal.Mul, col, row)
	}, &a, &b)
}

// gemm is the one implementation behind MatMul, Gemm and MatVec.
func gemm(op string, alpha float64, a *Tensor, transA bool, b *Tensor, transB bool, beta float64, c *Tensor) *Tensor {
	dev := sameDevice(op, a, b)
	sameDType(op, a, b)
	if c != nil {
		sameDevice(op, a, c)
		sameDType(op, a, c)
	}
	if len(a.shape) == 0 || len(b.shape) == 0 {
		misuse(op, "both operands need at least one axis, got %v and %v", a.shape, b.shape)
	}

	// Promote vectors to matrices and apply the transposes, as views.
	am, bm := a.alias(), b.alias()
	defer func() { releaseAll(am, bm) }()
	if len(a.shape) == 1 {
		am.Release()
		am = a.Unsqueeze(0)
	}
	if len(b.shape) == 1 {
		bm.Release()
		bm = b.Unsqueeze(1)
	}
	if transA {
		t := am.Transpose(-1, -2)
		am.Release()
		am = t
	}
	if transB {
		t := bm.Transpose(-1, -2)
		bm.Release()
		bm = t
	}
	ra, rb := len(am.shape), len(bm.shape)
	m, k := am.shape[ra-2], am.shape[ra-1]
	k2, n := bm.shape[rb-2], bm.shape[rb-1]
	if k != k2 {
		misuse(op, "shape mismatch: %v vs %v (inner dimensions %d and %d differ)", a.shape, b.shape, k, k2)
	}
	batch := broadcastShapes(op, am.shape[:ra-2], bm.shape[:rb-2])
	full := append(slices.Clone(batch), m, n)
	checkShape(op, full)

	// The result drops the axes that promotion added.
	result := slices.Clone(batch)
	if len(a.shape) > 1 {
		result = append(result, m)
	}
	if len(b.shape) > 1 {
		result = append(result, n)
	}
	if c != nil {
		if !slices.Equal(broadcastShapes(op, c.shape, result), result) {
			misuse(op, "c %v does not broadcast to the result %v", c.shape, result)
		}
	}
	checkOp(op, dev, a.dtype)
	dev.requireKernel(op, a.dtype, hal.KernelMatMul, a.dtype)

	if k == 0 {
		// An empty sum is zero: the result is beta·c (or zeros). The
		// kernel is not asked, because its operands are empty.
		if c == nil || beta == 0 {
			return zerosResult(op, dev, a.dtype, result, a, b)
		}
		cb := c.Expand(result...)
		defer cb.Release()
		return binaryScalar(op, hal.Mul, cb, beta)
	}

	inputs := []*Tensor{am, bm}
	if c == nil || beta == 0 {
		beta = 0 // MatMul then ignores dst's old contents
	} else {
		dev.requireKernel(op, a.dtype, hal.KernelCopy, a.dtype)
		inputs = append(inputs, c)
	}
	out := empty(op, dev, a.dtype, result)
	out.exec(op, inputs, func() error {
		if beta != 0 {
			if err := dev.hal.Copy(out.view(), c.expanded(result)); err != nil {
				return err
			}
		}
		// dst has the unpromoted shape's layout: the dropped axes had size 1.
		dst := hal.Contiguous(out.st.buf, out.dtype, full...)
		av := am.expanded(append(slices.Clone(batch), m, k))
		bv := bm.expanded(append(slices.Clone(batch), k, n))
		return dev.hal.MatMul(dst, av, bv, alpha, beta)
	})
	return out
}

// zerosResult is a zero-filled result that still carries the failures of
// inputs.
func zerosResult(op string, dev *Device, dtype DType, shape []int, inputs ...*Tensor) *Tensor {
	var out *Tensor
	if err := inputsErr(op, inputs...); err != nil {
		out = failedTensor(dev, dtype, shape, err)
	} else {
		out = full(op, dev, dtype, 0, shape)
	}
	adopt(out, inputs...)
	return out
}

var _ = registerOps(
	Op{Name: "MatMul", Family: FamilyLinalg, DTypes: allTypes, Kernels: one(hal.KernelMatMul)},
	Op{Name: "Gemm", Family: FamilyLinalg, DTypes: allTypes, Kernels: one(hal.KernelMatMul)},
	Op{Name: "MatVec", Family: FamilyLinalg, DTypes: allTypes, Kernels: one(hal.KernelMatMul)},
	Op{Name: "Outer", Family: FamilyLinalg, DTypes: allTypes, Kernels: one(hal.Mul.Kernel())},
)
