package onnx

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/tensor"
)

// The issue-19 operators PyTorch 1.13's exporter emits for torch.topk,
// torch.cumsum, torch.einsum and torch.triu/tril, mapped onto tensor's
// TopK, Cumsum, Einsum and Triu/Tril, and ArgMin beside ArgMax.
// (torch.flip exports as Slice with negative steps, which devSlice runs.)

// scalarArg reads input k as one host integer: TopK's K, CumSum's axis and
// Trilu's k are constants (or shape arithmetic) in exported models, so a
// device tensor there is an error naming the input.
func scalarArg(n *node, in []value, k int, what string) (int, bool, error) {
	h, err := hostArg(n, in, k)
	if err != nil || h == nil {
		return 0, false, err
	}
	if h.len() != 1 {
		return 0, false, fmt.Errorf("%s must hold one value, not shape %v", what, h.shape)
	}
	if h.isFloat() {
		return 0, false, fmt.Errorf("%s must be an integer, not %v", what, h.elem)
	}
	return int(h.int(0)), true, nil
}

// devTopK returns the values and, as Int32 (ONNX's int64, narrowed as
// ArgMax's), the indices of the K largest or smallest elements along
// axis. Ties keep the lower index first, as ONNX asks; sorted=0 leaves
// the order free, so the sorted order is as good as any.
func devTopK(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	k, ok, err := scalarArg(n, in, 1, "TopK's K")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("TopK needs K (an input since opset 10)")
	}
	axis, err := normAxis(n.attrInt("axis", -1), x.Rank())
	if err != nil {
		return nil, err
	}
	if size := x.Shape()[axis]; k < 0 || k > size {
		return nil, fmt.Errorf("TopK: K %d is out of range for axis %d of shape %v (want 0 … %d)", k, axis, x.Shape(), size)
	}
	values, indices := x.TopK(k, axis, n.attrInt("largest", 1) != 0, n.attrInt("sorted", 1) != 0)
	return []value{{dev: values}, {dev: indices}}, nil
}

// devCumSum is the running sum along axis. reverse sums from the end
// (Flip, scan, Flip back) and exclusive leaves each element out of its own
// sum: the input shifted one place along the axis (its last element
// dropped, a zero put first) is scanned instead, so no subtraction can
// turn an infinity into NaN.
func devCumSum(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	a, ok, err := scalarArg(n, in, 1, "CumSum's axis")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("CumSum needs an axis")
	}
	axis, err := normAxis(a, x.Rank())
	if err != nil {
		return nil, err
	}
	reverse, exclusive := n.attrInt("reverse", 0) != 0, n.attrInt("exclusive", 0) != 0
	y := x.Reshape(x.Shape()...)
	if reverse {
		next := y.Flip(axis)
		y.Release()
		y = next
	}
	if size := x.Shape()[axis]; exclusive && size > 0 {
		head := y.Slice(axis, 0, size-1, 1)
		y.Release()
		// torch's pads run (before, after) from the last axis: one zero
		// before along axis.
		pads := make([]int, 2*(x.Rank()-axis))
		pads[len(pads)-2] = 1
		y = head.Pad(pads, tensor.PadConstant, 0)
		head.Release()
	}
	next := y.Cumsum(axis)
	y.Release()
	y = next
	if reverse {
		next := y.Flip(axis)
		y.Release()
		y = next
	}
	return one(y), nil
}

func checkCumSum(n *node) error {
	for _, a := range []string{"exclusive", "reverse"} {
		if v := n.attrInt(a, 0); v != 0 && v != 1 {
			return fmt.Errorf("CumSum's %s is %d, want 0 or 1", a, v)
		}
	}
	return nil
}

// devEinsum runs the equation attribute through tensor.Einsum, whose
// grammar (explicit or implicit output, "...", repeated indices for
// diagonals) is ONNX's.
func devEinsum(r *run, n *node, in []value) ([]value, error) {
	ts, err := r.ts(in)
	if err != nil {
		return nil, err
	}
	eq := n.attrString("equation", "")
	if eq == "" {
		return nil, errors.New("Einsum needs an equation")
	}
	return one(tensor.Einsum(eq, ts...)), nil
}

// devTrilu keeps the upper (upper=1, the default) or lower triangle of the
// last two axes, from diagonal k (input 1, default 0), as torch.triu and
// torch.tril.
func devTrilu(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	k, _, err := scalarArg(n, in, 1, "Trilu's k")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 {
		return nil, fmt.Errorf("Trilu needs a matrix (rank ≥ 2), not shape %v", x.Shape())
	}
	if n.attrInt("upper", 1) != 0 {
		return one(x.Triu(k)), nil
	}
	return one(x.Tril(k)), nil
}

// devArgMin is ArgMax's twin for torch.argmin: Int32 indices of the first
// smallest element along axis.
func devArgMin(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(n.attrInt("axis", 0), x.Rank())
	if err != nil {
		return nil, err
	}
	return one(x.ArgMin([]int{axis}, n.attrInt("keepdims", 1) != 0)), nil
}
