package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Indices are Int32. An index outside its axis is not checked on the host
// (that would mean reading it back): the kernel gives a defined result —
// 0 for Gather and IndexSelect, the addition skipped for ScatterAdd and
// OneHot — and the failure, wrapping hal.ErrIndexOutOfRange and naming the
// index and the axis size, surfaces from the result's Float32s (and the
// other readers) and from Device.Sync: at once on the CPU, at the next
// read or Sync on a GPU.

// Gather returns out[i] = t[i with axis-dim coordinate index[i]], as
// torch.gather: index is Int32 of t's rank, at most t's size on every
// other axis, and the result has index's shape.
func (t *Tensor) Gather(dim int, index *Tensor) *Tensor {
	const op = "Gather"
	return routed(op, familyElementwise, elementwiseSize(index), func() *Tensor {
		dev := sameDevice(op, t, index)
		checkIndex(op, index)
		a := axis(op, dim, len(t.shape))
		if len(index.shape) != len(t.shape) {
			misuse(op, "index %v must have the rank of %v", index.shape, t.shape)
		}
		checkOp(op, dev, t.dtype)
		src := fitIndexed(op, t, index, a)
		defer src.Release()
		return compute(op, dev, t.dtype, index.shape, []*Tensor{src, index}, func(dst hal.View) error {
			return dev.hal.Gather(dst, src.view(), index.view(), a)
		})
	}, &t, &index)
}

// fitIndexed is t cut (as a view) to index's size on every axis but a,
// which is how the hal wants the indexed operand.
func fitIndexed(op string, t, index *Tensor, a int) *Tensor {
	shape := slices.Clone(t.shape)
	for i, n := range index.shape {
		if i == a {
			continue
		}
		if n > t.shape[i] {
			misuse(op, "index %v is larger than %v on axis %d", index.shape, t.shape, i)
		}
		shape[i] = n
	}
	return t.newView(shape, slices.Clone(t.strides), t.offset)
}

func checkIndex(op string, index *Tensor) {
	if !index.dtype.IsInteger() {
		misuse(op, "index must be int32 or int64, got %v", index.dtype)
	}
}

// IndexSelect returns the entries of t at the positions index (a 1-D Int32
// or Int64 tensor) along dim, as torch.index_select: an embedding lookup is
// table.IndexSelect(0, ids).
func (t *Tensor) IndexSelect(dim int, index *Tensor) *Tensor {
	const op = "IndexSelect"
	return routed(op, familyElementwise, elementwiseSize(t), func() *Tensor {
		sameDevice(op, t, index)
		checkIndex(op, index)
		if len(index.shape) > 1 {
			misuse(op, "index must be 1-D, got %v", index.shape)
		}
		checkOp(op, t.dev, t.dtype)
		return t.indexSelect(op, axis(op, dim, len(t.shape)), index)
	}, &t, &index)
}

// indexSelect is one Gather whose index is the vector broadcast over every
// other axis with stride 0, so it is never materialized.
func (t *Tensor) indexSelect(op string, a int, index *Tensor) *Tensor {
	n := index.Len()
	shape := slices.Clone(t.shape)
	shape[a] = n
	strides := make([]int, len(shape))
	if len(index.shape) == 1 {
		strides[a] = index.strides[0]
	}
	spread := index.newView(shape, strides, index.offset)
	defer spread.Release()
	return compute(op, t.dev, t.dtype, shape, []*Tensor{t, spread}, func(dst hal.View) error {
		return t.dev.hal.Gather(dst, t.view(), spread.view(), a)
	})
}

// ScatterAdd returns a copy of t with src[i] added at t[i with axis-dim
// coordinate index[i]], as torch.Tensor.scatter_add: index is Int32, src
// shares t's dtype, both have t's rank, index is at most src's size on
// every axis and at most t's on every axis but dim. t is not modified.
// Float additions may happen in any order.
func (t *Tensor) ScatterAdd(dim int, index, src *Tensor) *Tensor {
	const op = "ScatterAdd"
	return routed(op, familyElementwise, elementwiseSize(t, src), func() *Tensor {
		return t.scatterAdd(op, dim, index, src)
	}, &t, &index, &src)
}

// scatterAdd is ScatterAdd on its operands' device.
func (t *Tensor) scatterAdd(op string, dim int, index, src *Tensor) *Tensor {
	dev := sameDevice(op, t, index, src)
	checkIndex(op, index)
	sameDType(op, t, src)
	a := axis(op, dim, len(t.shape))
	if len(index.shape) != len(t.shape) || len(src.shape) != len(t.shape) {
		misuse(op, "index %v and src %v must have the rank of %v", index.shape, src.shape, t.shape)
	}
	for i, n := range index.shape {
		if n > src.shape[i] || (i != a && n > t.shape[i]) {
			misuse(op, "index %v does not fit src %v and %v on axis %d", index.shape, src.shape, t.shape, i)
		}
	}
	checkOp(op, dev, t.dtype)
	values := src.newView(slices.Clone(index.shape), slices.Clone(src.strides), src.offset)
	defer values.Release()
	out := t.copy(op)
	out.exec(op, []*Tensor{index, values}, func() error {
		return dev.hal.ScatterAdd(out.view(), index.view(), values.view(), a)
	})
	return out
}

// OneHot returns the Int32 one-hot encoding of the Int32 class indices in
// index: shape index.Shape() + [numClasses], 1 at each index's class. An
// index outside [0, numClasses) gives an all-zero row and a device error
// (hal.ErrIndexOutOfRange), as for ScatterAdd.
func OneHot(index *Tensor, numClasses int) *Tensor {
	const op = "OneHot"
	index.checkLive(op)
	checkIndex(op, index)
	if numClasses < 0 {
		misuse(op, "negative class count %d", numClasses)
	}
	checkOp(op, index.dev, Int32)
	shape := append(slices.Clone(index.shape), numClasses)
	checkShape(op, shape)
	at := index.Unsqueeze(-1)
	one := full(op, index.dev, Int32, 1, nil)
	ones := one.newView(slices.Clone(at.shape), make([]int, len(at.shape)), 0)
	defer releaseAll(at, one, ones)
	out := full(op, index.dev, Int32, 0, shape)
	out.exec(op, []*Tensor{at, ones}, func() error {
		return index.dev.hal.ScatterAdd(out.view(), at.view(), ones.view(), len(shape)-1)
	})
	return out
}

var _ = registerOps(
	Op{Name: "Gather", Family: FamilyIndex, DTypes: kernelTypes(hal.KernelGather), Kernels: one(hal.KernelGather)},
	Op{Name: "IndexSelect", Family: FamilyIndex, DTypes: kernelTypes(hal.KernelGather), Kernels: one(hal.KernelGather)},
	Op{Name: "ScatterAdd", Family: FamilyIndex, DTypes: kernelTypes(hal.KernelScatterAdd), Kernels: one(hal.KernelScatterAdd)},
	Op{Name: "OneHot", Family: FamilyIndex, DTypes: onlyInt32, Kernels: func(DType) []Kernel {
		return kernels(k(hal.KernelFill, Int32), k(hal.KernelScatterAdd, Int32))
	}},
)
