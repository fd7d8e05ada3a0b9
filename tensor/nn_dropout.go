package tensor

import "github.com/webtensor/webtensor/hal"

// Dropout zeroes each element of x with probability p and scales the rest
// by 1/(1−p), as torch.nn.functional.dropout, so the expected value of
// every element is unchanged.
//
// The keep mask is drawn on the device from g's Bernoulli stream (Philox,
// keep probability 1−p), so the same generator state gives the same mask
// on every backend; g advances by x.Len(). As in PyTorch the mask is
// scaled first (mask/(1−p), in x's dtype) and then multiplied by x, so the
// results round the same way.
//
// With p = 0 or outside training the result is a view of x (sharing its
// memory, no copy, g untouched) that must be released like any other
// result. With p = 1 it is x·0, as PyTorch: zeros for finite x.
func Dropout(x *Tensor, p float64, training bool, g *Generator) *Tensor {
	const op = "Dropout"
	nnCheckFloat(op, "input", x)
	if !(p >= 0 && p <= 1) {
		misuse(op, "probability %v must be in [0, 1]", p)
	}
	if !training || p == 0 {
		return x.Reshape(x.shape...)
	}
	var offset uint64
	rerun := false
	return routed(op, familyElementwise, elementwiseSize(x), func() *Tensor {
		if g != nil {
			// A rerun on the CPU, after the GPU ran out of memory, draws
			// the mask that the failed run drew.
			if rerun {
				g.SetOffset(offset)
			}
			offset, rerun = g.Offset(), true
		}
		return dropout(op, x, p, g)
	}, &x)
}

// dropout is Dropout in training on x's device.
func dropout(op string, x *Tensor, p float64, g *Generator) *Tensor {
	checkOp(op, x.dev, x.dtype)
	if p == 1 {
		// 1/(1−p) is infinite; PyTorch multiplies by zero instead.
		return binaryScalar(op, hal.Mul, x, 0)
	}
	if g == nil {
		misuse(op, "nil generator")
	}
	var tmp nnScope
	defer tmp.release()
	keep := tmp.add(g.Bernoulli(x.dev, 1-p, x.shape...))
	if keep.DType() != x.DType() {
		keep = tmp.add(keep.Cast(x.DType()))
	}
	scaled := tmp.add(binaryScalar(op, hal.Div, keep, 1-p))
	return binaryOp(op, hal.Mul, x, scaled)
}
