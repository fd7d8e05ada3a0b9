package graph

import (
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// sumAttrs are a reduction's parameters.
type sumAttrs struct {
	dims    []int
	keepDim bool
}

// Sum is tensor.Tensor.Sum, recorded.
func (x *Value) Sum(dims []int, keepDim bool) *Value {
	live("Sum", x)
	xs, done := autocast("Sum", x)
	defer done()
	x = xs[0]
	t := live("Sum", x)
	return unary("Sum", x, t[0].Sum(dims, keepDim), sumAttrs{slices.Clone(dims), keepDim})
}

// Prod is tensor.Tensor.Prod, recorded. Its gradient is the product of the
// other elements of the slice, also where the slice holds zeros (one zero:
// nonzero only at the zero; two or more: 0), as torch's.
func (x *Value) Prod(dims []int, keepDim bool) *Value {
	live("Prod", x)
	xs, done := autocast("Prod", x)
	defer done()
	x = xs[0]
	t := live("Prod", x)
	return unary("Prod", x, t[0].Prod(dims, keepDim), sumAttrs{slices.Clone(dims), keepDim})
}

// Max is tensor.Tensor.Max, recorded. The gradient is split evenly among
// the elements that tie for the maximum, as torch.amax's.
func (x *Value) Max(dims []int, keepDim bool) *Value {
	t := live("Max", x)
	return unary("Max", x, t[0].Max(dims, keepDim), sumAttrs{slices.Clone(dims), keepDim})
}

// Min is tensor.Tensor.Min, recorded; ties share the gradient as in Max.
func (x *Value) Min(dims []int, keepDim bool) *Value {
	t := live("Min", x)
	return unary("Min", x, t[0].Min(dims, keepDim), sumAttrs{slices.Clone(dims), keepDim})
}

// LogSumExp is tensor.Tensor.LogSumExp, recorded.
func (x *Value) LogSumExp(dims []int, keepDim bool) *Value {
	live("LogSumExp", x)
	xs, done := autocast("LogSumExp", x)
	defer done()
	x = xs[0]
	t := live("LogSumExp", x)
	return unary("LogSumExp", x, t[0].LogSumExp(dims, keepDim), sumAttrs{slices.Clone(dims), keepDim})
}

// Mean is tensor.Tensor.Mean, recorded as a sum and a division. An Int32
// value averages in Float32.
func (x *Value) Mean(dims []int, keepDim bool) *Value {
	live("Mean", x)
	xf := floating(x)
	defer xf.Release()
	sum := xf.Sum(dims, keepDim)
	defer sum.Release()
	return sum.DivScalar(float64(reducedCount(xf.Shape(), dims)))
}

// Var is tensor.Tensor.Var, recorded as the same two passes (the mean,
// then the squared deviations), so it gives the same values.
func (x *Value) Var(dims []int, correction int, keepDim bool) *Value {
	live("Var", x)
	xf := floating(x)
	n := reducedCount(xf.Shape(), dims)
	mean := xf.Mean(dims, true)
	dev := Sub(xf, mean)
	sq := dev.Square()
	sum := sq.Sum(dims, keepDim)
	defer releaseAllValues(xf, mean, dev, sq, sum)
	return sum.DivScalar(float64(max(0, n-correction)))
}

// Std is tensor.Tensor.Std, recorded: the square root of Var. Where the
// variance is 0 its gradient is infinite or NaN, as torch's.
func (x *Value) Std(dims []int, correction int, keepDim bool) *Value {
	v := x.Var(dims, correction, keepDim)
	defer v.Release()
	return v.Sqrt()
}

// ArgMax is tensor.Tensor.ArgMax, recorded as not differentiable.
func (x *Value) ArgMax(dims []int, keepDim bool) *Value {
	t := live("ArgMax", x)
	return unary("ArgMax", x, t[0].ArgMax(dims, keepDim), nil)
}

// ArgMin is tensor.Tensor.ArgMin, recorded as not differentiable.
func (x *Value) ArgMin(dims []int, keepDim bool) *Value {
	t := live("ArgMin", x)
	return unary("ArgMin", x, t[0].ArgMin(dims, keepDim), nil)
}

// floating returns x, or x cast to Float32 when it is Int32, as a new
// value either way (tensor's Mean and Var compute Int32 in Float32).
func floating(x *Value) *Value {
	if x.DType().IsInteger() {
		return x.Cast(tensor.Float32)
	}
	return x.Reshape(x.Shape()...)
}

// reducedCount is the number of elements each output of a reduction of
// shape over dims combines; the reduction itself has checked dims.
func reducedCount(shape, dims []int) int {
	n := 1
	if len(shape) == 0 {
		return n
	}
	if len(dims) == 0 {
		for _, d := range shape {
			n *= d
		}
		return n
	}
	seen := make([]bool, len(shape))
	for _, d := range dims {
		if d < 0 {
			d += len(shape)
		}
		if !seen[d] {
			seen[d] = true
			n *= shape[d]
		}
	}
	return n
}

func releaseAllValues(vs ...*Value) {
	for _, v := range vs {
		v.Release()
	}
}

// gemmAttrs are Gemm's scalars and transposes (MatMul's are 1, none, 0).
type gemmAttrs struct {
	alpha, beta    float64
	transA, transB bool
}

// MatMul is tensor.MatMul, recorded. A 1-D operand is promoted to a matrix
// by a recorded reshape, so the gradient reaches it with its own shape;
// broadcast batch axes are summed back.
func MatMul(a, b *Value) *Value {
	const op = "MatMul"
	live(op, a, b)
	xs, done := autocast(op, a, b)
	defer done()
	a, b = xs[0], xs[1]
	t := live(op, a, b)
	if t[0].Rank() != 1 && t[1].Rank() != 1 {
		// Matrices, or a scalar, which tensor.MatMul reports.
		return record(op, tensor.MatMul(t[0], t[1]), []*Value{a, b}, gemmAttrs{alpha: 1})
	}
	am, bm := a, b
	if t[0].Rank() == 1 {
		am = a.Unsqueeze(0)
		defer am.Release()
	}
	if t[1].Rank() == 1 {
		bm = b.Unsqueeze(1)
		defer bm.Release()
	}
	y := MatMul(am, bm)
	defer y.Release()
	shape := y.Shape()
	r := len(shape)
	switch {
	case t[0].Rank() == 1 && t[1].Rank() == 1:
		shape = nil
	case t[0].Rank() == 1:
		shape = append(shape[:r-2], shape[r-1])
	default:
		shape = shape[:r-1]
	}
	return y.Reshape(shape...)
}

// MatMul is the package function MatMul with x on the left.
func (x *Value) MatMul(b *Value) *Value { return MatMul(x, b) }

// Gemm is tensor.Gemm, recorded: alpha·op(a)·op(b) + beta·c, c optional.
// The gradient of c is beta·g summed over the axes along which c was
// broadcast (zero, not absent, when beta is 0 and c is given).
func Gemm(alpha float64, a *Value, transA bool, b *Value, transB bool, beta float64, c *Value) *Value {
	const op = "Gemm"
	live(op, a, b, c)
	xs, done := autocast(op, a, b, c)
	defer done()
	a, b, c = xs[0], xs[1], xs[2]
	t := live(op, a, b, c)
	out := tensor.Gemm(alpha, t[0], transA, t[1], transB, beta, t[2])
	return record(op, out, []*Value{a, b, c}, gemmAttrs{alpha: alpha, beta: beta, transA: transA, transB: transB})
}

// MatVec is tensor.MatVec, recorded as a MatMul.
func MatVec(a, x *Value) *Value {
	const op = "MatVec"
	live(op, a, x)
	if a.Rank() < 2 || x.Rank() != 1 {
		misuse(op, "need a matrix (rank ≥ 2) and a vector, got %v and %v", a.Shape(), x.Shape())
	}
	return MatMul(a, x)
}

// Outer is tensor.Outer, recorded as a broadcast Mul.
func Outer(a, b *Value) *Value {
	const op = "Outer"
	live(op, a, b)
	if a.Rank() != 1 || b.Rank() != 1 {
		misuse(op, "need two vectors, got %v and %v", a.Shape(), b.Shape())
	}
	col, row := a.Unsqueeze(1), b.Unsqueeze(0)
	defer releaseAllValues(col, row)
	return Mul(col, row)
}

// Reshape is tensor.Tensor.Reshape, recorded.
func (x *Value) Reshape(shape ...int) *Value {
	t := live("Reshape", x)
	return unary("Reshape", x, t[0].Reshape(shape...), nil)
}

// Expand is tensor.Tensor.Expand, recorded.
func (x *Value) Expand(shape ...int) *Value {
	t := live("Expand", x)
	return unary("Expand", x, t[0].Expand(shape...), nil)
}

// BroadcastTo is tensor.Tensor.BroadcastTo, recorded as an Expand.
func (x *Value) BroadcastTo(shape ...int) *Value {
	t := live("BroadcastTo", x)
	return unary("Expand", x, t[0].BroadcastTo(shape...), nil)
}

// Flatten is tensor.Tensor.Flatten, recorded as a Reshape.
func (x *Value) Flatten(start, end int) *Value {
	t := live("Flatten", x)
	return x.viewAs(t[0].Flatten(start, end))
}

// Squeeze is tensor.Tensor.Squeeze, recorded as a Reshape.
func (x *Value) Squeeze(dims ...int) *Value {
	t := live("Squeeze", x)
	return x.viewAs(t[0].Squeeze(dims...))
}

// Unsqueeze is tensor.Tensor.Unsqueeze, recorded as a Reshape.
func (x *Value) Unsqueeze(dim int) *Value {
	t := live("Unsqueeze", x)
	return x.viewAs(t[0].Unsqueeze(dim))
}

// viewAs records v, a view of x's tensor with another shape (a squeeze, an
// unsqueeze or a flatten, which tensor computes and checks), as a Reshape.
// The view shares x's memory: it is the same result as the Reshape, made
// without a copy even when x is not contiguous.
func (x *Value) viewAs(v *tensor.Tensor) *Value {
	return unary("Reshape", x, v, nil)
}

// sliceAttrs is a Slice resolved against its input: elements start,
// start+step, … (length of them) along axis.
type sliceAttrs struct {
	axis, start, length, step int
}

// Slice is tensor.Tensor.Slice, recorded. Its gradient scatters g back
// into zeros of x's shape.
func (x *Value) Slice(dim, start, end, step int) *Value {
	const op = "Slice"
	t := live(op, x)
	out := t[0].Slice(dim, start, end, step)
	shape := t[0].Shape()
	a := normAxis(dim, len(shape))
	n := shape[a]
	start = clampIndex(start, n)
	return unary(op, x, out, sliceAttrs{axis: a, start: start, length: out.Shape()[a], step: step})
}

// clampIndex resolves a Python slice bound against an axis of size n, as
// tensor does.
func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}

// normAxis resolves a dim that tensor has already checked.
func normAxis(dim, rank int) int {
	if dim < 0 {
		return dim + rank
	}
	return dim
}

// Split is tensor.Tensor.Split, recorded as Slices.
func (x *Value) Split(dim, size int) []*Value {
	t := live("Split", x)
	return x.slicesLike(dim, t[0].Split(dim, size))
}

// Chunk is tensor.Tensor.Chunk, recorded as Slices.
func (x *Value) Chunk(dim, n int) []*Value {
	t := live("Chunk", x)
	return x.slicesLike(dim, t[0].Chunk(dim, n))
}

// slicesLike records x cut along dim as parts, the tensor op's views of it
// (which checked the arguments), are cut.
func (x *Value) slicesLike(dim int, parts []*tensor.Tensor) []*Value {
	defer releaseTensors(parts)
	a := normAxis(dim, x.Rank())
	out := make([]*Value, len(parts))
	start := 0
	for i, p := range parts {
		n := p.Shape()[a]
		out[i] = x.Slice(a, start, start+n, 1)
		start += n
	}
	return out
}

// permuteAttrs is a Permute's resolved permutation.
type permuteAttrs struct{ perm []int }

// T is tensor.Tensor.T, recorded.
func (x *Value) T() *Value {
	t := live("T", x)
	out := t[0].T()
	if x.Rank() < 2 {
		return x.viewAs(out)
	}
	return unary("Permute", x, out, permuteAttrs{[]int{1, 0}})
}

// Transpose is tensor.Tensor.Transpose, recorded as a Permute.
func (x *Value) Transpose(dim0, dim1 int) *Value {
	t := live("Transpose", x)
	out := t[0].Transpose(dim0, dim1)
	r := x.Rank()
	perm := identity(r)
	a, b := normAxis(dim0, r), normAxis(dim1, r)
	perm[a], perm[b] = b, a
	return unary("Permute", x, out, permuteAttrs{perm})
}

// Permute is tensor.Tensor.Permute, recorded.
func (x *Value) Permute(dims ...int) *Value {
	t := live("Permute", x)
	out := t[0].Permute(dims...)
	perm := make([]int, len(dims))
	for i, d := range dims {
		perm[i] = normAxis(d, len(dims))
	}
	return unary("Permute", x, out, permuteAttrs{perm})
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// concatAttrs are the joined axis and each input's size along it.
type concatAttrs struct {
	axis  int
	sizes []int
}

// Concat is tensor.Concat, recorded. Each input's gradient is its slice of g.
func Concat(dim int, vs ...*Value) *Value {
	const op = "Concat"
	live(op, vs...)
	vs, done := autocast(op, vs...)
	defer done()
	ts := live(op, vs...)
	out := tensor.Concat(dim, ts...)
	a := normAxis(dim, ts[0].Rank())
	sizes := make([]int, len(ts))
	for i, t := range ts {
		sizes[i] = t.Shape()[a]
	}
	return record(op, out, vs, concatAttrs{axis: a, sizes: sizes})
}

// Concat joins x and others along dim; see the package function Concat.
func (x *Value) Concat(dim int, others ...*Value) *Value {
	return Concat(dim, append([]*Value{x}, others...)...)
}

// Stack is tensor.Stack, recorded as Unsqueezes and a Concat.
func Stack(dim int, vs ...*Value) *Value {
	const op = "Stack"
	ts := live(op, vs...)
	if len(ts) == 0 {
		misuse(op, "no tensors to stack")
	}
	for _, t := range ts[1:] {
		if !slices.Equal(t.Shape(), ts[0].Shape()) {
			misuse(op, "shape mismatch: %v vs %v", ts[0].Shape(), t.Shape())
		}
	}
	parts := make([]*Value, len(vs))
	for i, v := range vs {
		parts[i] = v.Unsqueeze(dim)
	}
	defer releaseAllValues(parts...)
	return Concat(normAxis(dim, ts[0].Rank()+1), parts...)
}

// padAttrs are a constant Pad's (before, after) pairs, last axis first.
type padAttrs struct{ pads []int }

// Pad is tensor.Tensor.Pad, recorded. A constant pad's gradient crops g
// (and fills with zeros where a negative pad cropped x); a reflect pad is
// recorded as the IndexSelects tensor computes it with, whose gradients
// add the mirrored elements' back.
func (x *Value) Pad(pads []int, mode tensor.PadMode, value float64) *Value {
	const op = "Pad"
	t := live(op, x)
	if mode != tensor.PadReflect {
		return unary(op, x, t[0].Pad(pads, mode, value), padAttrs{slices.Clone(pads)})
	}
	shape := x.Shape()
	if !reflectPadsFit(shape, pads) {
		// tensor.Pad reports the misuse, before it computes anything.
		t[0].Pad(pads, mode, value).Release()
	}
	cur := x.Reshape(shape...)
	for i := range len(pads) / 2 {
		a, before, after := len(shape)-1-i, pads[2*i], pads[2*i+1]
		if before == 0 && after == 0 {
			continue
		}
		positions := Constant(tensor.FromInt32(x.Device(), tensor.ReflectIndex(shape[a], before, after)))
		next := cur.IndexSelect(a, positions)
		releaseAllValues(cur, positions)
		cur = next
	}
	return cur
}

// reflectPadsFit reports whether tensor.Pad accepts pads in reflect mode
// for shape: pairs for at most every axis, each pad in [0, axis size).
func reflectPadsFit(shape, pads []int) bool {
	if len(pads)%2 != 0 || len(pads)/2 > len(shape) {
		return false
	}
	for i := range len(pads) / 2 {
		n, before, after := shape[len(shape)-1-i], pads[2*i], pads[2*i+1]
		if before < 0 || after < 0 || before >= n || after >= n {
			return false
		}
	}
	return true
}

// Gather is tensor.Tensor.Gather, recorded. Its gradient adds g back at
// the gathered positions (a ScatterAdd into zeros), so positions gathered
// twice get both contributions.
func (x *Value) Gather(dim int, index *Value) *Value {
	const op = "Gather"
	t := live(op, x, index)
	out := t[0].Gather(dim, t[1])
	return record(op, out, []*Value{x, index}, normAxis(dim, x.Rank()))
}

// IndexSelect is tensor.Tensor.IndexSelect, recorded; repeated indices
// accumulate their gradients, as in Gather.
func (x *Value) IndexSelect(dim int, index *Value) *Value {
	const op = "IndexSelect"
	t := live(op, x, index)
	out := t[0].IndexSelect(dim, t[1])
	return record(op, out, []*Value{x, index}, normAxis(dim, x.Rank()))
}

// ScatterAdd is tensor.Tensor.ScatterAdd, recorded. x's gradient is g;
// src's is g gathered at index (zero where src is larger than index).
func (x *Value) ScatterAdd(dim int, index, src *Value) *Value {
	const op = "ScatterAdd"
	t := live(op, x, index, src)
	out := t[0].ScatterAdd(dim, t[1], t[2])
	return record(op, out, []*Value{x, index, src}, normAxis(dim, x.Rank()))
}

// OneHot is tensor.OneHot, recorded as not differentiable.
func OneHot(index *Value, numClasses int) *Value {
	t := live("OneHot", index)
	return unary("OneHot", index, tensor.OneHot(t[0], numClasses), nil)
}
