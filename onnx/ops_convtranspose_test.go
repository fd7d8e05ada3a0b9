package onnx

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// refConvTransposeONNX is ONNX ConvTranspose over two spatial axes by its
// definition, in float64: each input pixel (iy, ix) adds x·w at output
// (iy·stride − padBegin + k·dilation), over an output of stride·(in−1) +
// outPad + (kernel−1)·dilation + 1 − padBegin − padEnd; every output
// element starts at the bias. Negative pads extend the output.
func refConvTransposeONNX(x, w, b []float64, n, cin, cout, groups int, in, kernel, stride, dil, padBegin, padEnd, outPad [2]int) ([]float64, []int) {
	var out [2]int
	for a := range 2 {
		out[a] = stride[a]*(in[a]-1) + outPad[a] + (kernel[a]-1)*dil[a] + 1 - padBegin[a] - padEnd[a]
	}
	cinG, coutG := cin/groups, cout/groups
	y := make([]float64, n*cout*out[0]*out[1])
	for i := range n {
		for o := range cout {
			for p := range out[0] * out[1] {
				if b != nil {
					y[(i*cout+o)*out[0]*out[1]+p] = b[o]
				}
			}
		}
		for c := range cin {
			grp := c / cinG
			for iy := range in[0] {
				for ix := range in[1] {
					v := x[((i*cin+c)*in[0]+iy)*in[1]+ix]
					for oc := range coutG {
						o := grp*coutG + oc
						for ky := range kernel[0] {
							oy := iy*stride[0] - padBegin[0] + ky*dil[0]
							if oy < 0 || oy >= out[0] {
								continue
							}
							for kx := range kernel[1] {
								ox := ix*stride[1] - padBegin[1] + kx*dil[1]
								if ox < 0 || ox >= out[1] {
									continue
								}
								y[((i*cout+o)*out[0]+oy)*out[1]+ox] += v * w[((c*coutG+oc)*kernel[0]+ky)*kernel[1]+kx]
							}
						}
					}
				}
			}
		}
	}
	return y, []int{n, cout, out[0], out[1]}
}

func ints64(v ...int) []int64 {
	out := make([]int64, len(v))
	for k, x := range v {
		out[k] = int64(x)
	}
	return out
}

// ConvTranspose over two spatial axes with each attribute PyTorch's
// exporter never writes (asymmetric pads, output_shape, auto_pad, an
// output padding as large as the stride), groups, strides and dilations,
// against the float64 definition on every device. The cases with pads the
// same at both ends and a small output padding run tensor.ConvTranspose2d
// directly; the others crop or extend its unpadded result.
func TestConvTransposeAttributes(t *testing.T) {
	const n, cin, cout, groups = 2, 4, 6, 2
	in, kernel := [2]int{5, 6}, [2]int{3, 2}
	for _, tc := range []struct {
		name                string
		attrs               []*onnxpb.AttributeProto
		stride, dil, outPad [2]int
		padBegin, padEnd    [2]int // what the attributes mean, for the reference
		noBias              bool
	}{
		{name: "symmetric pads, output padding", stride: [2]int{2, 3}, dil: [2]int{1, 2}, outPad: [2]int{1, 2},
			padBegin: [2]int{1, 0}, padEnd: [2]int{1, 0},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 2, 3), attrInts("dilations", 1, 2), attrInts("output_padding", 1, 2), attrInts("pads", 1, 0, 1, 0)}},
		{name: "asymmetric pads", stride: [2]int{2, 1}, dil: [2]int{1, 1},
			padBegin: [2]int{0, 1}, padEnd: [2]int{2, 0},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 2, 1), attrInts("pads", 0, 1, 2, 0)}},
		{name: "output padding as large as stride and dilation", stride: [2]int{1, 2}, dil: [2]int{1, 1}, outPad: [2]int{1, 2},
			padBegin: [2]int{1, 1}, padEnd: [2]int{1, 1}, noBias: true,
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 1, 2), attrInts("output_padding", 1, 2), attrInts("pads", 1, 1, 1, 1)}},
		// full output (11, 12); output_shape (10, 9): total pads (1, 3),
		// the odd one at the start.
		{name: "output_shape", stride: [2]int{2, 2}, dil: [2]int{1, 1},
			padBegin: [2]int{1, 2}, padEnd: [2]int{0, 1},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 2, 2), attrInts("output_shape", 10, 9), attrInts("pads", 3, 3, 3, 3)}},
		// output_shape (12, 14), larger than the full (11, 12): total
		// pads (−1, −2) extend the output with the bias.
		{name: "output_shape beyond the full output", stride: [2]int{2, 2}, dil: [2]int{1, 1},
			padBegin: [2]int{0, -1}, padEnd: [2]int{-1, -1},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 2, 2), attrInts("output_shape", n, cout, 12, 14)}},
		// SAME: output in·stride = (10, 12) of the full (11, 12).
		{name: "SAME_UPPER", stride: [2]int{2, 2}, dil: [2]int{1, 1},
			padBegin: [2]int{0, 0}, padEnd: [2]int{1, 0},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 2, 2), attrS("auto_pad", "SAME_UPPER")}},
		{name: "SAME_LOWER", stride: [2]int{2, 2}, dil: [2]int{1, 1},
			padBegin: [2]int{1, 0}, padEnd: [2]int{0, 0},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 2, 2), attrS("auto_pad", "SAME_LOWER")}},
		{name: "VALID", stride: [2]int{1, 3}, dil: [2]int{2, 1},
			attrs: []*onnxpb.AttributeProto{attrInts("strides", 1, 3), attrInts("dilations", 2, 1), attrS("auto_pad", "VALID")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(len(tc.name))))
			x, wt, b := randn(r, n*cin*in[0]*in[1]), randn(r, cin*cout/groups*kernel[0]*kernel[1]), randn(r, cout)
			inputs, inits := []string{"x", "w", "bias"}, []*onnxpb.TensorProto{
				floatInit("w", []int{cin, cout / groups, kernel[0], kernel[1]}, wt),
				floatInit("bias", []int{cout}, b),
			}
			if tc.noBias {
				inputs, inits, b = inputs[:2], inits[:1], nil
			}
			attrs := append([]*onnxpb.AttributeProto{attrI("group", groups), attrInts("kernel_shape", ints64(kernel[:]...)...)}, tc.attrs...)
			g := graphSpec{
				inits:   inits,
				nodes:   []*onnxpb.NodeProto{nodeOf("ConvTranspose", inputs, []string{"y"}, attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, cin, in[0], in[1])},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, cout, -1, -1)},
			}
			want, shape := refConvTransposeONNX(x, wt, b, n, cin, cout, groups, in, kernel, tc.stride, tc.dil, tc.padBegin, tc.padEnd, tc.outPad)
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, cin, in[0], in[1]}}, want, shape)
		})
	}
}

// ConvTranspose over one spatial axis (lifted to a height of 1): the
// direct path (symmetric pads) and the cropping one (asymmetric pads,
// output padding) against the 2-D reference with height 1.
func TestConvTranspose1d(t *testing.T) {
	const n, cin, cout, width, kw = 3, 2, 3, 7, 3
	for _, tc := range []struct {
		pads          [2]int
		stride, outPd int
	}{
		{[2]int{1, 1}, 2, 1},
		{[2]int{2, 1}, 3, 1},
	} {
		t.Run(fmt.Sprintf("pads %v stride %d output padding %d", tc.pads, tc.stride, tc.outPd), func(t *testing.T) {
			r := rand.New(rand.NewPCG(12, uint64(tc.pads[0])))
			x, wt, b := randn(r, n*cin*width), randn(r, cin*cout*kw), randn(r, cout)
			g := graphSpec{
				inits: []*onnxpb.TensorProto{floatInit("w", []int{cin, cout, kw}, wt), floatInit("bias", []int{cout}, b)},
				nodes: []*onnxpb.NodeProto{nodeOf("ConvTranspose", []string{"x", "w", "bias"}, []string{"y"},
					attrInts("strides", int64(tc.stride)), attrInts("pads", int64(tc.pads[0]), int64(tc.pads[1])), attrInts("output_padding", int64(tc.outPd)))},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, cin, width)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, cout, -1)},
			}
			want, shape := refConvTransposeONNX(x, wt, b, n, cin, cout, 1, [2]int{1, width}, [2]int{1, kw}, [2]int{1, tc.stride}, [2]int{1, 1},
				[2]int{0, tc.pads[0]}, [2]int{0, tc.pads[1]}, [2]int{0, tc.outPd})
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, cin, width}}, want, []int{shape[0], shape[1], shape[3]})
		})
	}
}

// A ConvTranspose over three spatial axes (the tensor package has no 3-D
// transposed convolution) is refused at load, naming the node and its
// kernel_shape.
func TestConvTranspose3dRefusedAtLoad(t *testing.T) {
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{floatInit("w", []int{2, 3, 2, 2, 2}, make([]float64, 48))},
		nodes:   []*onnxpb.NodeProto{nodeOf("ConvTranspose", []string{"x", "w"}, []string{"y"}, attrInts("kernel_shape", 2, 2, 2))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 1, 2, 3, 3, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 1, 3, 4, 4, 4)},
	}
	if ue := loadFails(t, g, 0, "ConvTranspose_y", "kernel_shape [2 2 2]"); len(ue.Problems) != 1 {
		t.Fatalf("problems %q, want the one node", ue.Problems)
	}
}

// Bad ConvTranspose arguments are errors naming the node and the values:
// a weight whose channels do not match, and pads that leave no output.
func TestConvTransposeBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		wShape     []int
		attrs      []*onnxpb.AttributeProto
	}{
		{"channels", "ConvTranspose2d", []int{3, 2, 2, 2}, nil},
		{"empty output", "empty output", []int{2, 2, 2, 2}, []*onnxpb.AttributeProto{attrInts("pads", 2, 2, 2, 2)}},
		{"output_shape length", "output_shape", []int{2, 2, 2, 2}, []*onnxpb.AttributeProto{attrInts("output_shape", 4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graphSpec{
				inits:   []*onnxpb.TensorProto{floatInit("w", tc.wShape, make([]float64, count(tc.wShape)))},
				nodes:   []*onnxpb.NodeProto{nodeOf("ConvTranspose", []string{"x", "w"}, []string{"y"}, tc.attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 1, 2, 3, 3)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 1, 2, -1, -1)},
			}
			runFails(t, g.load(t), []int{1, 2, 3, 3}, "ConvTranspose_y", tc.want)
		})
	}
}
