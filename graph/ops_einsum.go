package graph

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/internal/einsum"
	"github.com/webtensor/webtensor/tensor"
)

// Einsum is tensor.Einsum, recorded: the same plan (diagonals, sums,
// pairwise batched MatMuls in the same greedy order) runs on values, so
// the gradient comes from those recorded parts.
func Einsum(equation string, operands ...*Value) *Value {
	const op = "Einsum"
	if len(operands) == 0 {
		misuse(op, "equation %q: no operands", equation)
	}
	ts := live(op, operands...)
	shapes := make([][]int, len(ts))
	for i, t := range ts {
		shapes[i] = t.Shape()
	}
	plan, err := einsum.Parse(equation, shapes)
	if err != nil {
		var e *einsum.Error
		if errors.As(err, &e) {
			panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("%v (dtype %v, device %s)", err, ts[0].DType(), ts[0].Device().Name())})
		}
		panic(err)
	}
	return einsum.Run[*Value](plan, valueEinsumOps{}, operands)
}

// valueEinsumOps are einsum's primitives as recorded operations. The
// graph keeps what the backward pass needs, so intermediates are released
// as soon as the plan is done with them.
type valueEinsumOps struct{}

func (valueEinsumOps) Shape(x *Value) []int                 { return x.Shape() }
func (valueEinsumOps) Permute(x *Value, perm []int) *Value  { return x.Permute(perm...) }
func (valueEinsumOps) Reshape(x *Value, shape []int) *Value { return x.Reshape(shape...) }
func (valueEinsumOps) Sum(x *Value, dims []int) *Value      { return x.Sum(dims, false) }
func (valueEinsumOps) MatMul(a, b *Value) *Value            { return MatMul(a, b) }
func (valueEinsumOps) Release(*Value)                       {}
func (valueEinsumOps) Slice(x *Value, dim, start, end, step int) *Value {
	return x.Slice(dim, start, end, step)
}
