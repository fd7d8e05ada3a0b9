package tensor

import (
	"errors"
	"slices"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/einsum"
)

// Einsum evaluates an Einstein summation over operands, as torch.einsum:
// "ij,jk->ik" is a matrix product, "ii->i" a diagonal, "ii" a trace,
// "bhqd,bhkd->bhqk" attention scores, "...ij->...ji" a batched transpose.
// Subscripts are letters (a–z, A–Z); "..." stands for broadcast
// dimensions; without "->" the output is the ellipsis dimensions and then
// the subscripts that occur once, in alphabetical order (upper case
// first). Labels left out of the output are summed, and size-1 dimensions
// broadcast.
//
// Einsum runs no kernel of its own: it takes diagonals with strided views,
// sums labels that only one operand has, and contracts operands pairwise as
// batched MatMuls between permutes and reshapes. With three or more
// operands the pairs are chosen greedily, smallest intermediate first (as
// opt_einsum's greedy strategy). A malformed equation, or one that does not
// fit the operands' shapes, panics with an *Error naming the equation and
// the shapes.
func Einsum(equation string, operands ...*Tensor) *Tensor {
	const op = "Einsum"
	if len(operands) == 0 {
		misuse(op, "equation %q: no operands", equation)
	}
	ts, moved := routeList(op, operands)
	defer releaseAll(moved...)
	dev := sameDevice(op, ts...)
	shapes := make([][]int, len(ts))
	for i, t := range ts {
		t.checkLive(op)
		sameDType(op, ts[0], t)
		shapes[i] = t.Shape()
	}
	plan, err := einsum.Parse(equation, shapes)
	if err != nil {
		var e *einsum.Error
		if errors.As(err, &e) {
			misuse(op, "%v (dtype %v, device %s)", err, ts[0].dtype, dev.Name())
		}
		panic(err)
	}
	checkOp(op, dev, ts[0].dtype)
	return einsum.Run[*Tensor](plan, tensorEinsumOps{}, ts)
}

// tensorEinsumOps are einsum's primitives on tensors of one device; each
// issues the kernel directly, as the operands are already placed.
type tensorEinsumOps struct{}

func (tensorEinsumOps) Shape(x *Tensor) []int                 { return x.Shape() }
func (tensorEinsumOps) Permute(x *Tensor, perm []int) *Tensor { return x.permute(perm) }
func (tensorEinsumOps) Reshape(x *Tensor, shape []int) *Tensor {
	return x.Reshape(shape...)
}
func (tensorEinsumOps) Slice(x *Tensor, dim, start, end, step int) *Tensor {
	return x.Slice(dim, start, end, step)
}
func (tensorEinsumOps) Sum(x *Tensor, dims []int) *Tensor {
	return x.reduceHere("Einsum", hal.Sum, slices.Clone(dims), false)
}
func (tensorEinsumOps) MatMul(a, b *Tensor) *Tensor {
	return gemm("Einsum", 1, a, false, b, false, 0, nil)
}
func (tensorEinsumOps) Release(x *Tensor) { x.Release() }

var _ = registerOps(
	Op{Name: "Einsum", Family: FamilyLinalg, DTypes: allTypes, Kernels: func(t DType) []Kernel {
		return kernels(k(hal.KernelMatMul, t), k(hal.Sum.Kernel(), t), k(hal.KernelCopy, t))
	}},
)
