package einsum

import "slices"

// Ops are the primitives an executor provides, over its operand type T
// (*tensor.Tensor, *graph.Value). Every method returns a new T; Release
// drops an intermediate the executor made (never an operand it was given).
type Ops[T any] interface {
	Shape(x T) []int
	Permute(x T, perm []int) T
	Reshape(x T, shape []int) T
	// Slice is x[start:end:step] along dim.
	Slice(x T, dim, start, end, step int) T
	// Sum sums over dims (never empty) without keeping them.
	Sum(x T, dims []int) T
	// MatMul is the batched product of [B, M, K] and [B, K, N].
	MatMul(a, b T) T
	Release(x T)
}

// operand is an intermediate and its label per axis; owned says whether
// the executor made it (and so releases it).
type operand[T any] struct {
	x      T
	labels []int
	owned  bool
}

// Run evaluates the plan on operands with ops.
func Run[T any](p *Plan, ops Ops[T], xs []T) T {
	cur := make([]operand[T], len(xs))
	for i, x := range xs {
		o := operand[T]{x: x, labels: slices.Clone(p.Inputs[i])}
		o = diagonals(ops, o)
		o = squeezeBroadcast(p, ops, o)
		cur[i] = o
	}
	for _, step := range p.Path {
		i, j := step[0], step[1]
		var rest []operand[T]
		var others [][]int
		for k := range cur {
			if k != i && k != j {
				rest = append(rest, cur[k])
				others = append(others, cur[k].labels)
			}
		}
		r := contract(p, ops, cur[i], cur[j], others)
		cur = append(rest, r)
	}
	last := sumOut(p, ops, cur[0], nil, nil)
	// Permute to the output's order.
	perm := make([]int, len(p.Output))
	for k, l := range p.Output {
		perm[k] = slices.Index(last.labels, l)
	}
	if slices.IsSorted(perm) {
		if last.owned {
			return last.x
		}
		return ops.Reshape(last.x, ops.Shape(last.x))
	}
	out := ops.Permute(last.x, perm)
	drop(ops, last)
	return out
}

func drop[T any](ops Ops[T], o operand[T]) {
	if o.owned {
		ops.Release(o.x)
	}
}

// replace makes x the operand's tensor, releasing the old one if owned.
func replace[T any](ops Ops[T], o operand[T], x T, labels []int) operand[T] {
	drop(ops, o)
	return operand[T]{x: x, labels: labels, owned: true}
}

// diagonals takes the diagonal of every label repeated in the operand: the
// two axes move last, merge, and a slice with step n+1 keeps the diagonal.
func diagonals[T any](ops Ops[T], o operand[T]) operand[T] {
	for {
		a, b := -1, -1
		for i := range o.labels {
			if j := slices.Index(o.labels[i+1:], o.labels[i]); j >= 0 {
				a, b = i, i+1+j
				break
			}
		}
		if a < 0 {
			return o
		}
		shape := ops.Shape(o.x)
		n := shape[a]
		var perm, rest []int
		var labels []int
		for k := range o.labels {
			if k != a && k != b {
				perm = append(perm, k)
				rest = append(rest, shape[k])
				labels = append(labels, o.labels[k])
			}
		}
		perm = append(perm, a, b)
		moved := ops.Permute(o.x, perm)
		flat := ops.Reshape(moved, append(slices.Clone(rest), n*n))
		ops.Release(moved)
		diag := ops.Slice(flat, len(rest), 0, n*n, n+1)
		ops.Release(flat)
		o = replace(ops, o, diag, append(labels, o.labels[a]))
	}
}

// squeezeBroadcast drops size-1 axes whose label is larger elsewhere: the
// operand is constant along them, so broadcasting is not needing the axis.
func squeezeBroadcast[T any](p *Plan, ops Ops[T], o operand[T]) operand[T] {
	shape := ops.Shape(o.x)
	var keepShape, labels []int
	for k, l := range o.labels {
		if shape[k] == 1 && p.Sizes[l] != 1 {
			continue
		}
		keepShape = append(keepShape, shape[k])
		labels = append(labels, l)
	}
	if len(labels) == len(o.labels) {
		return o
	}
	return replace(ops, o, ops.Reshape(o.x, keepShape), labels)
}

// sumOut sums the labels of o that neither the output, nor other, nor
// the remaining operands need.
func sumOut[T any](p *Plan, ops Ops[T], o operand[T], other []int, others [][]int) operand[T] {
	var dims, labels []int
	for k, l := range o.labels {
		needed := slices.Contains(p.Output, l) || slices.Contains(other, l)
		for _, ol := range others {
			needed = needed || slices.Contains(ol, l)
		}
		if needed {
			labels = append(labels, l)
		} else {
			dims = append(dims, k)
		}
	}
	if len(dims) == 0 {
		return o
	}
	return replace(ops, o, ops.Sum(o.x, dims), labels)
}

// contract multiplies a and b and sums their shared labels that nothing
// else needs, as one batched matrix product: a as [batch, left, summed],
// b as [batch, summed, right].
func contract[T any](p *Plan, ops Ops[T], a, b operand[T], others [][]int) operand[T] {
	a = sumOut(p, ops, a, b.labels, others)
	b = sumOut(p, ops, b, a.labels, others)
	needed := func(l int) bool {
		if slices.Contains(p.Output, l) {
			return true
		}
		for _, ol := range others {
			if slices.Contains(ol, l) {
				return true
			}
		}
		return false
	}
	var batch, summed, left, right []int
	for _, l := range a.labels {
		switch {
		case !slices.Contains(b.labels, l):
			left = append(left, l)
		case needed(l):
			batch = append(batch, l)
		default:
			summed = append(summed, l)
		}
	}
	for _, l := range b.labels {
		if !slices.Contains(a.labels, l) {
			right = append(right, l)
		}
	}
	as, bs := ops.Shape(a.x), ops.Shape(b.x)
	size := func(labels []int, shape []int, from []int) (dims []int, n int) {
		n = 1
		for _, l := range labels {
			d := shape[slices.Index(from, l)]
			dims = append(dims, d)
			n *= d
		}
		return dims, n
	}
	batchDims, nb := size(batch, as, a.labels)
	leftDims, nl := size(left, as, a.labels)
	_, ns := size(summed, as, a.labels)
	rightDims, nr := size(right, bs, b.labels)
	am := arrange(ops, a, append(append(slices.Clone(batch), left...), summed...), []int{nb, nl, ns})
	bm := arrange(ops, b, append(append(slices.Clone(batch), summed...), right...), []int{nb, ns, nr})
	prod := ops.MatMul(am.x, bm.x)
	drop(ops, am)
	drop(ops, bm)
	shape := append(append(slices.Clone(batchDims), leftDims...), rightDims...)
	out := ops.Reshape(prod, shape)
	ops.Release(prod)
	return operand[T]{x: out, labels: append(append(slices.Clone(batch), left...), right...), owned: true}
}

// arrange permutes o to the label order and reshapes it to shape, taking
// ownership of o.
func arrange[T any](ops Ops[T], o operand[T], order []int, shape []int) operand[T] {
	perm := make([]int, len(order))
	for k, l := range order {
		perm[k] = slices.Index(o.labels, l)
	}
	x := o.x
	moved := false
	if !slices.IsSorted(perm) {
		x = ops.Permute(o.x, perm)
		moved = true
	}
	r := ops.Reshape(x, shape)
	if moved {
		ops.Release(x)
	}
	drop(ops, o)
	return operand[T]{x: r, owned: true}
}
