package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Softmax returns exp(x − logsumexp(x, dim)) along dim, as torch.softmax.
// dim may be negative (counting from the end). x must be a float tensor.
//
// It runs the device's fused softmax kernel where there is one, else its
// composition (hal.Optional): the row maximum subtracted, then the
// LogSumExp of what is left, and an Exp. Both subtract the maximum before
// exponentiating, so large logits neither overflow nor lose the small
// probabilities. The result has x's shape and dtype.
func Softmax(x *Tensor, dim int) *Tensor {
	const op = "Softmax"
	return routed(op, familyReduction, elementwiseSize(x), func() *Tensor {
		if y := fusedSoftmax(op, x, dim, false); y != nil {
			return y
		}
		return widened(x, func(x *Tensor) *Tensor {
			shifted := logSoftmax(op, x, dim)
			defer shifted.Release()
			return unary(op, hal.Exp, shifted, hal.Args{})
		})
	}, &x)
}

// LogSoftmax returns x − logsumexp(x, dim) along dim, as
// torch.log_softmax: the logarithm of Softmax, computed without ever
// forming the (possibly underflowing) probabilities.
func LogSoftmax(x *Tensor, dim int) *Tensor {
	const op = "LogSoftmax"
	return routed(op, familyReduction, elementwiseSize(x), func() *Tensor {
		if y := fusedSoftmax(op, x, dim, true); y != nil {
			return y
		}
		return widened(x, func(x *Tensor) *Tensor { return logSoftmax(op, x, dim) })
	}, &x)
}

// Softmax returns exp(t − logsumexp(t, dim)) along dim; see the package
// function Softmax.
func (t *Tensor) Softmax(dim int) *Tensor { return Softmax(t, dim) }

// LogSoftmax returns t − logsumexp(t, dim) along dim; see the package
// function LogSoftmax.
func (t *Tensor) LogSoftmax(dim int) *Tensor { return LogSoftmax(t, dim) }

// fusedSoftmax runs the device's Softmax kernel over dim, or returns nil
// when the device has none for x's dtype (or x is a scalar, which the
// reduction path handles). The kernel works on the last axis, reading any
// strides, so another dim is moved there by a view and the result moved
// back by one copy.
func fusedSoftmax(op string, x *Tensor, dim int, log bool) *Tensor {
	nnCheckFloat(op, "input", x)
	axis := nnAxis(op, x, dim)
	checkOp(op, x.dev, x.dtype)
	if x.Rank() == 0 || !x.dev.caps().Supports(hal.KernelSoftmax, x.dtype) {
		return nil
	}
	last := x.Rank() - 1
	src := x
	if axis != last {
		src = x.Transpose(axis, last)
		defer src.Release()
	}
	y := compute(op, x.dev, x.dtype, slices.Clone(src.shape), []*Tensor{src}, func(dst hal.View) error {
		return x.dev.hal.Softmax(dst, src.view(), log)
	})
	if axis == last {
		return y
	}
	defer y.Release()
	back := y.Transpose(axis, last)
	defer back.Release()
	return back.Contiguous()
}

func logSoftmax(op string, x *Tensor, dim int) *Tensor {
	nnCheckFloat(op, "input", x)
	axis := nnAxis(op, x, dim)
	checkOp(op, x.dev, x.dtype)
	if x.Rank() == 0 {
		// A scalar is a distribution over one outcome; give the reduction
		// an axis to work on and drop it again.
		row := x.Reshape(1)
		defer row.Release()
		out := logSoftmax(op, row, 0)
		defer out.Release()
		return out.Reshape()
	}
	// Shifting by the maximum first keeps the result as accurate as the
	// fused kernel's for large logits: x − logsumexp(x) would subtract a
	// rounded logsumexp of their magnitude.
	m := x.reduceHere(op, hal.Max, []int{axis}, true)
	defer m.Release()
	shifted := binaryOp(op, hal.Sub, x, m)
	defer shifted.Release()
	lse := shifted.reduceHere(op, hal.LogSumExp, []int{axis}, true)
	defer lse.Release()
	return binaryOp(op, hal.Sub, shifted, lse)
}
