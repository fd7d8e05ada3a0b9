package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// spatial holds a 1-D or 2-D window's geometry from ONNX attributes, with
// 1-D lifted to 2-D (height 1).
type spatial struct {
	kernel, stride, dilation [2]int
	// pads are [top, left, bottom, right] (ONNX's begins then ends).
	pads [4]int
}

// geometry reads kernel_shape (or kernel from the weight), strides,
// dilations, pads and auto_pad for input spatial size in.
func geometry(n *node, kernel []int, in []int) (spatial, error) {
	var g spatial
	dims := len(in)
	if dims != 1 && dims != 2 || len(kernel) != dims {
		return g, fmt.Errorf("only 1-D and 2-D windows are supported (input spatial %v, kernel %v)", in, kernel)
	}
	strides, dil, pads, err := windowAttrs(n, kernel, in)
	if err != nil {
		return g, err
	}
	off := 2 - dims // 1-D fills the width slot
	g.kernel, g.stride, g.dilation = [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}
	for k := range dims {
		g.kernel[k+off], g.stride[k+off], g.dilation[k+off] = kernel[k], strides[k], dil[k]
		g.pads[k+off], g.pads[k+off+2] = pads[k], pads[k+dims]
	}
	return g, nil
}

// windowAttrs reads strides, dilations and pads (begins, then ends; with
// auto_pad resolved) for a window kernel over input spatial size in, of
// any number of spatial axes.
func windowAttrs(n *node, kernel []int, in []int) (strides, dil, pads []int, err error) {
	dims := len(in)
	get := func(name string, def int) ([]int, error) { return windowInts(n, name, dims, def, 1) }
	if strides, err = get("strides", 1); err != nil {
		return nil, nil, nil, err
	}
	if dil, err = get("dilations", 1); err != nil {
		return nil, nil, nil, err
	}
	if pads, err = windowPads(n, dims); err != nil {
		return nil, nil, nil, err
	}
	switch ap := n.attrString("auto_pad", "NOTSET"); ap {
	case "NOTSET":
	case "VALID":
		pads = make([]int, 2*dims)
	case "SAME_UPPER", "SAME_LOWER":
		for k := range dims {
			out := (in[k] + strides[k] - 1) / strides[k]
			total := max((out-1)*strides[k]+(kernel[k]-1)*dil[k]+1-in[k], 0)
			small, big := total/2, total-total/2
			if ap == "SAME_UPPER" {
				pads[k], pads[k+dims] = small, big
			} else {
				pads[k], pads[k+dims] = big, small
			}
		}
	default:
		return nil, nil, nil, fmt.Errorf("auto_pad %q", ap)
	}
	return strides, dil, pads, nil
}

// windowInts reads a per-axis attribute (strides, dilations,
// output_padding) of dims values, each in [lo, 2²⁰], def when absent.
func windowInts(n *node, name string, dims, def, lo int) ([]int, error) {
	v, ok := n.attrInts(name)
	if !ok {
		v = make([]int, dims)
		for k := range v {
			v[k] = def
		}
	}
	if len(v) != dims {
		return nil, fmt.Errorf("%s %v for %d spatial axes", name, v, dims)
	}
	for _, x := range v {
		if x < lo || x > 1<<20 {
			return nil, fmt.Errorf("%s %v", name, v)
		}
	}
	return v, nil
}

// windowPads reads pads (begins, then ends; zeros when absent) for dims
// spatial axes, as a copy the caller may overwrite.
func windowPads(n *node, dims int) ([]int, error) {
	pads, ok := n.attrInts("pads")
	if !ok {
		pads = make([]int, 2*dims)
	}
	if len(pads) != 2*dims {
		return nil, fmt.Errorf("pads %v for %d spatial axes", pads, dims)
	}
	for _, p := range pads {
		if p < 0 || p > 1<<20 {
			return nil, fmt.Errorf("pads %v", pads)
		}
	}
	return pads, nil
}

func (g spatial) symmetric() bool { return g.pads[0] == g.pads[2] && g.pads[1] == g.pads[3] }

// lift reshapes a 3-D (N, C, L) tensor to 4-D (N, C, 1, L).
func lift(x *tensor.Tensor) *tensor.Tensor {
	if x.Rank() == 3 {
		return x.Unsqueeze(2)
	}
	return x.Reshape(x.Shape()...)
}

// lower undoes lift on the result.
func lower(y *tensor.Tensor, rank int) *tensor.Tensor {
	if rank == 3 {
		defer y.Release()
		return y.Squeeze(2)
	}
	return y
}

// padExplicit pads x's two spatial axes by g.pads with value and returns
// geometry without padding, for asymmetric pads the kernels cannot take.
func padExplicit(x *tensor.Tensor, g spatial, value float64) (*tensor.Tensor, spatial) {
	p := x.Pad([]int{g.pads[1], g.pads[3], g.pads[0], g.pads[2]}, tensor.PadConstant, value)
	g.pads = [4]int{}
	return p, g
}

// convOperands returns a convolution's input, weight and bias (nil when
// absent) on the run's device.
func (r *run) convOperands(in []value) (x, w, b *tensor.Tensor, err error) {
	t, err := r.ts(in)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(t) > 2 {
		b = t[2]
	}
	return t[0], t[1], b, nil
}

func devConv(r *run, n *node, in []value) ([]value, error) {
	x, w, b, err := r.convOperands(in)
	if err != nil {
		return nil, err
	}
	if x.Rank() < 3 || x.Rank() > 5 || w.Rank() != x.Rank() {
		return nil, fmt.Errorf("Conv takes 1-D, 2-D or 3-D inputs (got input %v, weight %v)", x.Shape(), w.Shape())
	}
	kernel, ok := n.attrInts("kernel_shape")
	if !ok {
		kernel = w.Shape()[2:]
	}
	if x.Rank() == 5 {
		return devConv3d(n, x, w, b, kernel)
	}
	g, err := geometry(n, kernel, x.Shape()[2:])
	if err != nil {
		return nil, err
	}
	xx, ww := lift(x), lift(w)
	defer xx.Release()
	defer ww.Release()
	if !g.symmetric() {
		p, ng := padExplicit(xx, g, 0)
		xx.Release()
		xx, g = p, ng
	}
	y := tensor.Conv2d(xx, ww, b, tensor.ConvOptions{
		Stride: g.stride, Dilation: g.dilation, Padding: [2]int{g.pads[0], g.pads[1]}, Groups: n.attrInt("group", 1),
	})
	return one(lower(y, x.Rank())), nil
}

// devConv3d is Conv over three spatial axes: tensor.Conv3d, after an
// explicit zero padding where the pads are not the same at both ends.
func devConv3d(n *node, x, w, b *tensor.Tensor, kernel []int) ([]value, error) {
	if !slices.Equal(kernel, w.Shape()[2:]) {
		return nil, fmt.Errorf("kernel_shape %v does not match weight %v", kernel, w.Shape())
	}
	strides, dil, pads, err := windowAttrs(n, kernel, x.Shape()[2:])
	if err != nil {
		return nil, err
	}
	o := tensor.Conv3dOptions{Groups: n.attrInt("group", 1)}
	copy(o.Stride[:], strides)
	copy(o.Dilation[:], dil)
	if slices.Equal(pads[:3], pads[3:]) {
		copy(o.Padding[:], pads[:3])
		return one(tensor.Conv3d(x, w, b, o)), nil
	}
	// tensor.Pad takes (before, after) pairs from the last axis.
	padded := x.Pad([]int{pads[2], pads[5], pads[1], pads[4], pads[0], pads[3]}, tensor.PadConstant, 0)
	defer padded.Release()
	return one(tensor.Conv3d(padded, w, b, o)), nil
}

func devPool(avg bool) devFunc {
	return func(r *run, n *node, in []value) ([]value, error) {
		x, err := r.tensor(in[0])
		if err != nil {
			return nil, err
		}
		kernel, _ := n.attrInts("kernel_shape")
		if x.Rank() != 3 && x.Rank() != 4 {
			return nil, fmt.Errorf("pooling takes 1-D or 2-D inputs (got %v)", x.Shape())
		}
		g, err := geometry(n, kernel, x.Shape()[2:])
		if err != nil {
			return nil, err
		}
		xx := lift(x)
		defer xx.Release()
		includePad := n.attrInt("count_include_pad", 0) != 0
		if !g.symmetric() {
			if avg && !includePad {
				return nil, fmt.Errorf("AveragePool with asymmetric pads %v and count_include_pad=0 is not supported", g.pads)
			}
			fill := math.Inf(-1)
			if avg {
				fill = 0
			}
			p, ng := padExplicit(xx, g, fill)
			xx.Release()
			xx, g = p, ng
		}
		o := tensor.PoolOptions{Kernel: g.kernel, Stride: g.stride, Dilation: g.dilation,
			Padding: [2]int{g.pads[0], g.pads[1]}, CeilMode: n.attrInt("ceil_mode", 0) != 0}
		if avg {
			return one(lower(tensor.AvgPool2d(xx, o, includePad), x.Rank())), nil
		}
		y, idx := tensor.MaxPool2d(xx, o)
		if idx != nil {
			idx.Release()
		}
		return one(lower(y, x.Rank())), nil
	}
}

func devGlobalAveragePool(r *run, n *node, in []value) ([]value, error) {
	x, err := r.tensor(in[0])
	if err != nil {
		return nil, err
	}
	if x.Rank() < 3 {
		return nil, fmt.Errorf("GlobalAveragePool takes (N, C, …), got %v", x.Shape())
	}
	var dims []int
	for k := 2; k < x.Rank(); k++ {
		dims = append(dims, k)
	}
	return one(x.Mean(dims, true)), nil
}
