package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Flip reverses the order of elements along each of dims, as torch.flip.
// Each flipped axis is one Gather whose index (n−1, …, 0) is made on the
// device, so nothing is uploaded; dims may not repeat.
func (t *Tensor) Flip(dims ...int) *Tensor {
	const op = "Flip"
	t.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(t), func() *Tensor {
		checkOp(op, t.dev, t.dtype)
		axes := uniqueAxes(op, t, dims)
		out := t.alias()
		for _, a := range axes {
			n := t.shape[a]
			if n < 2 {
				continue
			}
			idx := reversedIndex(op, t.dev, n)
			next := out.indexSelect(op, a, idx)
			releaseAll(idx, out)
			out = next
		}
		if out.st == t.st {
			// Flip returns new storage as torch.flip does, never a view.
			c := out.copy(op)
			out.Release()
			out = c
		}
		return out
	}, &t)
}

// reversedIndex is the Int32 vector n−1, …, 0, filled on the device.
func reversedIndex(op string, dev *Device, n int) *Tensor {
	dev.requireKernel(op, Int32, hal.KernelFill, Int32)
	return compute(op, dev, Int32, []int{n}, nil, func(dst hal.View) error {
		return dev.hal.Fill(dst, float64(n-1), -1)
	})
}

// uniqueAxes resolves dims against t's rank and refuses repeats.
func uniqueAxes(op string, t *Tensor, dims []int) []int {
	out := make([]int, 0, len(dims))
	for _, d := range dims {
		a := axis(op, d, len(t.shape))
		if slices.Contains(out, a) {
			misuse(op, "dim %d appears twice in dims %v for shape %v", d, dims, t.shape)
		}
		out = append(out, a)
	}
	return out
}

// Roll shifts elements along dims by shifts (positive toward higher
// indices), wrapping around, as torch.roll. With no dims, the tensor is
// rolled flattened (shifts must then hold one shift) and keeps its shape.
// Each rolled axis is two slices joined by one Concat.
func (t *Tensor) Roll(shifts []int, dims ...int) *Tensor {
	const op = "Roll"
	t.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(t), func() *Tensor {
		checkOp(op, t.dev, t.dtype)
		if len(dims) == 0 {
			if len(shifts) != 1 {
				misuse(op, "with no dims, need exactly one shift, got shifts %v for shape %v", shifts, t.shape)
			}
			flat := t.Reshape(-1)
			defer flat.Release()
			r := flat.roll(op, 0, shifts[0])
			defer r.Release()
			return r.Reshape(t.shape...)
		}
		if len(shifts) != len(dims) {
			misuse(op, "shifts %v and dims %v must have the same length (shape %v)", shifts, dims, t.shape)
		}
		out := t.alias()
		for i, d := range dims {
			next := out.roll(op, axis(op, d, len(t.shape)), shifts[i])
			out.Release()
			out = next
		}
		if out.st == t.st {
			c := out.copy(op)
			out.Release()
			out = c
		}
		return out
	}, &t)
}

// roll rolls axis a by shift (a view of t when the shift wraps to 0).
func (t *Tensor) roll(op string, a, shift int) *Tensor {
	n := t.shape[a]
	if n == 0 {
		return t.alias()
	}
	s := ((shift % n) + n) % n
	if s == 0 {
		return t.alias()
	}
	tail, head := t.Slice(a, n-s, n, 1), t.Slice(a, 0, n-s, 1)
	defer releaseAll(tail, head)
	return concat(op, a, []*Tensor{tail, head})
}

var _ = registerOps(
	Op{Name: "Flip", Family: FamilyShape, DTypes: kernelTypes(hal.KernelGather), Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelFill, Int32), k(hal.KernelGather, t), k(hal.KernelCopy, t))
	}},
	Op{Name: "Roll", Family: FamilyShape, DTypes: allTypes, Kernels: one(hal.KernelCopy)},
)
