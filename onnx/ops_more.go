package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// Operators that PyTorch's exporter emits for activations, detection
// heads and U-Nets: the pointwise activations, ArgMax, Tile, Split and
// Resize, mapped onto tensor ops.

// devActivation runs a pointwise activation whose parameters are float
// attributes with ONNX's defaults.
func devActivation(f func(n *node, x *tensor.Tensor) *tensor.Tensor) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		x, err := r.tensor(in[0])
		if err != nil {
			return nil, err
		}
		return one(f(n, x)), nil
	}
}

func leakyRelu(n *node, x *tensor.Tensor) *tensor.Tensor {
	return x.LeakyReLU(n.attrFloat("alpha", 0.01))
}

func elu(n *node, x *tensor.Tensor) *tensor.Tensor { return x.ELU(n.attrFloat("alpha", 1)) }

// hardSigmoid is max(0, min(1, alpha·x + beta)).
func hardSigmoid(alpha, beta float64, x *tensor.Tensor) *tensor.Tensor {
	ax := x.MulScalar(alpha)
	defer ax.Release()
	s := ax.AddScalar(beta)
	defer s.Release()
	return s.Clamp(0, 1)
}

func hardSigmoidOp(n *node, x *tensor.Tensor) *tensor.Tensor {
	return hardSigmoid(n.attrFloat("alpha", 0.2), n.attrFloat("beta", 0.5), x)
}

// hardSwish is x · HardSigmoid(x) with alpha 1/6 and beta 0.5.
func hardSwish(n *node, x *tensor.Tensor) *tensor.Tensor {
	h := hardSigmoid(1.0/6, 0.5, x)
	defer h.Release()
	return tensor.Mul(x, h)
}

// softplus is log(1 + exp(x)); torch's kernel returns x itself above the
// threshold 20, where the two differ by less than float32's resolution.
func softplus(n *node, x *tensor.Tensor) *tensor.Tensor { return x.Softplus(1, 20) }

// devVariadic folds Max, Min and Sum over any number of inputs (NumPy
// broadcasting between each pair).
func devVariadic(f func(a, b *tensor.Tensor) *tensor.Tensor) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		t, err := r.ts(in)
		if err != nil {
			return nil, err
		}
		if len(t) == 0 || t[0] == nil {
			return nil, errors.New("needs at least one input")
		}
		acc := t[0].Reshape(t[0].Shape()...)
		for _, x := range t[1:] {
			next := f(acc, x)
			acc.Release()
			acc = next
		}
		return one(acc), nil
	}
}

func checkArgMax(n *node) error {
	if n.attrInt("select_last_index", 0) != 0 {
		return errors.New("select_last_index=1 is not supported (ties go to the first index)")
	}
	return nil
}

// devArgMax gives Int32 indices (ONNX's int64, narrowed as elsewhere).
func devArgMax(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(n.attrInt("axis", 0), x.Rank())
	if err != nil {
		return nil, err
	}
	return one(x.ArgMax([]int{axis}, n.attrInt("keepdims", 1) != 0)), nil
}

// devTile repeats x along every axis: x viewed as [1, d0, 1, d1, …],
// expanded to [r0, d0, r1, d1, …] and reshaped to [r0·d0, r1·d1, …], so
// output position i along an axis reads x at i mod d.
func devTile(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	reps, err := hostArg(n, in, 1)
	if err != nil || reps == nil {
		return nil, errors.Join(err, errors.New("Tile needs repeats"))
	}
	repeats := reps.intsAsInt()
	shape := x.Shape()
	if len(repeats) != len(shape) {
		return nil, fmt.Errorf("Tile: %d repeats for an input of shape %v", len(repeats), shape)
	}
	var interleaved, expanded, out []int
	for k, d := range shape {
		if repeats[k] < 0 {
			return nil, fmt.Errorf("Tile: negative repeat %d", repeats[k])
		}
		interleaved = append(interleaved, 1, d)
		expanded = append(expanded, repeats[k], d)
		out = append(out, repeats[k]*d)
	}
	v := x.Reshape(interleaved...)
	defer v.Release()
	e := v.Expand(expanded...)
	defer e.Release()
	return one(e.Reshape(out...)), nil
}

// devSplit cuts x along axis into the sizes of input 1, or into as many
// near-equal parts as the node has outputs (the last one smaller, as
// ONNX specifies).
func devSplit(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(n.attrInt("axis", 0), x.Rank())
	if err != nil {
		return nil, err
	}
	dim := x.Shape()[axis]
	var sizes []int
	if h, err := hostArg(n, in, 1); err != nil {
		return nil, err
	} else if h != nil {
		sizes = h.intsAsInt()
	} else if s, ok := n.attrInts("split"); ok {
		sizes = s
	} else {
		parts := len(n.outputs)
		if k := n.attrInt("num_outputs", 0); k > 0 {
			parts = k
		}
		each := (dim + parts - 1) / parts
		for rest := dim; len(sizes) < parts; rest -= min(each, rest) {
			sizes = append(sizes, min(each, rest))
		}
	}
	if len(sizes) != len(n.outputs) {
		return nil, fmt.Errorf("Split into %d parts for %d outputs", len(sizes), len(n.outputs))
	}
	total := 0
	for _, s := range sizes {
		if s < 0 {
			return nil, fmt.Errorf("Split: negative size in %v", sizes)
		}
		total += s
	}
	if total != dim {
		return nil, fmt.Errorf("Split sizes %v do not add up to axis %d of shape %v", sizes, axis, x.Shape())
	}
	out := make([]value, len(sizes))
	at := 0
	for k, s := range sizes {
		out[k] = value{dev: x.Slice(axis, at, at+s, 1)}
		at += s
	}
	return out, nil
}

// Resize modes and coordinate transformations the importer runs: those
// torch 1.13 exports for nn.Upsample and F.interpolate (nearest with
// asymmetric/floor; linear with half_pixel or align_corners), and ONNX's
// other rounding modes and pytorch_half_pixel.
var (
	resizeModes       = []string{"nearest", "linear", "cubic"}
	resizeCoordinates = []string{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}
	resizeRoundings   = []string{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
)

func checkResize(n *node) error {
	for _, c := range []struct {
		attr, def string
		allowed   []string
	}{
		{"mode", "nearest", resizeModes},
		{"coordinate_transformation_mode", "half_pixel", resizeCoordinates},
		{"nearest_mode", "round_prefer_floor", resizeRoundings},
	} {
		if v := n.attrString(c.attr, c.def); !slices.Contains(c.allowed, v) {
			return fmt.Errorf("Resize %s %q is not supported (only %v)", c.attr, v, c.allowed)
		}
	}
	if n.attrInt("antialias", 0) != 0 {
		return errors.New("Resize antialias=1 is not supported")
	}
	if _, ok := n.attrInts("axes"); ok {
		return errors.New("Resize axes are not supported")
	}
	if n.attrString("mode", "nearest") == "cubic" {
		// Cubic runs on tensor.Interpolate's bicubic: PyTorch's kernel
		// (A = −0.75, border pixels repeated) and coordinates.
		coord := n.attrString("coordinate_transformation_mode", "half_pixel")
		switch {
		case !slices.Contains([]string{"half_pixel", "pytorch_half_pixel", "align_corners"}, coord):
			return fmt.Errorf("Resize mode \"cubic\" with coordinate_transformation_mode %q is not supported (only half_pixel, pytorch_half_pixel, align_corners)", coord)
		case n.attrFloat("cubic_coeff_a", -0.75) != -0.75:
			return fmt.Errorf("Resize mode \"cubic\" with cubic_coeff_a %v is not supported (only -0.75, PyTorch's)", n.attrFloat("cubic_coeff_a", -0.75))
		case n.attrInt("exclude_outside", 0) != 0:
			return errors.New("Resize mode \"cubic\" with exclude_outside=1 is not supported")
		}
	}
	return nil
}

// resizeCubic runs a cubic Resize of an [N, C, H, W] input as
// tensor.Interpolate's bicubic: from the sizes when they were given (the
// source coordinate then uses in/out), else from the scales (1/scale),
// which is ONNX's half_pixel and align_corners arithmetic.
func resizeCubic(n *node, x *tensor.Tensor, sizes []int, scales []float64, fromSizes bool) (*tensor.Tensor, error) {
	shape := x.Shape()
	if len(shape) != 4 || sizes[0] != shape[0] || sizes[1] != shape[1] {
		return nil, fmt.Errorf("Resize mode \"cubic\" resizes the last two axes of a 4-D input, got shape %v to %v", shape, sizes)
	}
	coord := n.attrString("coordinate_transformation_mode", "half_pixel")
	if coord == "pytorch_half_pixel" && (sizes[2] == 1 || sizes[3] == 1) {
		return nil, fmt.Errorf("Resize mode \"cubic\" with pytorch_half_pixel to an output of size 1 (%v) is not supported", sizes)
	}
	o := tensor.InterpolateOptions{Mode: tensor.InterpolateBicubic, AlignCorners: coord == "align_corners"}
	if fromSizes {
		o.Size = sizes[2:]
	} else {
		o.ScaleFactor = scales[2:]
	}
	var y *tensor.Tensor
	err := tensor.Catch(func() { y = tensor.Interpolate(x, o) })
	return y, err
}

// resizeSource maps output position o of an axis resized from in to out
// (scale out/in, or as given) to a fractional input coordinate.
func resizeSource(mode string, o, in, out int, scale float64) float64 {
	switch mode {
	case "asymmetric":
		return float64(o) / scale
	case "align_corners":
		if out == 1 {
			return 0
		}
		return float64(o) * float64(in-1) / float64(out-1)
	case "pytorch_half_pixel":
		if out == 1 {
			return 0
		}
	}
	return (float64(o)+0.5)/scale - 0.5
}

func resizeRound(mode string, x float64) float64 {
	switch mode {
	case "floor":
		return math.Floor(x)
	case "ceil":
		return math.Ceil(x)
	case "round_prefer_ceil":
		return math.Floor(x + 0.5)
	}
	return math.Ceil(x - 0.5) // round_prefer_floor
}

// resizePlan says, per axis, the output size and scale of a Resize from
// the scales (input 2) or sizes (input 3).
func resizePlan(n *node, in []value, shape []int) (sizes []int, scales []float64, err error) {
	hs, err := hostArgs(n, in, 1)
	if err != nil {
		return nil, nil, err
	}
	rank := len(shape)
	switch {
	case len(hs) > 3 && hs[3] != nil && hs[3].len() > 0:
		sizes = hs[3].intsAsInt()
		if len(sizes) != rank {
			return nil, nil, fmt.Errorf("Resize: %d sizes for an input of shape %v", len(sizes), shape)
		}
		for k, s := range sizes {
			if s < 1 {
				return nil, nil, fmt.Errorf("Resize: size %v", sizes)
			}
			scales = append(scales, float64(s)/float64(shape[k]))
		}
	case len(hs) > 2 && hs[2] != nil && hs[2].len() > 0:
		if hs[2].len() != rank {
			return nil, nil, fmt.Errorf("Resize: %d scales for an input of shape %v", hs[2].len(), shape)
		}
		for k := range rank {
			s := hs[2].float(k)
			if !(s > 0) {
				return nil, nil, fmt.Errorf("Resize: scale %v", s)
			}
			scales = append(scales, s)
			sizes = append(sizes, max(int(math.Floor(float64(shape[k])*s)), 1))
		}
	default:
		return nil, nil, errors.New("Resize needs scales or sizes")
	}
	return sizes, scales, nil
}

// devResize resizes one axis at a time (nearest and linear interpolation
// are separable), each axis one tensor.ResampleAlong: the taps follow
// ONNX's coordinate transformation and rounding exactly, computed on the
// host in float64, so every mode the opsets 13–17 define for nearest and
// linear (not only PyTorch's) runs as one Resample kernel per axis.
func devResize(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	sizes, scales, err := resizePlan(n, in, shape)
	if err != nil {
		return nil, err
	}
	mode := n.attrString("mode", "nearest")
	if mode == "cubic" {
		hs, err := hostArgs(n, in, 1)
		if err != nil {
			return nil, err
		}
		fromSizes := len(hs) > 3 && hs[3] != nil && hs[3].len() > 0
		y, err := resizeCubic(n, x, sizes, scales, fromSizes)
		if err != nil {
			return nil, err
		}
		return one(y), nil
	}
	coord := n.attrString("coordinate_transformation_mode", "half_pixel")
	rounding := n.attrString("nearest_mode", "round_prefer_floor")
	y := x.Reshape(shape...)
	for axis, out := range sizes {
		size := shape[axis]
		if out == size && scales[axis] == 1 {
			continue
		}
		taps := resizeTaps(mode, coord, rounding, size, out, scales[axis])
		var next *tensor.Tensor
		err := tensor.Catch(func() { next = tensor.ResampleAlong(y, axis, taps) })
		y.Release()
		if err != nil {
			return nil, err
		}
		y = next
	}
	return one(y), nil
}

// resizeTaps is the sparse matrix of one axis resized from size to out:
// nearest reads the rounded source position, clamped to the axis; linear
// blends the two neighbours of the source coordinate clamped to
// [0, size−1] (ONNX's edge rule), one tap where it falls on a pixel so
// that copied values stay exact.
func resizeTaps(mode, coord, rounding string, size, out int, scale float64) hal.ResampleTaps {
	taps := hal.ResampleTaps{Offsets: make([]int32, 1, out+1)}
	add := func(i int, w float64) {
		taps.Index = append(taps.Index, int32(i))
		taps.Weight = append(taps.Weight, w)
	}
	for o := range out {
		s := resizeSource(coord, o, size, out, scale)
		if mode == "nearest" {
			add(min(max(int(resizeRound(rounding, s)), 0), size-1), 1)
		} else {
			s = min(max(s, 0), float64(size-1))
			i := int(math.Floor(s))
			if w := s - float64(i); w == 0 || i+1 >= size {
				add(i, 1)
			} else {
				add(i, 1-w)
				add(i+1, w)
			}
		}
		taps.Offsets = append(taps.Offsets, int32(len(taps.Index)))
	}
	return taps
}
