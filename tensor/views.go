package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// The ops in this file return views: tensors over the input's buffer with
// another shape, strides or offset, made without running a kernel. Kernels
// read strides, so a view costs nothing until it is read; Contiguous packs
// one when a caller needs that.

// Reshape returns t with another shape of the same element count, as
// torch.reshape. One dimension may be −1: it is inferred. The result is a
// view when t's strides allow it (always for contiguous t), else a
// contiguous copy.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	const op = "Reshape"
	t.checkLive(op)
	shape = inferShape(op, t.shape, shape)
	if strides, ok := reshapeStrides(t.shape, t.strides, shape); ok {
		return t.newView(shape, strides, t.offset)
	}
	packed := t.copy(op)
	defer packed.Release()
	return packed.newView(shape, hal.RowMajorStrides(shape), 0)
}

// inferShape resolves a single −1 in shape against the element count of
// from and checks that the counts agree.
func inferShape(op string, from, shape []int) []int {
	shape = slices.Clone(shape)
	if shape == nil {
		shape = []int{}
	}
	n := numElements(op, from)
	known, infer := 1, -1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			misuse(op, "invalid shape %v: at most one −1, no other negative dimension", shape)
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			misuse(op, "shape %v is invalid for %v (%d elements)", shape, from, n)
		}
		shape[infer] = n / known
	} else if known != n {
		misuse(op, "shape %v is invalid for %v (%d elements)", shape, from, n)
	}
	checkShape(op, shape)
	return shape
}

// reshapeStrides finds strides that read a tensor of shape and strides as
// newShape without moving data, or reports that none exist. It is
// PyTorch's computeStride: runs of axes that are contiguous with each
// other ("chunks") may be split and merged freely.
func reshapeStrides(shape, strides, newShape []int) ([]int, bool) {
	out := make([]int, len(newShape))
	if len(shape) == 0 || slices.Contains(shape, 0) {
		// A scalar or an empty tensor has no layout to preserve.
		return hal.RowMajorStrides(newShape), true
	}
	viewD := len(newShape) - 1
	chunkBase := strides[len(strides)-1]
	tensorN, viewN := 1, 1
	for d := len(shape) - 1; d >= 0; d-- {
		tensorN *= shape[d]
		if d == 0 || (shape[d-1] != 1 && strides[d-1] != tensorN*chunkBase) {
			for viewD >= 0 && (viewN < tensorN || newShape[viewD] == 1) {
				out[viewD] = viewN * chunkBase
				viewN *= newShape[viewD]
				viewD--
			}
			if viewN != tensorN {
				return nil, false
			}
			if d > 0 {
				chunkBase = strides[d-1]
				tensorN, viewN = 1, 1
			}
		}
	}
	return out, viewD == -1
}

// Flatten merges the axes start … end (inclusive, negative counting from
// the end) into one, as torch.flatten. A scalar becomes shape [1].
func (t *Tensor) Flatten(start, end int) *Tensor {
	const op = "Flatten"
	t.checkLive(op)
	if len(t.shape) == 0 {
		// A scalar's dims are −1 and 0, as torch wraps them.
		axisIn(op, start, 1, 0)
		axisIn(op, end, 1, 0)
		return t.Reshape(1)
	}
	s, e := axis(op, start, len(t.shape)), axis(op, end, len(t.shape))
	if s > e {
		misuse(op, "start dim %d comes after end dim %d", start, end)
	}
	shape := slices.Clone(t.shape[:s])
	shape = append(shape, numElements(op, t.shape[s:e+1]))
	shape = append(shape, t.shape[e+1:]...)
	return t.Reshape(shape...)
}

// Squeeze removes size-1 axes: the given dims (negative allowed; dims
// whose size is not 1 stay, as torch), or every size-1 axis when none are
// given.
func (t *Tensor) Squeeze(dims ...int) *Tensor {
	const op = "Squeeze"
	t.checkLive(op)
	drop := make([]bool, len(t.shape))
	if len(dims) == 0 {
		for i, d := range t.shape {
			drop[i] = d == 1
		}
	} else {
		for _, a := range axes(op, dims, len(t.shape)) {
			drop[a] = t.shape[a] == 1
		}
	}
	var shape, strides []int
	for i := range t.shape {
		if !drop[i] {
			shape = append(shape, t.shape[i])
			strides = append(strides, t.strides[i])
		}
	}
	return t.newView(shape, strides, t.offset)
}

// Unsqueeze inserts a size-1 axis at dim, which ranges over −rank−1 …
// rank as in torch.
func (t *Tensor) Unsqueeze(dim int) *Tensor {
	const op = "Unsqueeze"
	t.checkLive(op)
	r := len(t.shape)
	d := axisIn(op, dim, r+1, r)
	stride := 1
	if d < r {
		stride = t.shape[d] * t.strides[d]
	}
	shape := slices.Insert(slices.Clone(t.shape), d, 1)
	checkShape(op, shape)
	strides := slices.Insert(slices.Clone(t.strides), d, stride)
	return t.newView(shape, strides, t.offset)
}

// Expand returns t broadcast to shape without copying, as torch.expand:
// size-1 axes stretch (stride 0), new axes may be added in front, and −1
// keeps an existing axis's size.
func (t *Tensor) Expand(shape ...int) *Tensor { return t.expand("Expand", shape) }

// BroadcastTo returns t broadcast to shape; see Expand.
func (t *Tensor) BroadcastTo(shape ...int) *Tensor { return t.expand("BroadcastTo", shape) }

func (t *Tensor) expand(op string, shape []int) *Tensor {
	t.checkLive(op)
	if len(shape) < len(t.shape) {
		misuse(op, "shape %v has fewer axes than the tensor's %v", shape, t.shape)
	}
	shape = slices.Clone(shape)
	lead := len(shape) - len(t.shape)
	for i, d := range shape {
		if d == -1 {
			if i < lead {
				misuse(op, "−1 in new leading axis %d of %v", i, shape)
			}
			shape[i] = t.shape[i-lead]
		}
	}
	checkShape(op, shape)
	for i, d := range t.shape {
		if d != 1 && d != shape[lead+i] {
			misuse(op, "cannot expand %v to %v: axis %d has size %d, not 1", t.shape, shape, i, d)
		}
	}
	return t.newView(shape, broadcastStrides(t.shape, t.strides, shape), t.offset)
}

// Slice returns the elements start, start+step, … before end along dim,
// as Python's t[start:end:step]: negative start and end count from the
// end, and both clamp to the axis, so out-of-range bounds give a shorter
// or empty slice rather than an error. step must be ≥ 1.
func (t *Tensor) Slice(dim, start, end, step int) *Tensor {
	const op = "Slice"
	t.checkLive(op)
	a := axis(op, dim, len(t.shape))
	if step < 1 {
		misuse(op, "step %d must be ≥ 1", step)
	}
	n := t.shape[a]
	start, end = clampIndex(start, n), clampIndex(end, n)
	length := 0
	if end > start {
		length = (end - start + step - 1) / step
	}
	shape, strides := slices.Clone(t.shape), slices.Clone(t.strides)
	shape[a] = length
	strides[a] *= step
	offset := t.offset
	if length > 0 {
		offset += start * t.strides[a]
	}
	return t.newView(shape, strides, offset)
}

// clampIndex resolves a Python slice bound against an axis of size n.
func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}

// Split cuts t along dim into views of size elements (the last one
// smaller when size does not divide the axis), as torch.split.
func (t *Tensor) Split(dim, size int) []*Tensor {
	const op = "Split"
	t.checkLive(op)
	a := axis(op, dim, len(t.shape))
	if size < 1 {
		misuse(op, "split size %d must be ≥ 1", size)
	}
	n := t.shape[a]
	if n == 0 {
		return []*Tensor{t.alias()}
	}
	var parts []*Tensor
	for start := 0; start < n; start += size {
		parts = append(parts, t.Slice(a, start, start+size, 1))
	}
	return parts
}

// Chunk cuts t along dim into at most n views of equal size ⌈size/n⌉ (the
// last smaller), as torch.chunk; it may return fewer than n.
func (t *Tensor) Chunk(dim, n int) []*Tensor {
	const op = "Chunk"
	t.checkLive(op)
	a := axis(op, dim, len(t.shape))
	if n < 1 {
		misuse(op, "chunk count %d must be ≥ 1", n)
	}
	return t.Split(a, max(1, (t.shape[a]+n-1)/n))
}

// T returns the transpose of a matrix (a view); 0-D and 1-D tensors come
// back as they are, as torch's t().
func (t *Tensor) T() *Tensor {
	const op = "T"
	t.checkLive(op)
	switch len(t.shape) {
	case 0, 1:
		return t.alias()
	case 2:
		return t.Transpose(0, 1)
	}
	misuse(op, "need a tensor of rank ≤ 2, got %v; use Transpose or Permute", t.shape)
	return nil
}

// Transpose swaps two axes (a view).
func (t *Tensor) Transpose(dim0, dim1 int) *Tensor {
	const op = "Transpose"
	t.checkLive(op)
	a, b := axis(op, dim0, len(t.shape)), axis(op, dim1, len(t.shape))
	perm := make([]int, len(t.shape))
	for i := range perm {
		perm[i] = i
	}
	perm[a], perm[b] = b, a
	return t.permute(perm)
}

// Permute reorders the axes: axis i of the result is axis dims[i] of t (a
// view), as torch.permute.
func (t *Tensor) Permute(dims ...int) *Tensor {
	const op = "Permute"
	t.checkLive(op)
	if len(dims) != len(t.shape) {
		misuse(op, "need %d dims for shape %v, got %v", len(t.shape), t.shape, dims)
	}
	perm := make([]int, len(dims))
	seen := make([]bool, len(dims))
	for i, d := range dims {
		a := axis(op, d, len(dims))
		if seen[a] {
			misuse(op, "dims %v are not a permutation", dims)
		}
		seen[a] = true
		perm[i] = a
	}
	return t.permute(perm)
}

// permute is Permute for a checked permutation.
func (t *Tensor) permute(perm []int) *Tensor {
	shape, strides := make([]int, len(perm)), make([]int, len(perm))
	for i, p := range perm {
		shape[i], strides[i] = t.shape[p], t.strides[p]
	}
	return t.newView(shape, strides, t.offset)
}

// Views run no kernel; Reshape copies when the layout does not allow a
// view, and T, Transpose and Permute are listed under linear algebra.
var _ = registerOps(
	Op{Name: "Reshape", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Flatten", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Squeeze", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Unsqueeze", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Expand", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "BroadcastTo", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Slice", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Split", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "Chunk", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	Op{Name: "T", Family: FamilyLinalg, DTypes: allTypes, Kernels: none},
	Op{Name: "Transpose", Family: FamilyLinalg, DTypes: allTypes, Kernels: none},
	Op{Name: "Permute", Family: FamilyLinalg, DTypes: allTypes, Kernels: none},
)
