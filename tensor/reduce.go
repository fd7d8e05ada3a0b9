package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Reductions take dims (negative allowed; nil or empty means every axis)
// and keepDim (keep reduced axes as size 1, so the result broadcasts
// against the input). The hal reduces the last k axes of a strided view,
// so reduce permutes the reduced axes to the end — a view, no copy — and
// hands the kernel that.

// Sum returns the sum over dims; the sum of no elements is 0.
func (t *Tensor) Sum(dims []int, keepDim bool) *Tensor {
	return t.reduce("Sum", hal.Sum, dims, keepDim)
}

// Prod returns the product over dims; the product of no elements is 1.
func (t *Tensor) Prod(dims []int, keepDim bool) *Tensor {
	return t.reduce("Prod", hal.Prod, dims, keepDim)
}

// Max returns the maximum over dims; NaN propagates. Reducing an empty
// axis (to a non-empty result) is misuse, as in torch.
func (t *Tensor) Max(dims []int, keepDim bool) *Tensor {
	return t.reduce("Max", hal.Max, dims, keepDim)
}

// Min returns the minimum over dims; see Max.
func (t *Tensor) Min(dims []int, keepDim bool) *Tensor {
	return t.reduce("Min", hal.Min, dims, keepDim)
}

// LogSumExp returns ln Σ eˣ over dims, computed stably (the maximum is
// subtracted first); over no elements it is −Inf.
func (t *Tensor) LogSumExp(dims []int, keepDim bool) *Tensor {
	return t.reduce("LogSumExp", hal.LogSumExp, dims, keepDim)
}

// Mean returns the arithmetic mean over dims (NaN over no elements). An
// Int32 tensor averages in Float32; a Float16 one sums and divides in
// Float32 and rounds the mean to Float16 once, as torch accumulates it.
func (t *Tensor) Mean(dims []int, keepDim bool) *Tensor {
	const op = "Mean"
	t.checkLive(op)
	return routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		checkOp(op, t.dev, t.dtype)
		return inFloat32(t, func(x *Tensor) *Tensor { return x.mean(op, dims, keepDim) })
	}, &t)
}

// inFloat32 runs a statistic f (Mean, Var, Std) on a Float16 t widened to
// Float32 and rounds f's result to Float16 once: a float16 sum overflows
// past 65504 (and loses a bit of precision per term long before), where
// the mean or variance it leads to fits. Other dtypes go to f as they are.
func inFloat32(t *Tensor, f func(x *Tensor) *Tensor) *Tensor {
	if t.dtype != Float16 {
		return f(t)
	}
	wide := t.Cast(Float32)
	defer wide.Release()
	r := f(wide)
	defer r.Release()
	return r.Cast(Float16)
}

// mean is Mean on t's device, for Mean and the composite ops built on it;
// op names their failures.
func (t *Tensor) mean(op string, dims []int, keepDim bool) *Tensor {
	x := t.floating()
	defer x.Release()
	sum := x.reduceHere(op, hal.Sum, dims, keepDim)
	defer sum.Release()
	return binaryScalar(op, hal.Div, sum, float64(reducedCount(op, x, dims)))
}

// Var returns the variance over dims with Bessel's correction generalized
// as torch: Σ(x − mean)² / max(0, n − correction). correction 1 is the
// unbiased estimate, 0 the population variance. It takes two passes (the
// mean first), which is stable where the one-pass formula cancels. An
// Int32 tensor computes in Float32; a Float16 one computes in Float32 and
// rounds the result to Float16 once, as Mean.
func (t *Tensor) Var(dims []int, correction int, keepDim bool) *Tensor {
	return t.variance("Var", dims, correction, keepDim)
}

// Std returns the square root of Var.
func (t *Tensor) Std(dims []int, correction int, keepDim bool) *Tensor {
	return t.variance("Std", dims, correction, keepDim)
}

// variance is the entry of Var and Std (op), which takes the square root.
func (t *Tensor) variance(op string, dims []int, correction int, keepDim bool) *Tensor {
	t.checkLive(op)
	return routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		checkOp(op, t.dev, t.dtype)
		return inFloat32(t, func(t *Tensor) *Tensor {
			x := t.floating()
			defer x.Release()
			n := reducedCount(op, x, dims)
			mean := x.mean(op, dims, true)
			dev := binaryOp(op, hal.Sub, x, mean)
			sq := unary(op, hal.Square, dev, hal.Args{})
			sum := sq.reduceHere(op, hal.Sum, dims, keepDim)
			v := binaryScalar(op, hal.Div, sum, float64(max(0, n-correction)))
			releaseAll(mean, dev, sq, sum)
			if op != "Std" {
				return v
			}
			defer v.Release()
			return unary(op, hal.Sqrt, v, hal.Args{})
		})
	}, &t)
}

// floating returns t, or t cast to Float32 when it is Int32, as a new
// reference either way.
func (t *Tensor) floating() *Tensor {
	if t.dtype.IsInteger() {
		return t.Cast(Float32)
	}
	return t.alias()
}

// ArgMax returns the Int32 index of the maximum: over the flattened tensor
// when dims is nil or empty, else along the single dim given. Ties go to
// the first; NaN counts as the maximum.
func (t *Tensor) ArgMax(dims []int, keepDim bool) *Tensor {
	return t.argReduce("ArgMax", hal.ArgMax, dims, keepDim)
}

// ArgMin returns the Int32 index of the minimum; see ArgMax.
func (t *Tensor) ArgMin(dims []int, keepDim bool) *Tensor {
	return t.argReduce("ArgMin", hal.ArgMin, dims, keepDim)
}

func (t *Tensor) argReduce(op string, kernel hal.ReduceOp, dims []int, keepDim bool) *Tensor {
	t.checkLive(op)
	if len(dims) > 1 {
		misuse(op, "reduces one dim or all (nil), got %v", dims)
	}
	return t.reduce(op, kernel, dims, keepDim)
}

// reduce is the entry of the ops of one hal reduction over dims.
func (t *Tensor) reduce(op string, kernel hal.ReduceOp, dims []int, keepDim bool) *Tensor {
	t.checkLive(op)
	return routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		return t.reduceHere(op, kernel, dims, keepDim)
	}, &t)
}

// reduceHere is reduce on t's device, for reduce and the composite ops.
func (t *Tensor) reduceHere(op string, kernel hal.ReduceOp, dims []int, keepDim bool) *Tensor {
	checkOp(op, t.dev, t.dtype)
	reduced := reducedAxes(op, t, dims)
	isReduced := make([]bool, len(t.shape))
	for _, a := range reduced {
		isReduced[a] = true
	}
	var perm, outShape, keptShape []int
	for a, d := range t.shape {
		if isReduced[a] {
			keptShape = append(keptShape, 1)
			continue
		}
		perm = append(perm, a)
		outShape = append(outShape, d)
		keptShape = append(keptShape, d)
	}
	perm = append(perm, reduced...)

	count := 1
	for _, a := range reduced {
		count *= t.shape[a]
	}
	emptyIsError := kernel == hal.Max || kernel == hal.Min || kernel == hal.ArgMax || kernel == hal.ArgMin
	if emptyIsError && count == 0 && numElements(op, outShape) > 0 {
		misuse(op, "reducing %v over dims %v: the reduction of no elements has no identity", t.shape, dims)
	}
	t.dev.requireKernel(op, t.dtype, kernel.Kernel(), t.dtype)
	result := t.dtype
	if kernel == hal.ArgMax || kernel == hal.ArgMin {
		result = Int32
	}

	src := t.permute(perm)
	defer src.Release()
	out := compute(op, t.dev, result, outShape, []*Tensor{src}, func(dst hal.View) error {
		return t.dev.hal.Reduce(kernel, dst, src.view(), len(reduced))
	})
	if !keepDim || slices.Equal(outShape, keptShape) {
		return out
	}
	defer out.Release()
	return out.newView(keptShape, hal.RowMajorStrides(keptShape), 0)
}

// reducedAxes resolves the dims of a reduction. A scalar accepts dim 0 or
// −1 as torch does, reducing nothing.
func reducedAxes(op string, t *Tensor, dims []int) []int {
	if len(t.shape) == 0 {
		for _, d := range dims {
			if d != 0 && d != -1 {
				misuse(op, "dim %d is out of range for a scalar (want 0 or −1)", d)
			}
		}
		return nil
	}
	return axes(op, dims, len(t.shape))
}

// reducedCount is the number of elements each output of a reduction over
// dims combines.
func reducedCount(op string, t *Tensor, dims []int) int {
	n := 1
	for _, a := range reducedAxes(op, t, dims) {
		n *= t.shape[a]
	}
	return n
}

var _ = registerOps(reductionOps()...)

func reductionOps() []Op {
	var ops []Op
	// Each reduction kernel is the op of its name, defined for the
	// kernel's dtypes.
	for _, r := range hal.ReduceOps {
		ops = append(ops, Op{Name: r.Info().Name, Family: FamilyReduction, DTypes: kernelTypes(r.Kernel()), Kernels: one(r.Kernel())})
	}
	// Mean is a sum divided by a filled scalar; Var and Std add the
	// deviations pass. Float16 computes them in Float32 (inFloat32), with
	// a cast each way.
	mean := func(t DType) []Kernel {
		ct := statType(t)
		return append(statCasts(t), k(hal.Sum.Kernel(), ct), k(hal.KernelFill, ct), k(hal.Div.Kernel(), ct))
	}
	variance := func(t DType) []Kernel {
		ct := statType(t)
		return append(mean(t), k(hal.Sub.Kernel(), ct), k(hal.Square.Kernel(), ct))
	}
	return append(ops,
		Op{Name: "Mean", Family: FamilyReduction, DTypes: allTypes, Kernels: mean},
		Op{Name: "Var", Family: FamilyReduction, DTypes: allTypes, Kernels: variance},
		Op{Name: "Std", Family: FamilyReduction, DTypes: allTypes, Kernels: func(t DType) []Kernel {
			return append(variance(t), k(hal.Sqrt.Kernel(), statType(t)))
		}},
	)
}

// statType is the dtype Mean, Var and Std of a t tensor compute in:
// Float32 for Int32 and Float16, else t.
func statType(t DType) DType {
	if t == Float16 {
		return Float32
	}
	return computeType(t)
}

// statCasts are the casts Mean, Var and Std of a t tensor go through:
// Int32 to Float32; Float16 to Float32 and the result back.
func statCasts(t DType) []Kernel {
	if t == Float16 {
		return kernels(k(hal.KernelCopy, Float32), k(hal.KernelCopy, Float16))
	}
	return toFloat32(t)
}
