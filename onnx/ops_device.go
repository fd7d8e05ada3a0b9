package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

// Device implementations: each maps an ONNX operator onto tensor ops.
// Arguments that set shapes (axes, pads, shapes, slice bounds) must be on
// the host, that is constants or shape arithmetic.

type devFunc func(r *run, n *node, in []value) ([]value, error)

// ts returns inputs on the device (absent ones as nil).
func (r *run) ts(in []value) ([]*tensor.Tensor, error) {
	out := make([]*tensor.Tensor, len(in))
	for k, v := range in {
		if !v.present() {
			continue
		}
		t, err := r.tensor(v)
		if err != nil {
			return nil, err
		}
		out[k] = t
	}
	return out, nil
}

// hostArg returns input k, which must be on the host.
func hostArg(n *node, in []value, k int) (*hostTensor, error) {
	if k >= len(in) || !in[k].present() {
		return nil, nil
	}
	if in[k].host == nil {
		return nil, fmt.Errorf("input %d (%q) must be a constant or computed from shapes, not a device tensor", k, n.inputs[k])
	}
	return in[k].host, nil
}

func one(t *tensor.Tensor) []value { return []value{{dev: t}} }

func unaryOp(f func(*tensor.Tensor) *tensor.Tensor) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		x, err := r.tensor(in[0])
		if err != nil {
			return nil, err
		}
		return one(f(x)), nil
	}
}

func binaryOp(f func(a, b *tensor.Tensor) *tensor.Tensor) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		t, err := r.ts(in[:2])
		if err != nil {
			return nil, err
		}
		return one(f(t[0], t[1])), nil
	}
}

func devWhere(r *run, n *node, in []value) ([]value, error) {
	t, err := r.ts(in[:3])
	if err != nil {
		return nil, err
	}
	return one(tensor.Where(t[0], t[1], t[2])), nil
}

func devNot(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	return one(x.EqScalar(0)), nil
}

func devIdentity(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	return one(x.Reshape(x.Shape()...)), nil
}

func devShape(r *run, n *node, in []value) ([]value, error) {
	return []value{{host: shapeOf(n, in[0].shape())}}, nil
}

func devSize(r *run, n *node, in []value) ([]value, error) {
	c, err := elemCount(in[0].shape())
	return []value{{host: newHostInts(onnxpb.TensorProto_INT64, []int{}, []int64{int64(c)})}}, err
}

func devCast(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	to := onnxpb.TensorProto_DataType(n.attrInt("to", 1))
	switch {
	case to == onnxpb.TensorProto_BOOL:
		return one(x.NeScalar(0)), nil
	case isFloatType(to):
		return one(x.Cast(r.float)), nil
	case isIntType(to):
		return one(x.Cast(tensor.Int32)), nil
	}
	return nil, fmt.Errorf("Cast to %v is not supported", to)
}

func devClip(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	for k, bound := range []*float64{&lo, &hi} {
		h, err := hostArg(n, in, k+1)
		if err != nil {
			return nil, err
		}
		if h != nil {
			if h.len() != 1 {
				return nil, errors.New("Clip bounds must be scalars")
			}
			*bound = h.float(0)
		}
	}
	return one(x.Clamp(lo, hi)), nil
}

func devMatMul(r *run, n *node, in []value) ([]value, error) {
	t, err := r.ts(in[:2])
	if err != nil {
		return nil, err
	}
	a, b := t[0], t[1]
	// ONNX follows numpy.matmul: a 1-D operand gains an axis that the
	// result drops again.
	if a.Rank() == 1 || b.Rank() == 1 {
		aa, bb := a, b
		if a.Rank() == 1 {
			aa = a.Unsqueeze(0)
			defer aa.Release()
		}
		if b.Rank() == 1 {
			bb = b.Unsqueeze(1)
			defer bb.Release()
		}
		y := tensor.MatMul(aa, bb)
		defer y.Release()
		sq := []int{}
		if a.Rank() == 1 {
			sq = append(sq, y.Rank()-2)
		}
		if b.Rank() == 1 {
			sq = append(sq, y.Rank()-1)
		}
		return one(y.Squeeze(sq...)), nil
	}
	return one(tensor.MatMul(a, b)), nil
}

func devGemm(r *run, n *node, in []value) ([]value, error) {
	t, err := r.ts(in)
	if err != nil {
		return nil, err
	}
	var c *tensor.Tensor
	beta := n.attrFloat("beta", 1)
	if len(t) > 2 && t[2] != nil {
		c = t[2]
	} else {
		beta = 0
	}
	return one(tensor.Gemm(n.attrFloat("alpha", 1), t[0], n.attrInt("transA", 0) != 0, t[1], n.attrInt("transB", 0) != 0, beta, c)), nil
}

func devSoftmax(log bool) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		x, err := r.tensor(in[0])
		if err != nil {
			return nil, err
		}
		axis, err := normAxis(n.attrInt("axis", -1), x.Rank())
		if err != nil {
			return nil, err
		}
		if log {
			return one(x.LogSoftmax(axis)), nil
		}
		return one(x.Softmax(axis)), nil
	}
}

func devLayerNorm(r *run, n *node, in []value) ([]value, error) {
	t, err := r.ts(in)
	if err != nil {
		return nil, err
	}
	x := t[0]
	axis, err := normAxis(n.attrInt("axis", -1), x.Rank())
	if err != nil {
		return nil, err
	}
	var bias *tensor.Tensor
	if len(t) > 2 {
		bias = t[2]
	}
	return one(tensor.LayerNorm(x, x.Shape()[axis:], t[1], bias, n.attrFloat("epsilon", 1e-5))), nil
}

func devBatchNorm(r *run, n *node, in []value) ([]value, error) {
	t, err := r.ts(in[:5])
	if err != nil {
		return nil, err
	}
	return one(tensor.BatchNorm(t[0], t[3], t[4], t[1], t[2], false, 0, n.attrFloat("epsilon", 1e-5))), nil
}

// reduceAxes resolves a reduction's axes (attribute or input 1); none
// reduces everything unless noop_with_empty_axes.
func reduceAxes(n *node, in []value, rank int) ([]int, bool, error) {
	axes, ok := n.attrInts("axes")
	if !ok && len(in) > 1 {
		h, err := hostArg(n, in, 1)
		if err != nil {
			return nil, false, err
		}
		if h != nil {
			axes = h.intsAsInt()
		}
	}
	if len(axes) == 0 {
		if n.attrInt("noop_with_empty_axes", 0) != 0 {
			return nil, true, nil
		}
		for k := range rank {
			axes = append(axes, k)
		}
	}
	for k, a := range axes {
		na, err := normAxis(a, rank)
		if err != nil {
			return nil, false, err
		}
		axes[k] = na
	}
	return axes, false, nil
}

func devReduce(f func(x *tensor.Tensor, dims []int, keep bool) *tensor.Tensor) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		x, err := r.tensor(in[0])
		if err != nil {
			return nil, err
		}
		axes, noop, err := reduceAxes(n, in, x.Rank())
		if err != nil {
			return nil, err
		}
		if noop {
			return one(x.Reshape(x.Shape()...)), nil
		}
		return one(f(x, axes, n.attrInt("keepdims", 1) != 0)), nil
	}
}

func devGather(r *run, n *node, in []value) ([]value, error) {
	data, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(n.attrInt("axis", 0), data.Rank())
	if err != nil {
		return nil, err
	}
	shape := data.Shape()
	var idx *tensor.Tensor
	idxShape := in[1].shape()
	if h := in[1].host; h != nil {
		ix, err := gatherIndices(h, shape[axis])
		if err != nil {
			return nil, err
		}
		flat := make([]int32, len(ix))
		for k, v := range ix {
			flat[k] = int32(v)
		}
		idx = tensor.FromInt32(r.dev, flat, len(flat))
	} else {
		// ONNX counts negative indices from the end of the axis; the
		// tensor op takes [0, n) and rejects the rest, so add the axis
		// length where an index is negative.
		flat := in[1].dev.Reshape(-1)
		defer flat.Release()
		neg := flat.LtScalar(0)
		defer neg.Release()
		wrapped := flat.AddScalar(float64(shape[axis]))
		defer wrapped.Release()
		idx = tensor.Where(neg, wrapped, flat)
	}
	defer idx.Release()
	sel := data.IndexSelect(axis, idx)
	defer sel.Release()
	return one(sel.Reshape(slices.Concat(shape[:axis], idxShape, shape[axis+1:])...)), nil
}

func devConcat(r *run, n *node, in []value) ([]value, error) {
	t, err := r.ts(in)
	if err != nil {
		return nil, err
	}
	var parts []*tensor.Tensor
	for _, x := range t {
		if x != nil {
			parts = append(parts, x)
		}
	}
	if len(parts) == 0 {
		return nil, errors.New("Concat of nothing")
	}
	axis, err := normAxis(n.attrInt("axis", 0), parts[0].Rank())
	if err != nil {
		return nil, err
	}
	return one(tensor.Concat(axis, parts...)), nil
}

func devTranspose(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	perm, err := transposePerm(n, x.Rank())
	if err != nil {
		return nil, err
	}
	return one(x.Permute(perm...)), nil
}

func devReshape(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	spec, err := hostArg(n, in, 1)
	if err != nil || spec == nil {
		return nil, errors.Join(err, errors.New("Reshape needs a shape"))
	}
	shape, err := reshapeTarget(n, x.Shape(), spec.ints())
	if err != nil {
		return nil, err
	}
	return one(x.Reshape(shape...)), nil
}

func devFlatten(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	shape, err := flattenShape(n, x.Shape())
	if err != nil {
		return nil, err
	}
	return one(x.Reshape(shape...)), nil
}

// hostArgs gathers the host inputs from k on (absent ones nil).
func hostArgs(n *node, in []value, from int) ([]*hostTensor, error) {
	out := make([]*hostTensor, len(in))
	for k := from; k < len(in); k++ {
		h, err := hostArg(n, in, k)
		if err != nil {
			return nil, err
		}
		out[k] = h
	}
	return out, nil
}

func devUnsqueeze(squeeze bool) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		x, err := r.tensor(in[0])
		if err != nil {
			return nil, err
		}
		hs, err := hostArgs(n, in, 1)
		if err != nil {
			return nil, err
		}
		axes := axesArg(n, hs, 1)
		var shape []int
		if squeeze {
			shape, err = squeezeShape(x.Shape(), axes)
		} else {
			shape, err = unsqueezeShape(x.Shape(), axes)
		}
		if err != nil {
			return nil, err
		}
		return one(x.Reshape(shape...)), nil
	}
}

func devSlice(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	hs, err := hostArgs(n, in, 1)
	if err != nil {
		return nil, err
	}
	if hs[1] == nil || hs[2] == nil {
		return nil, errors.New("Slice needs starts and ends")
	}
	hs[0] = &hostTensor{shape: x.Shape()}
	starts, ends, axes, steps := sliceInputs(hs)
	args, err := sliceArgs(x.Shape(), starts, ends, axes, steps)
	if err != nil {
		return nil, err
	}
	y := x.Reshape(x.Shape()...)
	for _, a := range args {
		var next *tensor.Tensor
		if a.step > 0 {
			next = y.Slice(a.axis, a.start, max(a.end, a.start), a.step)
		} else {
			// A negative step walks backwards: gather the positions.
			next = indexSelect(r.dev, y, a.axis, a.indices())
		}
		y.Release()
		y = next
	}
	return one(y), nil
}

func devExpand(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	spec, err := hostArg(n, in, 1)
	if err != nil || spec == nil {
		return nil, errors.Join(err, errors.New("Expand needs a shape"))
	}
	shape, err := broadcastShapes(x.Shape(), spec.intsAsInt())
	if err != nil {
		return nil, err
	}
	return one(x.Expand(shape...)), nil
}

func devPad(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	hs, err := hostArgs(n, in, 1)
	if err != nil {
		return nil, err
	}
	if hs[1] == nil {
		return nil, errors.New("Pad needs pads")
	}
	pads := hs[1].intsAsInt()
	rank := x.Rank()
	if len(pads) != 2*rank {
		return nil, fmt.Errorf("Pad: %d pads for rank %d", len(pads), rank)
	}
	value := 0.0
	if len(hs) > 2 && hs[2] != nil && hs[2].len() == 1 {
		value = hs[2].float(0)
	}
	mode := tensor.PadConstant
	switch n.attrString("mode", "constant") {
	case "constant":
	case "reflect":
		mode = tensor.PadReflect
	default:
		return nil, fmt.Errorf("Pad mode %q is not supported", n.attrString("mode", ""))
	}
	return one(x.Pad(torchPads(pads, rank), mode, value)), nil
}

// torchPads converts ONNX's [x1_begin, x2_begin, …, x1_end, x2_end] to
// torch's (before, after) pairs from the last axis.
func torchPads(pads []int, rank int) []int {
	out := make([]int, 0, 2*rank)
	for a := rank - 1; a >= 0; a-- {
		out = append(out, pads[a], pads[a+rank])
	}
	return out
}

func devConstantOfShape(r *run, n *node, in []value) ([]value, error) {
	return nil, errors.New("ConstantOfShape needs a shape computed on the host")
}

// indexSelect picks host-known positions of x along axis (none gives an
// empty axis).
func indexSelect(dev *tensor.Device, x *tensor.Tensor, axis int, positions []int) *tensor.Tensor {
	if len(positions) == 0 {
		return x.Slice(axis, 0, 0, 1)
	}
	flat := make([]int32, len(positions))
	for k, v := range positions {
		flat[k] = int32(v)
	}
	idx := tensor.FromInt32(dev, flat, len(flat))
	defer idx.Release()
	return x.IndexSelect(axis, idx)
}
