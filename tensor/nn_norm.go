package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// BatchNorm normalizes x [N, C, …] (at least 2-D) per channel C, as
// torch.nn.functional.batch_norm:
//
//	y = (x − mean) / √(var + eps) · weight + bias
//
// In training, mean and var are the batch's statistics over every axis but
// the channel axis (var biased, as PyTorch normalizes), and the running
// statistics, when given, are updated in place:
//
//	running = (1 − momentum)·running + momentum·batch
//
// with the unbiased variance for runningVar. In place means the new values
// are written into the running tensors' memory, so every view of them sees
// them. (PyTorch's momentum=None, a cumulative average, is momentum
// 1/k at the k-th batch.) Training needs more than one value per channel.
//
// Out of training, mean and var are runningMean and runningVar, which are
// then required. weight, bias,
// runningMean and runningVar are [C] tensors of x's dtype, or nil (weight
// 1, bias 0, no running statistics).
func BatchNorm(x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	const op = "BatchNorm"
	run := func() *Tensor {
		return batchNorm(op, x, runningMean, runningVar, weight, bias, training, momentum, eps)
	}
	if training && (runningMean != nil || runningVar != nil) {
		// The running statistics are updated in place: it runs where they
		// are.
		defer releaseAll(routeInPlace(op, []*Tensor{runningMean, runningVar}, &x, &weight, &bias)...)
		return run()
	}
	return routed(op, familyReduction, elementwiseSize(x), run, &x, &runningMean, &runningVar, &weight, &bias)
}

// batchNorm is BatchNorm on its operands' device.
func batchNorm(op string, x, runningMean, runningVar, weight, bias *Tensor, training bool, momentum, eps float64) *Tensor {
	nnCheckFloat(op, "input", x)
	if x.Rank() < 2 {
		misuse(op, "input %s must be at least 2-D [N, C, …]", nnDescribe(x))
	}
	c := x.shape[1]
	params := []struct {
		name string
		t    *Tensor
	}{{"runningMean", runningMean}, {"runningVar", runningVar}, {"weight", weight}, {"bias", bias}}
	for i, p := range params {
		if p.t == nil {
			continue
		}
		nnCheckParam(op, p.name, p.t, x, []int{c})
		if i < 2 && training && c > 1 && p.t.strides[0] == 0 {
			// The in-place update would write several channels into one
			// element.
			misuse(op, "%s %s is a broadcast view (stride 0); it is updated in place and needs one element per channel",
				p.name, nnDescribe(p.t))
		}
	}
	if !training && (runningMean == nil || runningVar == nil) {
		misuse(op, "evaluation mode needs runningMean and runningVar")
	}
	if momentum < 0 || momentum > 1 {
		misuse(op, "momentum %v must be in [0, 1]", momentum)
	}
	if eps < 0 {
		misuse(op, "eps %v must not be negative", eps)
	}
	count := x.Len() / max(c, 1) // values per channel
	if training && count <= 1 && x.Len() > 0 {
		misuse(op, "training needs more than 1 value per channel, input %s has %d", nnDescribe(x), count)
	}
	checkOp(op, x.dev, x.dtype)

	// Statistics broadcast as [1, C, 1, …] against x.
	statShape := make([]int, x.Rank())
	for i := range statShape {
		statShape[i] = 1
	}
	statShape[1] = c
	reduced := []int{0}
	for i := 2; i < x.Rank(); i++ {
		reduced = append(reduced, i)
	}

	var tmp nnScope
	defer tmp.release()
	var mean, variance, centered *Tensor
	if training {
		mean = tmp.add(x.mean(op, reduced, true))
		centered = tmp.add(binaryOp(op, hal.Sub, x, mean))
		// The biased variance from the centered values the output needs
		// anyway (Var would center x a second time).
		variance = tmp.add(tmp.add(unary(op, hal.Square, centered, hal.Args{})).mean(op, reduced, true))
		// An empty batch has no statistics (its mean is NaN): the running
		// ones stay as they are, as torch returns early for it.
		empty := x.Len() == 0
		if runningMean != nil && !empty {
			batch := tmp.add(mean.Reshape(c))
			nnUpdateRunning(op, runningMean, batch, momentum, 1)
		}
		if runningVar != nil && !empty {
			batch := tmp.add(variance.Reshape(c))
			// Bessel's correction for the running estimate, as PyTorch.
			nnUpdateRunning(op, runningVar, batch, momentum, float64(count)/float64(count-1))
		}
	} else {
		mean = tmp.add(runningMean.Reshape(statShape...))
		variance = tmp.add(runningVar.Reshape(statShape...))
		centered = tmp.add(binaryOp(op, hal.Sub, x, mean))
	}
	scale := tmp.add(unary(op, hal.Rsqrt, tmp.add(binaryScalar(op, hal.Add, variance, eps)), hal.Args{}))
	if weight != nil {
		w := tmp.add(weight.Reshape(statShape...))
		scale = tmp.add(binaryOp(op, hal.Mul, scale, w))
	}
	// (x − mean)·scale rather than x·scale − mean·scale: subtracting first
	// keeps the precision when |mean| ≫ std.
	if bias == nil {
		return binaryOp(op, hal.Mul, centered, scale)
	}
	scaled := tmp.add(binaryOp(op, hal.Mul, centered, scale))
	b := tmp.add(bias.Reshape(statShape...))
	return binaryOp(op, hal.Add, scaled, b)
}

// nnUpdateRunning sets running = (1 − momentum)·running + momentum·factor·batch
// in place, so the caller's tensor (and every view of it) sees the update.
func nnUpdateRunning(op string, running, batch *Tensor, momentum, factor float64) {
	var tmp nnScope
	defer tmp.release()
	kept := tmp.add(binaryScalar(op, hal.Mul, running, 1-momentum))
	fresh := tmp.add(binaryScalar(op, hal.Mul, batch, momentum*factor))
	updated := tmp.add(binaryOp(op, hal.Add, kept, fresh))
	nnAssign(op, running, updated)
}

// LayerNorm normalizes x over its trailing axes normalizedShape, as
// torch.nn.functional.layer_norm:
//
//	y = (x − mean) / √(var + eps) · weight + bias
//
// with the mean and biased variance over those axes. weight and bias have
// shape normalizedShape and x's dtype, or are nil.
func LayerNorm(x *Tensor, normalizedShape []int, weight, bias *Tensor, eps float64) *Tensor {
	const op = "LayerNorm"
	return routed(op, familyReduction, elementwiseSize(x), func() *Tensor {
		return layerNorm(op, x, normalizedShape, weight, bias, eps)
	}, &x, &weight, &bias)
}

// layerNorm is LayerNorm on its operands' device.
func layerNorm(op string, x *Tensor, normalizedShape []int, weight, bias *Tensor, eps float64) *Tensor {
	nnCheckFloat(op, "input", x)
	k := len(normalizedShape)
	if k == 0 {
		misuse(op, "normalizedShape must name at least one axis")
	}
	if k > x.Rank() || !slices.Equal(x.shape[x.Rank()-k:], normalizedShape) {
		misuse(op, "input %s does not end with normalizedShape %v", nnDescribe(x), normalizedShape)
	}
	if weight != nil {
		nnCheckParam(op, "weight", weight, x, normalizedShape)
	}
	if bias != nil {
		nnCheckParam(op, "bias", bias, x, normalizedShape)
	}
	if eps < 0 {
		misuse(op, "eps %v must not be negative", eps)
	}
	checkOp(op, x.dev, x.dtype)

	var tmp nnScope
	defer tmp.release()
	y := fusedLayerNorm(op, x, k, eps)
	if y == nil {
		y = composedLayerNorm(op, x, k, eps)
	}
	// weight and bias broadcast over the leading axes as they are.
	if weight != nil {
		tmp.add(y)
		y = binaryOp(op, hal.Mul, y, weight)
	}
	if bias != nil {
		tmp.add(y)
		y = binaryOp(op, hal.Add, y, bias)
	}
	return y
}

// fusedLayerNorm runs the device's LayerNorm kernel over x's last k axes,
// or returns nil when the device has none for x's dtype. The kernel
// normalizes rows along the last axis, reading any strides: one trailing
// axis is passed as it is, several are collapsed into one row axis by a
// reshape (a view of contiguous x, else a copy).
func fusedLayerNorm(op string, x *Tensor, k int, eps float64) *Tensor {
	if !x.dev.caps().Supports(hal.KernelLayerNorm, x.dtype) {
		return nil
	}
	rank := x.Rank()
	src := x
	if k > 1 {
		rowLen := 1
		for _, d := range x.shape[rank-k:] {
			rowLen *= d
		}
		src = x.Reshape(append(slices.Clone(x.shape[:rank-k]), rowLen)...)
		defer src.Release()
	}
	y := compute(op, x.dev, x.dtype, slices.Clone(src.shape), []*Tensor{src}, func(dst hal.View) error {
		return x.dev.hal.LayerNorm(dst, src.view(), eps)
	})
	if k == 1 {
		return y
	}
	defer y.Release()
	return y.Reshape(x.shape...)
}

// composedLayerNorm is LayerNorm's normalization without the kernel
// (hal.Optional): the mean, the centered values, the mean of their
// squares (the biased variance, two-pass), eps, rsqrt and a product.
func composedLayerNorm(op string, x *Tensor, k int, eps float64) *Tensor {
	reduced := make([]int, k)
	for i := range reduced {
		reduced[i] = x.Rank() - k + i
	}
	var tmp nnScope
	defer tmp.release()
	mean := tmp.add(x.mean(op, reduced, true))
	centered := tmp.add(binaryOp(op, hal.Sub, x, mean))
	variance := tmp.add(tmp.add(unary(op, hal.Square, centered, hal.Args{})).mean(op, reduced, true)) // biased, two-pass
	inv := tmp.add(unary(op, hal.Rsqrt, tmp.add(binaryScalar(op, hal.Add, variance, eps)), hal.Args{}))
	return binaryOp(op, hal.Mul, centered, inv)
}

// nnCheckParam checks a normalization parameter: live, on x's device, of
// x's dtype and the given shape.
func nnCheckParam(op, name string, p, x *Tensor, shape []int) {
	p.checkLive(op)
	if p.dev != x.dev {
		misuse(op, "%s is on %s, input on %s", name, p.dev.Name(), x.dev.Name())
	}
	if !slices.Equal(p.shape, shape) {
		misuse(op, "%s %s must have shape %v for input %s", name, nnDescribe(p), shape, nnDescribe(x))
	}
	if p.DType() != x.DType() {
		misuse(op, "%s %s and input %s have different dtypes", name, nnDescribe(p), nnDescribe(x))
	}
}
