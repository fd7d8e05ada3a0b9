package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Host implementations: the shape arithmetic PyTorch's exporter emits,
// computed in int64 (and float64) on the host, at load time when the
// inputs are constants and at run time when they come from Shape.

func hostShape(n *node, in []*hostTensor) ([]*hostTensor, error) {
	return []*hostTensor{shapeOf(n, in[0].shape)}, nil
}

// shapeOf is Shape's result for a tensor of shape s (opset 15 start/end).
func shapeOf(n *node, s []int) *hostTensor {
	r := len(s)
	start, end := n.attrInt("start", 0), n.attrInt("end", r)
	clampAxis := func(a int) int {
		if a < 0 {
			a += r
		}
		return min(max(a, 0), r)
	}
	start, end = clampAxis(start), clampAxis(end)
	out := []int64{}
	for k := start; k < end; k++ {
		out = append(out, int64(s[k]))
	}
	return scalarInts(out...)
}

func hostSize(n *node, in []*hostTensor) ([]*hostTensor, error) {
	c, err := elemCount(in[0].shape)
	return []*hostTensor{newHostInts(onnxpb.TensorProto_INT64, []int{}, []int64{int64(c)})}, err
}

func hostIdentity(n *node, in []*hostTensor) ([]*hostTensor, error) { return in[:1], nil }

func hostConstant(n *node, in []*hostTensor) ([]*hostTensor, error) {
	switch {
	case n.attrs["value"] != nil:
		t, err := n.attrTensor("value")
		return []*hostTensor{t}, err
	case n.attrs["value_float"] != nil:
		return []*hostTensor{newHostFloats(onnxpb.TensorProto_FLOAT, []int{}, []float64{n.attrFloat("value_float", 0)})}, nil
	case n.attrs["value_floats"] != nil:
		fs := n.attrs["value_floats"].GetFloats()
		v := make([]float64, len(fs))
		for k, f := range fs {
			v[k] = float64(f)
		}
		return []*hostTensor{newHostFloats(onnxpb.TensorProto_FLOAT, []int{len(v)}, v)}, nil
	case n.attrs["value_int"] != nil:
		return []*hostTensor{newHostInts(onnxpb.TensorProto_INT64, []int{}, []int64{int64(n.attrInt("value_int", 0))})}, nil
	case n.attrs["value_ints"] != nil:
		return []*hostTensor{scalarInts(n.attrs["value_ints"].GetInts()...)}, nil
	}
	return nil, errors.New("Constant without a supported value attribute")
}

func hostConstantOfShape(n *node, in []*hostTensor) ([]*hostTensor, error) {
	shape := in[0].intsAsInt()
	count, err := computedCount(shape)
	if err != nil {
		return nil, err
	}
	fill := newHostFloats(onnxpb.TensorProto_FLOAT, []int{1}, []float64{0})
	if n.attrs["value"] != nil {
		if fill, err = n.attrTensor("value"); err != nil {
			return nil, err
		}
		if fill.len() != 1 {
			return nil, errors.New("ConstantOfShape value must have one element")
		}
	}
	if fill.isFloat() {
		v := make([]float64, count)
		for k := range v {
			v[k] = fill.f[0]
		}
		return []*hostTensor{newHostFloats(fill.elem, shape, v)}, nil
	}
	v := make([]int64, count)
	for k := range v {
		v[k] = fill.i[0]
	}
	return []*hostTensor{newHostInts(fill.elem, shape, v)}, nil
}

func hostCast(n *node, in []*hostTensor) ([]*hostTensor, error) {
	out, err := in[0].cast(onnxpb.TensorProto_DataType(n.attrInt("to", 1)))
	return []*hostTensor{out}, err
}

func hostRange(n *node, in []*hostTensor) ([]*hostTensor, error) {
	start, limit, delta := in[0], in[1], in[2]
	if start.len() != 1 || limit.len() != 1 || delta.len() != 1 {
		return nil, errors.New("Range takes scalars")
	}
	if start.isFloat() {
		s, l, d := start.f[0], limit.f[0], delta.f[0]
		if d == 0 {
			return nil, errors.New("Range delta is 0")
		}
		c := math.Ceil((l - s) / d)
		if c > maxComputedElements {
			return nil, fmt.Errorf("Range of %v elements", c)
		}
		v := make([]float64, max(int(c), 0))
		for k := range v {
			v[k] = s + float64(k)*d
		}
		return []*hostTensor{newHostFloats(start.elem, []int{len(v)}, v)}, nil
	}
	s, l, d := start.i[0], limit.i[0], delta.i[0]
	if d == 0 {
		return nil, errors.New("Range delta is 0")
	}
	c := math.Ceil(float64(l-s) / float64(d))
	if c > maxComputedElements {
		return nil, fmt.Errorf("Range of %v elements", c)
	}
	v := make([]int64, max(int(c), 0))
	for k := range v {
		v[k] = s + int64(k)*d
	}
	return []*hostTensor{newHostInts(start.elem, []int{len(v)}, v)}, nil
}

// gatherIndices resolves Gather's indices (negative count from the end)
// against an axis of size dim.
func gatherIndices(idx *hostTensor, dim int) ([]int, error) {
	out := make([]int, idx.len())
	for k := range out {
		v := idx.int(k)
		if v < 0 {
			v += int64(dim)
		}
		if v < 0 || v >= int64(dim) {
			return nil, fmt.Errorf("Gather index %d out of range for an axis of %d", idx.int(k), dim)
		}
		out[k] = int(v)
	}
	return out, nil
}

func hostGather(n *node, in []*hostTensor) ([]*hostTensor, error) {
	data, idx := in[0], in[1]
	axis, err := normAxis(n.attrInt("axis", 0), len(data.shape))
	if err != nil {
		return nil, err
	}
	ix, err := gatherIndices(idx, data.shape[axis])
	if err != nil {
		return nil, err
	}
	outShape := slices.Concat(data.shape[:axis], idx.shape, data.shape[axis+1:])
	if _, err := computedCount(outShape, data); err != nil {
		return nil, err
	}
	outer, _ := elemCount(data.shape[:axis])
	inner, _ := elemCount(data.shape[axis+1:])
	out := &hostTensor{elem: data.elem, shape: outShape}
	pick := func(emit func(src int)) {
		for o := range outer {
			for _, i := range ix {
				base := (o*data.shape[axis] + i) * inner
				for k := range inner {
					emit(base + k)
				}
			}
		}
	}
	if data.isFloat() {
		out.f = []float64{}
		pick(func(s int) { out.f = append(out.f, data.f[s]) })
	} else {
		out.i = []int64{}
		pick(func(s int) { out.i = append(out.i, data.i[s]) })
	}
	return []*hostTensor{out}, nil
}

func hostConcat(n *node, in []*hostTensor) ([]*hostTensor, error) {
	var parts []*hostTensor
	for _, t := range in {
		if t != nil {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return nil, errors.New("Concat of nothing")
	}
	rank := len(parts[0].shape)
	axis, err := normAxis(n.attrInt("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	outShape := slices.Clone(parts[0].shape)
	outShape[axis] = 0
	for _, p := range parts {
		if len(p.shape) != rank || p.isFloat() != parts[0].isFloat() {
			return nil, errors.New("Concat inputs differ in rank or type")
		}
		for k := range rank {
			if k != axis && p.shape[k] != parts[0].shape[k] {
				return nil, fmt.Errorf("Concat shapes %v and %v differ off axis %d", parts[0].shape, p.shape, axis)
			}
		}
		outShape[axis] += p.shape[axis]
	}
	if _, err := computedCount(outShape, in...); err != nil {
		return nil, err
	}
	outer, _ := elemCount(outShape[:axis])
	out := &hostTensor{elem: parts[0].elem, shape: outShape}
	for o := range outer {
		for _, p := range parts {
			chunk, _ := elemCount(p.shape[axis:])
			if p.isFloat() {
				out.f = append(out.f, p.f[o*chunk:(o+1)*chunk]...)
			} else {
				out.i = append(out.i, p.i[o*chunk:(o+1)*chunk]...)
			}
		}
	}
	if out.isFloat() && out.f == nil {
		out.f = []float64{}
	}
	if !out.isFloat() && out.i == nil {
		out.i = []int64{}
	}
	return []*hostTensor{out}, nil
}

// withShape returns h's data under another shape of the same size.
func withShape(h *hostTensor, shape []int) (*hostTensor, error) {
	c, err := elemCount(shape)
	if err != nil {
		return nil, err
	}
	if c != h.len() {
		return nil, fmt.Errorf("cannot view %v as %v", h.shape, shape)
	}
	return &hostTensor{elem: h.elem, shape: shape, f: h.f, i: h.i}, nil
}

// unsqueezeShape inserts size-1 axes at axes (negative count from the
// result's end).
func unsqueezeShape(shape, axes []int) ([]int, error) {
	rank := len(shape) + len(axes)
	mark := make([]bool, rank)
	for _, a := range axes {
		a, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if mark[a] {
			return nil, fmt.Errorf("axis %d repeated", a)
		}
		mark[a] = true
	}
	out := make([]int, 0, rank)
	src := 0
	for k := range rank {
		if mark[k] {
			out = append(out, 1)
		} else {
			out = append(out, shape[src])
			src++
		}
	}
	return out, nil
}

// squeezeShape removes axes (all size-1 axes when axes is nil).
func squeezeShape(shape, axes []int) ([]int, error) {
	drop := make([]bool, len(shape))
	if axes == nil {
		for k, d := range shape {
			drop[k] = d == 1
		}
	}
	for _, a := range axes {
		a, err := normAxis(a, len(shape))
		if err != nil {
			return nil, err
		}
		if shape[a] != 1 {
			return nil, fmt.Errorf("cannot squeeze axis %d of size %d", a, shape[a])
		}
		drop[a] = true
	}
	var out []int
	for k, d := range shape {
		if !drop[k] {
			out = append(out, d)
		}
	}
	return append([]int{}, out...), nil
}

// axesArg returns axes from the attribute (older opsets) or input k.
func axesArg(n *node, in []*hostTensor, k int) []int {
	if a, ok := n.attrInts("axes"); ok {
		return a
	}
	if t := input(in, k); t != nil {
		return t.intsAsInt()
	}
	return nil
}

func hostUnsqueeze(n *node, in []*hostTensor) ([]*hostTensor, error) {
	shape, err := unsqueezeShape(in[0].shape, axesArg(n, in, 1))
	if err != nil {
		return nil, err
	}
	out, err := withShape(in[0], shape)
	return []*hostTensor{out}, err
}

func hostSqueeze(n *node, in []*hostTensor) ([]*hostTensor, error) {
	shape, err := squeezeShape(in[0].shape, axesArg(n, in, 1))
	if err != nil {
		return nil, err
	}
	out, err := withShape(in[0], shape)
	return []*hostTensor{out}, err
}

// reshapeTarget resolves Reshape's shape argument: 0 copies the input's
// dimension (unless allowzero), −1 is inferred.
func reshapeTarget(n *node, from []int, spec []int64) ([]int, error) {
	out := make([]int, len(spec))
	infer := -1
	known := 1
	for k, d := range spec {
		switch {
		case d == 0 && n.attrInt("allowzero", 0) == 0:
			if k >= len(from) {
				return nil, fmt.Errorf("Reshape %v: 0 at axis %d of a rank-%d input", spec, k, len(from))
			}
			out[k] = from[k]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("Reshape %v has two -1", spec)
			}
			infer = k
			continue
		case d < 0 || d > maxHostElements:
			return nil, fmt.Errorf("Reshape to %v", spec)
		default:
			out[k] = int(d)
		}
		if out[k] != 0 && known > maxHostElements/out[k] {
			return nil, fmt.Errorf("Reshape to %v", spec)
		}
		known *= out[k]
	}
	total, err := elemCount(from)
	if err != nil {
		return nil, err
	}
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %v to %v", from, spec)
		}
		out[infer] = total / known
	} else if known != total {
		return nil, fmt.Errorf("cannot reshape %v to %v", from, spec)
	}
	return out, nil
}

func hostReshape(n *node, in []*hostTensor) ([]*hostTensor, error) {
	shape, err := reshapeTarget(n, in[0].shape, in[1].ints())
	if err != nil {
		return nil, err
	}
	out, err := withShape(in[0], shape)
	return []*hostTensor{out}, err
}

func hostFlatten(n *node, in []*hostTensor) ([]*hostTensor, error) {
	shape, err := flattenShape(n, in[0].shape)
	if err != nil {
		return nil, err
	}
	out, err := withShape(in[0], shape)
	return []*hostTensor{out}, err
}

func flattenShape(n *node, s []int) ([]int, error) {
	axis := n.attrInt("axis", 1)
	if axis < 0 {
		axis += len(s)
	}
	if axis < 0 || axis > len(s) {
		return nil, fmt.Errorf("Flatten axis %d for rank %d", n.attrInt("axis", 1), len(s))
	}
	a, _ := elemCount(s[:axis])
	b, _ := elemCount(s[axis:])
	return []int{a, b}, nil
}

// sliceArgs resolves Slice's starts/ends/axes/steps for shape into per-
// axis (start, end, step) in Python's convention, clamped to the axis.
type sliceAxis struct{ axis, start, end, step int }

// indices lists the positions the slice picks along its axis, in order.
func (a sliceAxis) indices() []int {
	var out []int
	for i := a.start; a.step > 0 && i < a.end || a.step < 0 && i > a.end; i += a.step {
		out = append(out, i)
	}
	return out
}

func sliceArgs(shape []int, starts, ends, axes, steps []int64) ([]sliceAxis, error) {
	if len(ends) != len(starts) || axes != nil && len(axes) != len(starts) || steps != nil && len(steps) != len(starts) {
		return nil, errors.New("Slice starts, ends, axes and steps differ in length")
	}
	var out []sliceAxis
	for k := range starts {
		axis := k
		if axes != nil {
			a, err := normAxis(int(axes[k]), len(shape))
			if err != nil {
				return nil, err
			}
			axis = a
		}
		step := int64(1)
		if steps != nil {
			step = steps[k]
		}
		if step == 0 {
			return nil, errors.New("Slice step 0")
		}
		dim := int64(shape[axis])
		// Positive steps clamp to [0, dim], negative ones (a reversed
		// walk) to [-1, dim-1], as numpy does.
		lo, hi := int64(0), dim
		if step < 0 {
			lo, hi = -1, dim-1
		}
		clamp := func(v int64) int64 {
			if v < 0 {
				v += dim
			}
			return min(max(v, lo), hi)
		}
		out = append(out, sliceAxis{axis, int(clamp(starts[k])), int(clamp(ends[k])), int(step)})
	}
	return out, nil
}

func sliceInputs(in []*hostTensor) (starts, ends, axes, steps []int64) {
	starts, ends = in[1].ints(), in[2].ints()
	if t := input(in, 3); t != nil {
		axes = t.ints()
	}
	if t := input(in, 4); t != nil {
		steps = t.ints()
	}
	return
}

func hostSlice(n *node, in []*hostTensor) ([]*hostTensor, error) {
	starts, ends, axes, steps := sliceInputs(in)
	args, err := sliceArgs(in[0].shape, starts, ends, axes, steps)
	if err != nil {
		return nil, err
	}
	src := in[0]
	ranges := make([][]int, len(src.shape))
	for k, d := range src.shape {
		for i := range d {
			ranges[k] = append(ranges[k], i)
		}
	}
	for _, a := range args {
		ranges[a.axis] = a.indices()
	}
	return []*hostTensor{pickAxes(src, ranges)}, nil
}

// pickAxes returns src restricted to the given indices along every axis.
func pickAxes(src *hostTensor, ranges [][]int) *hostTensor {
	shape := make([]int, len(ranges))
	for k, r := range ranges {
		shape[k] = len(r)
	}
	count, _ := elemCount(shape)
	st := stridesOf(src.shape)
	out := &hostTensor{elem: src.elem, shape: shape}
	if src.isFloat() {
		out.f = make([]float64, count)
	} else {
		out.i = make([]int64, count)
	}
	for flat := range count {
		rem, at := flat, 0
		for k := len(shape) - 1; k >= 0; k-- {
			at += ranges[k][rem%shape[k]] * st[k]
			rem /= shape[k]
		}
		if src.isFloat() {
			out.f[flat] = src.f[at]
		} else {
			out.i[flat] = src.i[at]
		}
	}
	return out
}

func hostTranspose(n *node, in []*hostTensor) ([]*hostTensor, error) {
	src := in[0]
	perm, err := transposePerm(n, len(src.shape))
	if err != nil {
		return nil, err
	}
	shape := make([]int, len(perm))
	for k, p := range perm {
		shape[k] = src.shape[p]
	}
	count, _ := elemCount(shape)
	st := stridesOf(src.shape)
	out := &hostTensor{elem: src.elem, shape: shape}
	if src.isFloat() {
		out.f = make([]float64, count)
	} else {
		out.i = make([]int64, count)
	}
	for flat := range count {
		rem, at := flat, 0
		for k := len(shape) - 1; k >= 0; k-- {
			at += (rem % shape[k]) * st[perm[k]]
			rem /= shape[k]
		}
		if src.isFloat() {
			out.f[flat] = src.f[at]
		} else {
			out.i[flat] = src.i[at]
		}
	}
	return []*hostTensor{out}, nil
}

func transposePerm(n *node, rank int) ([]int, error) {
	perm, ok := n.attrInts("perm")
	if !ok {
		perm = make([]int, rank)
		for k := range perm {
			perm[k] = rank - 1 - k
		}
	}
	if len(perm) != rank {
		return nil, fmt.Errorf("Transpose perm %v for rank %d", perm, rank)
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= rank || seen[p] {
			return nil, fmt.Errorf("Transpose perm %v is not a permutation", perm)
		}
		seen[p] = true
	}
	return perm, nil
}

// hostElementwise applies f over NumPy-broadcast inputs; integer inputs
// use fi, floating-point ones ff. Comparisons return BOOL.
func hostElementwise(ff func(x []float64) float64, fi func(x []int64) (int64, error), resultBool bool) func(*node, []*hostTensor) ([]*hostTensor, error) {
	return func(n *node, in []*hostTensor) ([]*hostTensor, error) {
		shapes := make([][]int, len(in))
		for k, t := range in {
			shapes[k] = t.shape
		}
		out, err := broadcastShapes(shapes...)
		if err != nil {
			return nil, err
		}
		count, err := computedCount(out, in...)
		if err != nil {
			return nil, err
		}
		// Where's first input is the condition; the type follows the rest.
		typed := in[len(in)-1]
		elem := typed.elem
		if resultBool {
			elem = onnxpb.TensorProto_BOOL
		}
		res := &hostTensor{elem: elem, shape: out}
		useFloat := typed.isFloat()
		if useFloat && !resultBool {
			res.f = make([]float64, count)
		} else {
			res.i = make([]int64, count)
		}
		xf := make([]float64, len(in))
		xi := make([]int64, len(in))
		for flat := range count {
			for k, t := range in {
				j := broadcastIndex(out, t.shape, flat)
				xf[k], xi[k] = t.float(j), t.int(j)
			}
			switch {
			case useFloat && resultBool:
				res.i[flat] = int64(ff(xf))
			case useFloat:
				res.f[flat] = ff(xf)
			default:
				v, err := fi(xi)
				if err != nil {
					return nil, err
				}
				res.i[flat] = v
			}
		}
		return []*hostTensor{res}, nil
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func booli(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

var (
	hostAdd = hostElementwise(func(x []float64) float64 { return x[0] + x[1] }, func(x []int64) (int64, error) { return x[0] + x[1], nil }, false)
	hostSub = hostElementwise(func(x []float64) float64 { return x[0] - x[1] }, func(x []int64) (int64, error) { return x[0] - x[1], nil }, false)
	hostMul = hostElementwise(func(x []float64) float64 { return x[0] * x[1] }, func(x []int64) (int64, error) { return x[0] * x[1], nil }, false)
	hostDiv = hostElementwise(func(x []float64) float64 { return x[0] / x[1] }, func(x []int64) (int64, error) {
		if x[1] == 0 {
			return 0, errors.New("integer division by zero")
		}
		return x[0] / x[1], nil // ONNX integer Div truncates, as C
	}, false)
	hostPow   = hostElementwise(func(x []float64) float64 { return math.Pow(x[0], x[1]) }, func(x []int64) (int64, error) { return int64(math.Pow(float64(x[0]), float64(x[1]))), nil }, false)
	hostEqual = hostElementwise(func(x []float64) float64 { return boolf(x[0] == x[1]) }, func(x []int64) (int64, error) { return booli(x[0] == x[1]), nil }, true)
	hostLess  = hostElementwise(func(x []float64) float64 { return boolf(x[0] < x[1]) }, func(x []int64) (int64, error) { return booli(x[0] < x[1]), nil }, true)
	hostGreat = hostElementwise(func(x []float64) float64 { return boolf(x[0] > x[1]) }, func(x []int64) (int64, error) { return booli(x[0] > x[1]), nil }, true)
	hostWhere = hostElementwise(func(x []float64) float64 {
		if x[0] != 0 {
			return x[1]
		}
		return x[2]
	}, func(x []int64) (int64, error) {
		if x[0] != 0 {
			return x[1], nil
		}
		return x[2], nil
	}, false)
	hostNeg  = hostElementwise(func(x []float64) float64 { return -x[0] }, func(x []int64) (int64, error) { return -x[0], nil }, false)
	hostAbs  = hostElementwise(func(x []float64) float64 { return math.Abs(x[0]) }, func(x []int64) (int64, error) { return max(x[0], -x[0]), nil }, false)
	hostNot  = hostElementwise(func(x []float64) float64 { return boolf(x[0] == 0) }, func(x []int64) (int64, error) { return booli(x[0] == 0), nil }, true)
	hostSqrt = hostFloatUnary(math.Sqrt)
)

// hostFloatUnary applies f to a floating-point tensor.
func hostFloatUnary(f func(float64) float64) func(*node, []*hostTensor) ([]*hostTensor, error) {
	return func(n *node, in []*hostTensor) ([]*hostTensor, error) {
		if !in[0].isFloat() {
			return nil, fmt.Errorf("%s takes a floating-point tensor", n.op)
		}
		out := make([]float64, len(in[0].f))
		for k, v := range in[0].f {
			out[k] = f(v)
		}
		return []*hostTensor{newHostFloats(in[0].elem, in[0].shape, out)}, nil
	}
}

func hostExpand(n *node, in []*hostTensor) ([]*hostTensor, error) {
	spec := in[1].intsAsInt()
	out, err := broadcastShapes(in[0].shape, spec)
	if err != nil {
		return nil, err
	}
	count, err := computedCount(out)
	if err != nil {
		return nil, err
	}
	res := &hostTensor{elem: in[0].elem, shape: out}
	if in[0].isFloat() {
		res.f = make([]float64, count)
	} else {
		res.i = make([]int64, count)
	}
	for flat := range count {
		j := broadcastIndex(out, in[0].shape, flat)
		if in[0].isFloat() {
			res.f[flat] = in[0].f[j]
		} else {
			res.i[flat] = in[0].i[j]
		}
	}
	return []*hostTensor{res}, nil
}
