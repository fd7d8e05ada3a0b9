package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Concat joins tensors along dim, as torch.cat: they share a device, a
// dtype and a rank, and their shapes agree on every other axis. Each input
// goes into its strided slot of one output with one copy kernel.
func Concat(dim int, ts ...*Tensor) *Tensor {
	const op = "Concat"
	if len(ts) == 0 {
		misuse(op, "no tensors to join")
	}
	ts, moved := routeList(op, ts)
	defer releaseAll(moved...)
	return concat(op, dim, ts)
}

// concat is Concat on its operands' device, for Concat and Stack.
func concat(op string, dim int, ts []*Tensor) *Tensor {
	dev := sameDevice(op, ts...)
	first := ts[0]
	a := axis(op, dim, len(first.shape))
	shape := slices.Clone(first.shape)
	shape[a] = 0
	for _, t := range ts {
		sameDType(op, first, t)
		if len(t.shape) != len(first.shape) {
			misuse(op, "shape mismatch: %v vs %v (ranks differ)", first.shape, t.shape)
		}
		for i := range t.shape {
			if i != a && t.shape[i] != first.shape[i] {
				misuse(op, "shape mismatch: %v vs %v (axis %d differs and is not the joined axis %d)", first.shape, t.shape, i, a)
			}
		}
		shape[a] += t.shape[a]
	}
	checkOp(op, dev, first.dtype)
	out := empty(op, dev, first.dtype, shape)
	out.exec(op, ts, func() error {
		at := 0
		for _, t := range ts {
			slot := out.view()
			slot.Shape = t.shape
			slot.Offset = at * out.strides[a]
			at += t.shape[a]
			if err := dev.hal.Copy(slot, t.view()); err != nil {
				return err
			}
		}
		return nil
	})
	return out
}

// Stack joins tensors of one shape along a new axis dim (−rank−1 … rank),
// as torch.stack.
func Stack(dim int, ts ...*Tensor) *Tensor {
	const op = "Stack"
	if len(ts) == 0 {
		misuse(op, "no tensors to stack")
	}
	ts, moved := routeList(op, ts)
	defer releaseAll(moved...)
	return stack(op, dim, ts)
}

// stack is Stack on its operands' device, for Stack and AffineGrid.
func stack(op string, dim int, ts []*Tensor) *Tensor {
	sameDevice(op, ts...)
	r := len(ts[0].shape)
	d := axisIn(op, dim, r+1, r)
	for _, t := range ts[1:] {
		if !slices.Equal(t.shape, ts[0].shape) {
			misuse(op, "shape mismatch: %v vs %v", ts[0].shape, t.shape)
		}
	}
	checkOp(op, ts[0].dev, ts[0].dtype)
	parts := make([]*Tensor, len(ts))
	for i, t := range ts {
		parts[i] = t.Unsqueeze(d)
	}
	defer releaseAll(parts...)
	return concat(op, d, parts)
}

// Concat joins t and others along dim; see the package function Concat.
func (t *Tensor) Concat(dim int, others ...*Tensor) *Tensor {
	return Concat(dim, append([]*Tensor{t}, others...)...)
}

// PadMode says what Pad puts in the border.
type PadMode int

// Pad modes, as torch.nn.functional.pad's mode.
const (
	// PadConstant fills the border with a value. Negative pads crop.
	PadConstant PadMode = iota
	// PadReflect mirrors the input at its edges without repeating the
	// edge element; each pad must be smaller than its axis.
	PadReflect
)

func (m PadMode) String() string {
	switch m {
	case PadConstant:
		return "constant"
	case PadReflect:
		return "reflect"
	}
	return "PadMode(?)"
}

// Pad pads t as torch.nn.functional.pad: pads lists (before, after) pairs
// starting from the last axis, so [1, 2] pads the last axis with 1 element
// before and 2 after, and [1, 1, 2, 2] also pads the axis before it.
// value fills the border in PadConstant mode and is ignored otherwise.
func (t *Tensor) Pad(pads []int, mode PadMode, value float64) *Tensor {
	const op = "Pad"
	t.checkLive(op)
	if len(pads)%2 != 0 || len(pads)/2 > len(t.shape) {
		misuse(op, "pads %v must be (before, after) pairs for at most %d axes of %v", pads, len(t.shape), t.shape)
	}
	switch mode {
	case PadConstant:
		checkOp(op, t.dev, t.dtype)
		return t.padConstant(op, pads, value)
	case PadReflect:
		checkOp("Pad(reflect)", t.dev, t.dtype)
		return t.padReflect(op, pads)
	}
	misuse(op, "unknown mode %v", mode)
	return nil
}

// padAxis returns the axis and (before, after) of pair i of pads.
func padAxis(pads []int, i, rank int) (axis, before, after int) {
	return rank - 1 - i, pads[2*i], pads[2*i+1]
}

// padConstant crops for negative pads (a view), then fills the output with
// value and copies the input into its interior.
func (t *Tensor) padConstant(op string, pads []int, value float64) *Tensor {
	src := t.alias()
	defer func() { src.Release() }()
	shape := slices.Clone(t.shape)
	interior := make([]int, len(t.shape)) // the input's first element in the output
	for i := range len(pads) / 2 {
		a, before, after := padAxis(pads, i, len(t.shape))
		n := t.shape[a]
		if n+before+after < 0 {
			misuse(op, "pads %v leave axis %d of %v with a negative size", pads, a, t.shape)
		}
		cropped := src.Slice(a, max(0, -before), n-max(0, -after), 1)
		src.Release()
		src = cropped
		interior[a] = max(0, before)
		shape[a] = n + before + after
	}
	value = intValue(op, t.dtype, value)
	out := empty(op, t.dev, t.dtype, shape)
	out.exec(op, []*Tensor{src}, func() error {
		if src.Len() != out.Len() {
			if err := t.dev.hal.Fill(out.view(), value, 0); err != nil {
				return err
			}
		}
		slot := out.view()
		slot.Shape = src.shape
		for a, at := range interior {
			slot.Offset += at * out.strides[a]
		}
		return t.dev.hal.Copy(slot, src.view())
	})
	return out
}

// padReflect gathers each padded axis in turn through a small index
// vector (reflect(j − before) for each output position j), broadcast over
// the other axes with stride 0, since views cannot run backwards.
func (t *Tensor) padReflect(op string, pads []int) *Tensor {
	cur := t.alias()
	defer func() { cur.Release() }()
	for i := range len(pads) / 2 {
		a, before, after := padAxis(pads, i, len(t.shape))
		n := t.shape[a]
		if before < 0 || after < 0 || before >= n || after >= n {
			misuse(op, "reflect pads (%d, %d) must lie in [0, %d) for axis %d of %v", before, after, n, a, t.shape)
		}
		if before == 0 && after == 0 {
			continue
		}
		// On t's device whatever the policy: indexSelect does not move it.
		index := ReflectIndex(n, before, after)
		positions := fromHost(op, t.dev, Int32, sliceBytes(index), len(index), nil)
		next := cur.indexSelect(op, a, positions)
		releaseAll(cur, positions)
		cur = next
	}
	// Without any padding the result is still a tensor of its own.
	if cur.st == t.st && cur.err == nil {
		return cur.copy("Pad")
	}
	return cur.alias()
}

// ReflectIndex returns, for each position of an axis of size n that
// PadReflect pads by before and after, the position of the input it copies
// (the edge element is not repeated: reflect(−1) = 1).
func ReflectIndex(n, before, after int) []int32 {
	index := make([]int32, n+before+after)
	for j := range index {
		k := j - before
		if k < 0 {
			k = -k
		} else if k >= n {
			k = 2*(n-1) - k
		}
		index[j] = int32(k)
	}
	return index
}

var _ = registerOps(
	Op{Name: "Concat", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Stack", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Pad", Family: FamilyShape, DTypes: allTypes, Kernels: one(hal.KernelFill)},
	Op{Name: "Pad(reflect)", Family: FamilyShape, DTypes: allTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelCopy, Int32), k(hal.KernelGather, t))
	}},
)
