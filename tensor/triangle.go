package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Tril keeps the lower triangle of the last two dims (row i, column j with
// j − i ≤ diagonal) of every matrix in t and zeroes the rest, as
// torch.tril: diagonal 0 is the main diagonal, positive values keep more
// diagonals above it, negative ones fewer. Zeroed elements are 0 even where
// t holds NaN or ±Inf.
func (t *Tensor) Tril(diagonal int) *Tensor { return t.triangle("Tril", diagonal, hal.Ge) }

// Triu keeps the upper triangle (j − i ≥ diagonal) and zeroes the rest, as
// torch.triu.
func (t *Tensor) Triu(diagonal int) *Tensor { return t.triangle("Triu", diagonal, hal.Le) }

// triangle is one Where over a mask that the device computes from two
// Arange vectors (i + diagonal against j, broadcast to [rows, cols]): no
// mask is uploaded from the host, and the mask is rows × cols Int32 for
// any batch, which the Where broadcasts.
func (t *Tensor) triangle(op string, diagonal int, keep hal.BinaryOp) *Tensor {
	t.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(t), func() *Tensor {
		checkOp(op, t.dev, t.dtype)
		r := len(t.shape)
		if r < 2 {
			misuse(op, "need a tensor of rank ≥ 2 (matrices in the last two dims), got shape %v (%v on %s)", t.shape, t.dtype, t.dev.Name())
		}
		rows, cols := t.shape[r-2], t.shape[r-1]
		// Beyond ±(rows+cols) every diagonal keeps all or nothing.
		d := min(max(diagonal, -rows-1), cols+1)
		mask := triangleMask(op, t.dev, rows, cols, d, keep)
		zero := full(op, t.dev, t.dtype, 0, nil)
		defer releaseAll(mask, zero)
		return whereBroadcast(op, mask, t, zero, slices.Clone(t.shape))
	}, &t)
}

// triangleMask is the [rows, cols] Int32 mask (i + d) keep j.
func triangleMask(op string, dev *Device, rows, cols, d int, keep hal.BinaryOp) *Tensor {
	dev.requireKernel(op, Int32, hal.KernelFill, Int32)
	i := compute(op, dev, Int32, []int{rows, 1}, nil, func(dst hal.View) error {
		return dev.hal.Fill(dst, float64(d), 1)
	})
	j := compute(op, dev, Int32, []int{cols}, nil, func(dst hal.View) error {
		return dev.hal.Fill(dst, 0, 1)
	})
	defer releaseAll(i, j)
	return binaryOp(op, keep, i, j)
}

// whereBroadcast is Where with its operands broadcast to shape, for
// operands already placed and checked.
func whereBroadcast(op string, cond, a, b *Tensor, shape []int) *Tensor {
	dev := a.dev
	dev.requireKernel(op, a.dtype, hal.KernelWhere, a.dtype)
	return compute(op, dev, a.dtype, shape, []*Tensor{cond, a, b}, func(dst hal.View) error {
		return dev.hal.Where(dst, cond.expanded(shape), a.expanded(shape), b.expanded(shape))
	})
}

var _ = registerOps(
	Op{Name: "Tril", Family: FamilyShape, DTypes: kernelTypes(hal.KernelWhere), Kernels: triangleKernels},
	Op{Name: "Triu", Family: FamilyShape, DTypes: kernelTypes(hal.KernelWhere), Kernels: triangleKernels},
)

func triangleKernels(t DType) []Kernel {
	return kernels(k(hal.KernelFill, Int32), k(hal.Ge.Kernel(), Int32), k(hal.KernelFill, t), k(hal.KernelWhere, t))
}
