package onnx

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// checkConvTranspose refuses at load what tensor.ConvTranspose2d cannot
// run: a kernel of three spatial axes (there is no 3-D transposed
// convolution). PyTorch's exporter always writes kernel_shape; a node
// without it is checked against its weight at run time.
func checkConvTranspose(n *node) error {
	if ks, ok := n.attrInts("kernel_shape"); ok && (len(ks) < 1 || len(ks) > 2) {
		return fmt.Errorf("kernel_shape %v: only 1-D and 2-D transposed convolutions are supported", ks)
	}
	return nil
}

// transposeGeometry is a transposed convolution's window over one or two
// spatial axes, as ONNX gives it: pads are (begins, ends) and may differ,
// and output padding may be any size.
type transposeGeometry struct {
	kernel, stride, dilation, outPad []int
	padBegin, padEnd                 []int
}

// convTransposeGeometry reads ConvTranspose's attributes for input spatial
// size in and weight kernel. output_shape (or auto_pad SAME_*, which asks
// for in·stride) sets the pads by the operator's formulas: total padding
// = stride·(in−1) + output_padding + (kernel−1)·dilation + 1 − output,
// split with the odd element at the end for SAME_UPPER and at the start
// otherwise.
func convTransposeGeometry(n *node, kernel, in []int) (transposeGeometry, error) {
	dims := len(in)
	g := transposeGeometry{kernel: kernel}
	if ks, ok := n.attrInts("kernel_shape"); ok && !slices.Equal(ks, kernel) {
		return g, fmt.Errorf("kernel_shape %v does not match the weight's kernel %v", ks, kernel)
	}
	ints := func(name string, def, lo int) ([]int, error) { return windowInts(n, name, dims, def, lo) }
	var err error
	if g.stride, err = ints("strides", 1, 1); err != nil {
		return g, err
	}
	if g.dilation, err = ints("dilations", 1, 1); err != nil {
		return g, err
	}
	if g.outPad, err = ints("output_padding", 0, 0); err != nil {
		return g, err
	}
	full := make([]int, dims) // the output with no padding at all
	for k := range dims {
		full[k] = g.stride[k]*(in[k]-1) + g.outPad[k] + (kernel[k]-1)*g.dilation[k] + 1
	}
	autoPad := n.attrString("auto_pad", "NOTSET")
	out, explicit := n.attrInts("output_shape")
	switch {
	case explicit:
		if len(out) > dims { // the whole output shape, batch and channels first
			out = out[len(out)-dims:]
		}
		if len(out) != dims {
			return g, fmt.Errorf("output_shape %v for %d spatial axes", out, dims)
		}
	case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
		out = make([]int, dims)
		for k := range dims {
			out[k] = in[k] * g.stride[k]
		}
	}
	g.padBegin, g.padEnd = make([]int, dims), make([]int, dims)
	switch {
	case out != nil:
		for k := range dims {
			if out[k] < 1 || out[k] > 1<<24 {
				return g, fmt.Errorf("output size %v", out)
			}
			total := full[k] - out[k]
			if autoPad == "SAME_UPPER" {
				g.padBegin[k], g.padEnd[k] = floorDiv(total, 2), total-floorDiv(total, 2)
			} else {
				g.padBegin[k], g.padEnd[k] = total-floorDiv(total, 2), floorDiv(total, 2)
			}
		}
	case autoPad == "VALID":
	case autoPad == "NOTSET":
		pads, err := windowPads(n, dims)
		if err != nil {
			return g, err
		}
		copy(g.padBegin, pads[:dims])
		copy(g.padEnd, pads[dims:])
	default:
		return g, fmt.Errorf("auto_pad %q", autoPad)
	}
	for k := range dims {
		if full[k]-g.padBegin[k]-g.padEnd[k] < 1 {
			return g, fmt.Errorf("input spatial %v, kernel %v, strides %v, dilations %v, output_padding %v and pads %v, %v give an empty output",
				in, kernel, g.stride, g.dilation, g.outPad, g.padBegin, g.padEnd)
		}
	}
	return g, nil
}

// floorDiv is ⌊a/b⌋ for b > 0, negative a included.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// direct says whether tensor.ConvTranspose2d takes the geometry as it is:
// pads the same at both ends, and output padding smaller than the stride
// or the dilation (PyTorch's rule).
func (g transposeGeometry) direct() bool {
	for k := range g.kernel {
		if g.padBegin[k] != g.padEnd[k] || g.outPad[k] >= g.stride[k] && g.outPad[k] >= g.dilation[k] {
			return false
		}
	}
	return true
}

// lift2 gives a 1-D geometry's pair (the width slot; height 1 and value
// fill) or a 2-D one's.
func lift2(v []int, fill int) [2]int {
	if len(v) == 1 {
		return [2]int{fill, v[0]}
	}
	return [2]int{v[0], v[1]}
}

// devConvTranspose is ONNX ConvTranspose over one or two spatial axes:
// tensor.ConvTranspose2d (1-D lifted to a height of 1). Pads that differ
// at the two ends, or an output padding PyTorch would refuse, run the
// unpadded transposed convolution and then crop (negative Pad) or extend
// it with zeros, adding the bias last so that the extension holds it as
// the operator's definition says.
func devConvTranspose(r *run, n *node, in []value) ([]value, error) {
	x, w, b, err := r.convOperands(in)
	if err != nil {
		return nil, err
	}
	if x.Rank() < 3 || x.Rank() > 4 || w.Rank() != x.Rank() {
		return nil, fmt.Errorf("ConvTranspose takes 1-D or 2-D inputs (got input %v, weight %v)", x.Shape(), w.Shape())
	}
	g, err := convTransposeGeometry(n, w.Shape()[2:], x.Shape()[2:])
	if err != nil {
		return nil, err
	}
	groups := n.attrInt("group", 1)
	xx, ww := lift(x), lift(w)
	defer xx.Release()
	defer ww.Release()
	o := tensor.ConvTransposeOptions{Stride: lift2(g.stride, 1), Dilation: lift2(g.dilation, 1), Groups: groups}
	if g.direct() {
		o.Padding, o.OutputPadding = lift2(g.padBegin, 0), lift2(g.outPad, 0)
		return one(lower(tensor.ConvTranspose2d(xx, ww, b, o), x.Rank())), nil
	}
	full := tensor.ConvTranspose2d(xx, ww, nil, o)
	defer full.Release()
	// Pad's pairs start from the last axis: width, then height.
	begin, end := lift2(g.padBegin, 0), lift2(g.padEnd, 0)
	outPad := lift2(g.outPad, 0)
	y := full.Pad([]int{-begin[1], outPad[1] - end[1], -begin[0], outPad[0] - end[0]}, tensor.PadConstant, 0)
	if b != nil {
		defer y.Release()
		bias := b.Reshape(b.Len(), 1, 1)
		defer bias.Release()
		y = tensor.Add(y, bias)
	}
	return one(lower(y, x.Rank())), nil
}
