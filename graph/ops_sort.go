package graph

import "github.com/webtensor/webtensor/tensor"

// selectAttrs say where a selection along an axis (Sort, TopK, KthValue)
// took its values: the axis, and whether the result kept it (KthValue
// without keepDim drops it).
type selectAttrs struct {
	axis    int
	keepDim bool
}

// sortAxis resolves a dim that tensor has already checked; a scalar's one
// dim is 0.
func sortAxis(dim, rank int) int {
	if rank == 0 {
		return 0
	}
	return normAxis(dim, rank)
}

// Sort is tensor.Tensor.Sort, recorded. The gradient of the values goes
// back to the positions they came from (a ScatterAdd of g at the indices
// into zeros), as torch.sort's; the indices are an Int32 value that needs
// no gradient.
func (x *Value) Sort(dim int, descending, stable bool) (values, indices *Value) {
	t := live("Sort", x)
	v, idx := t[0].Sort(dim, descending, stable)
	values = record("Sort", v, []*Value{x}, selectAttrs{sortAxis(dim, x.Rank()), true}, alias(idx))
	return values, Constant(idx)
}

// Argsort is tensor.Tensor.Argsort: Int32 positions, not differentiable.
func (x *Value) Argsort(dim int, descending, stable bool) *Value {
	t := live("Argsort", x)
	return unary("Argsort", x, t[0].Argsort(dim, descending, stable), nil)
}

// TopK is tensor.Tensor.TopK, recorded; the gradient goes back to the
// positions the k values came from, as in Sort.
func (x *Value) TopK(k, dim int, largest, sorted bool) (values, indices *Value) {
	t := live("TopK", x)
	v, idx := t[0].TopK(k, dim, largest, sorted)
	values = record("TopK", v, []*Value{x}, selectAttrs{sortAxis(dim, x.Rank()), true}, alias(idx))
	return values, Constant(idx)
}

// KthValue is tensor.Tensor.KthValue, recorded; the gradient goes back to
// the position the value came from, as in Sort.
func (x *Value) KthValue(k, dim int, keepDim bool) (values, indices *Value) {
	t := live("KthValue", x)
	v, idx := t[0].KthValue(k, dim, keepDim)
	values = record("KthValue", v, []*Value{x}, selectAttrs{sortAxis(dim, x.Rank()), keepDim}, alias(idx))
	return values, Constant(idx)
}

// Cumsum is tensor.Tensor.Cumsum, recorded. Its gradient is the reversed
// cumulative sum of g: element i feeds every output from i on.
func (x *Value) Cumsum(dim int) *Value {
	return x.scan("Cumsum", dim, (*tensor.Tensor).Cumsum)
}

// Cumprod is tensor.Tensor.Cumprod, recorded. Its gradient is torch's,
// right also where the input has zeros: before a row's first zero the
// reversed cumulative sum of g·y divided by x; at the first zero the same
// sum over the products that skip it; after it 0.
func (x *Value) Cumprod(dim int) *Value {
	return x.scan("Cumprod", dim, (*tensor.Tensor).Cumprod)
}

// LogCumSumExp is tensor.Tensor.LogCumSumExp, recorded. Its gradient is
// torch's stable form: e^(x_i − y_j) summed over j ≥ i, weighted by g_j,
// computed as two reversed logcumsumexps (of ln g_j − y_j over the
// positive and the negative g) so that nothing overflows.
func (x *Value) LogCumSumExp(dim int) *Value {
	return x.scan("LogCumSumExp", dim, (*tensor.Tensor).LogCumSumExp)
}

// scan records a scan along dim, computed in float32 for a float16 x
// under autocast (PyTorch's fp32 list).
func (x *Value) scan(op string, dim int, run func(*tensor.Tensor, int) *tensor.Tensor) *Value {
	live(op, x)
	xs, done := autocast(op, x)
	defer done()
	x = xs[0]
	t := live(op, x)
	return unary(op, x, run(t[0], dim), sortAxis(dim, x.Rank()))
}
