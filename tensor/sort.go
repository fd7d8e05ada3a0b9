package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Sorting and scans along one dim, as torch.sort, argsort, topk,
// kthvalue, cumsum, cumprod and logcumsumexp. The hal kernels (Sort,
// Scan) work along the last axis of a strided view, so another dim is
// moved there by a transposed view (no copy) and the result moved back by
// one copy. Indices are Int32 on every device, as ArgMax's (PyTorch's are
// int64: Cast when it matters); a row longer than 2³¹ − 1 elements cannot
// be indexed and is hal.ErrTooLarge.

// Sort returns t sorted along dim and, as Int32, the position along dim
// each value came from, as torch.sort. Ascending order puts NaN after +Inf
// (descending: first); −0 and +0 are equal. With stable, equal values
// (NaNs included) keep their input order, as torch.sort(stable=True);
// without it, their order is unspecified (both backends happen to be
// stable). dim may be negative. t may be any dtype the device sorts
// (Float32, Float16 where the device computes in it, Float64 and Int64 on
// the CPU, Int32).
func (t *Tensor) Sort(dim int, descending, stable bool) (values, indices *Tensor) {
	const op = "Sort"
	t.checkLive(op)
	values = routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		// A run that ran out of GPU memory left its indices here.
		indices.Release()
		var v *Tensor
		v, indices = sortAlong(op, t, dim, descending, stable)
		return v
	}, &t)
	return values, indices
}

// Argsort returns the Int32 positions that sort t along dim, as
// torch.argsort: the indices of Sort.
func (t *Tensor) Argsort(dim int, descending, stable bool) *Tensor {
	const op = "Argsort"
	t.checkLive(op)
	return routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		v, i := sortAlong(op, t, dim, descending, stable)
		v.Release()
		return i
	}, &t)
}

// TopK returns the k largest (largest) or smallest elements of t along
// dim and their Int32 positions, as torch.topk. NaN counts as larger than
// every number, as in torch: it comes first among the largest and last
// among the smallest. With sorted the values are in order (descending for
// largest); without it their order is unspecified (they are sorted
// anyway). k must be in 0 … the size of dim.
func (t *Tensor) TopK(k, dim int, largest, sorted bool) (values, indices *Tensor) {
	const op = "TopK"
	t.checkLive(op)
	a := sortAxis(op, t, dim)
	if n := dimSize(t, a); k < 0 || k > n {
		misuse(op, "k %d is out of range for dim %d of size %d (want 0 … %d) of %v %v on %v", k, dim, n, n, t.shape, t.dtype, t.dev)
	}
	values = routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		indices.Release()
		v, i := sortAlong(op, t, dim, largest, true)
		defer releaseAll(v, i)
		vk, ik := firstAlong(op, v, i, a, 0, k)
		indices = ik
		return vk
	}, &t)
	return values, indices
}

// KthValue returns the k-th smallest element of t along dim (k counts
// from 1) and its Int32 position, as torch.kthvalue; NaN counts as larger
// than every number. With keepDim dim stays, as size 1. Which of several
// equal elements gives the position is unspecified (here the first).
func (t *Tensor) KthValue(k, dim int, keepDim bool) (values, indices *Tensor) {
	const op = "KthValue"
	t.checkLive(op)
	a := sortAxis(op, t, dim)
	if n := dimSize(t, a); k < 1 || k > n {
		misuse(op, "k %d is out of range for dim %d of size %d (want 1 … %d) of %v %v on %v", k, dim, n, n, t.shape, t.dtype, t.dev)
	}
	values = routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		indices.Release()
		v, i := sortAlong(op, t, dim, false, true)
		defer releaseAll(v, i)
		vk, ik := firstAlong(op, v, i, a, k-1, k)
		if keepDim || t.Rank() == 0 {
			indices = ik
			return vk
		}
		defer releaseAll(vk, ik)
		indices = ik.Squeeze(a)
		return vk.Squeeze(a)
	}, &t)
	return values, indices
}

// Cumsum returns the inclusive cumulative sum of t along dim, as
// torch.cumsum: element i is the sum of elements 0 … i. An Int32 tensor
// sums in Int32, wrapping (torch gives int64); a float one in its own
// dtype, whose rounding depends on the order of additions, which differs
// by device (the CPU accumulates in float64, WebGPU in float32 by chunks).
// NaN and ±Inf propagate as in a sequential sum.
func (t *Tensor) Cumsum(dim int) *Tensor { return t.scan("Cumsum", hal.Cumsum, dim) }

// Cumprod returns the inclusive cumulative product of t along dim, as
// torch.cumprod; an Int32 tensor multiplies in Int32, wrapping.
func (t *Tensor) Cumprod(dim int) *Tensor { return t.scan("Cumprod", hal.Cumprod, dim) }

// LogCumSumExp returns ln Σ eˣ over elements 0 … i along dim, as
// torch.logcumsumexp, computed stably (the larger term factored out of
// each step); a prefix of −Inf only gives −Inf. Float tensors only.
func (t *Tensor) LogCumSumExp(dim int) *Tensor {
	return t.scan("LogCumSumExp", hal.LogCumSumExp, dim)
}

// scan is the entry of the scans.
func (t *Tensor) scan(op string, kernel hal.ScanOp, dim int) *Tensor {
	t.checkLive(op)
	return routed(op, familyReduction, elementwiseSize(t), func() *Tensor {
		return scanAlong(op, kernel, t, dim)
	}, &t)
}

// sortAxis resolves dim for the ops of this file: a scalar has the one
// dim 0 (or −1), as in torch. The error names the op, shape, dtype and
// device.
func sortAxis(op string, t *Tensor, dim int) int {
	rank := max(t.Rank(), 1)
	a := dim
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		misuse(op, "dim %d is out of range for %v %v on %v (want %d … %d)", dim, t.shape, t.dtype, t.dev, -rank, rank-1)
	}
	return a
}

// dimSize is the size of axis a of t (1 for a scalar).
func dimSize(t *Tensor, a int) int {
	if t.Rank() == 0 {
		return 1
	}
	return t.shape[a]
}

// lastAxis runs f on t with axis a moved to the end (a scalar viewed as
// one element) and moves f's results back: a transposed view in, one
// copy per result out.
func lastAxis(t *Tensor, a int, f func(src *Tensor) []*Tensor) []*Tensor {
	if t.Rank() == 0 {
		row := t.Reshape(1)
		defer row.Release()
		outs := f(row)
		for i, o := range outs {
			outs[i] = o.Reshape()
			o.Release()
		}
		return outs
	}
	last := t.Rank() - 1
	if a == last {
		return f(t)
	}
	src := t.Transpose(a, last)
	defer src.Release()
	outs := f(src)
	for i, o := range outs {
		back := o.Transpose(a, last)
		outs[i] = back.Contiguous()
		releaseAll(back, o)
	}
	return outs
}

// sortAlong is Sort on t's device.
func sortAlong(op string, t *Tensor, dim int, descending, stable bool) (values, indices *Tensor) {
	a := sortAxis(op, t, dim)
	checkOp(op, t.dev, t.dtype)
	t.dev.requireKernel(op, t.dtype, hal.KernelSort, t.dtype)
	outs := lastAxis(t, a, func(src *Tensor) []*Tensor {
		shape := slices.Clone(src.shape)
		// One kernel writes both results, so a failure of either
		// allocation or of the kernel must reach both.
		idx := empty(op, t.dev, Int32, shape)
		adopt(idx, src)
		vals := empty(op, t.dev, t.dtype, shape)
		vals.exec(op, []*Tensor{src, idx}, func() error {
			return t.dev.hal.Sort(vals.view(), idx.view(), src.view(), descending, stable)
		})
		if vals.err != nil && idx.err == nil {
			idx.setFailed(vals.err)
		}
		return []*Tensor{vals, idx}
	})
	return outs[0], outs[1]
}

// firstAlong returns elements lo … hi−1 along axis a of values and
// indices, as contiguous tensors (a scalar's one element for lo 0, hi 1).
func firstAlong(op string, values, indices *Tensor, a, lo, hi int) (*Tensor, *Tensor) {
	if values.Rank() == 0 {
		return values.alias(), indices.alias()
	}
	v := values.Slice(a, lo, hi, 1)
	i := indices.Slice(a, lo, hi, 1)
	defer releaseAll(v, i)
	return v.Contiguous(), i.Contiguous()
}

// scanAlong is a scan on t's device.
func scanAlong(op string, kernel hal.ScanOp, t *Tensor, dim int) *Tensor {
	a := sortAxis(op, t, dim)
	checkOp(op, t.dev, t.dtype)
	t.dev.requireKernel(op, t.dtype, kernel.Kernel(), t.dtype)
	return lastAxis(t, a, func(src *Tensor) []*Tensor {
		return []*Tensor{compute(op, t.dev, t.dtype, slices.Clone(src.shape), []*Tensor{src}, func(dst hal.View) error {
			return t.dev.hal.Scan(kernel, dst, src.view())
		})}
	})[0]
}

// FamilySort is the heading of the sorting and scan ops in the op table.
const FamilySort = "sorting and scans"

// sortKernels are the kernels of the sorting ops for dtype d: the sort,
// and the copies that move values and Int32 indices back into place.
func sortKernels(d DType) []Kernel {
	return kernels(k(hal.KernelSort, d), k(hal.KernelCopy, d), k(hal.KernelCopy, Int32))
}

// scanKernels returns the kernels of a scan for dtype d.
func scanKernels(op hal.ScanOp) func(DType) []Kernel {
	return func(d DType) []Kernel { return kernels(k(op.Kernel(), d), k(hal.KernelCopy, d)) }
}

var _ = registerOps(
	Op{Name: "Sort", Family: FamilySort, DTypes: kernelTypes(hal.KernelSort), Kernels: sortKernels},
	Op{Name: "Argsort", Family: FamilySort, DTypes: kernelTypes(hal.KernelSort), Kernels: sortKernels},
	Op{Name: "TopK", Family: FamilySort, DTypes: kernelTypes(hal.KernelSort), Kernels: sortKernels},
	Op{Name: "KthValue", Family: FamilySort, DTypes: kernelTypes(hal.KernelSort), Kernels: sortKernels},
	Op{Name: "Cumsum", Family: FamilySort, DTypes: kernelTypes(hal.Cumsum.Kernel()), Kernels: scanKernels(hal.Cumsum)},
	Op{Name: "Cumprod", Family: FamilySort, DTypes: kernelTypes(hal.Cumprod.Kernel()), Kernels: scanKernels(hal.Cumprod)},
	Op{Name: "LogCumSumExp", Family: FamilySort, DTypes: kernelTypes(hal.LogCumSumExp.Kernel()), Kernels: scanKernels(hal.LogCumSumExp)},
)
