package onnx

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

// refConv3dONNX is ONNX Conv over three spatial axes by its definition,
// in float64: pads are (begin d, h, w, end d, h, w).
func refConv3dONNX(x, w, b []float64, in, kernel, stride, dil [3]int, pads [6]int, n, cin, cout, groups int) ([]float64, []int) {
	var out [3]int
	for a := range 3 {
		out[a] = (in[a]+pads[a]+pads[a+3]-dil[a]*(kernel[a]-1)-1)/stride[a] + 1
	}
	cpg, opg := cin/groups, cout/groups
	var want []float64
	for i := range n {
		for o := range cout {
			for z := range out[0] {
				for y := range out[1] {
					for xo := range out[2] {
						s := 0.0
						if b != nil {
							s = b[o]
						}
						for c := range cpg {
							ci := o/opg*cpg + c
							for p := range kernel[0] {
								iz := z*stride[0] - pads[0] + p*dil[0]
								if iz < 0 || iz >= in[0] {
									continue
								}
								for q := range kernel[1] {
									iy := y*stride[1] - pads[1] + q*dil[1]
									if iy < 0 || iy >= in[1] {
										continue
									}
									for r := range kernel[2] {
										ix := xo*stride[2] - pads[2] + r*dil[2]
										if ix < 0 || ix >= in[2] {
											continue
										}
										s += x[(((i*cin+ci)*in[0]+iz)*in[1]+iy)*in[2]+ix] *
											w[(((o*cpg+c)*kernel[0]+p)*kernel[1]+q)*kernel[2]+r]
									}
								}
							}
						}
						want = append(want, s)
					}
				}
			}
		}
	}
	return want, []int{n, cout, out[0], out[1], out[2]}
}

// Conv with three spatial axes: explicit asymmetric pads, auto_pad
// SAME_UPPER, SAME_LOWER and VALID, with groups, strides and dilations,
// against the float64 definition on every device.
func TestConv3dPads(t *testing.T) {
	const n, cin, cout, groups = 2, 4, 6, 2
	in, kernel := [3]int{5, 6, 7}, [3]int{3, 2, 3}
	stride, dil := [3]int{2, 1, 2}, [3]int{1, 2, 1}
	for _, tc := range []struct {
		autoPad string
		pads    [6]int // what the mode means, for the reference
	}{
		{"NOTSET", [6]int{0, 1, 2, 1, 0, 1}},
		{"NOTSET", [6]int{1, 1, 1, 1, 1, 1}},
		// SAME: output ⌈in/stride⌉ = (3, 6, 4); total pads (max(0,
		// (out−1)·stride + span − in)) = (2, 2, 2), split evenly.
		{"SAME_UPPER", [6]int{1, 1, 1, 1, 1, 1}},
		{"VALID", [6]int{}},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.autoPad, tc.pads), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(tc.pads[0]+2*tc.pads[1]+len(tc.autoPad))))
			x, wt, b := randn(r, n*cin*in[0]*in[1]*in[2]), randn(r, cout*cin/groups*kernel[0]*kernel[1]*kernel[2]), randn(r, cout)
			attrs := []*onnxpb.AttributeProto{attrI("group", groups), attrInts("dilations", 1, 2, 1), attrInts("strides", 2, 1, 2)}
			if tc.autoPad == "NOTSET" {
				p := tc.pads
				attrs = append(attrs, attrInts("pads", int64(p[0]), int64(p[1]), int64(p[2]), int64(p[3]), int64(p[4]), int64(p[5])))
			} else {
				attrs = append(attrs, attrS("auto_pad", tc.autoPad))
			}
			g := graphSpec{
				inits: []*onnxpb.TensorProto{
					floatInit("w", []int{cout, cin / groups, kernel[0], kernel[1], kernel[2]}, wt),
					floatInit("bias", []int{cout}, b),
				},
				nodes:   []*onnxpb.NodeProto{nodeOf("Conv", []string{"x", "w", "bias"}, []string{"y"}, attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, cin, in[0], in[1], in[2])},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, cout, -1, -1, -1)},
			}
			want, shape := refConv3dONNX(x, wt, b, in, kernel, stride, dil, tc.pads, n, cin, cout, groups)
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, cin, in[0], in[1], in[2]}}, want, shape)
		})
	}
	// SAME_LOWER puts the odd pad first: a 2-wide kernel at stride 1
	// pads one before and none after.
	t.Run("SAME_LOWER", func(t *testing.T) {
		r := rand.New(rand.NewPCG(8, 9))
		in, kernel := [3]int{4, 3, 5}, [3]int{2, 2, 3}
		x, wt := randn(r, 1*2*in[0]*in[1]*in[2]), randn(r, 3*2*kernel[0]*kernel[1]*kernel[2])
		g := graphSpec{
			inits:   []*onnxpb.TensorProto{floatInit("w", []int{3, 2, kernel[0], kernel[1], kernel[2]}, wt)},
			nodes:   []*onnxpb.NodeProto{nodeOf("Conv", []string{"x", "w"}, []string{"y"}, attrS("auto_pad", "SAME_LOWER"))},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 1, 2, in[0], in[1], in[2])},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 1, 3, -1, -1, -1)},
		}
		want, shape := refConv3dONNX(x, wt, nil, in, kernel, [3]int{1, 1, 1}, [3]int{1, 1, 1}, [6]int{1, 1, 1, 0, 0, 1}, 1, 2, 3, 1)
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {1, 2, in[0], in[1], in[2]}}, want, shape)
	})
}

// A 3-D Conv whose channels do not match its weight fails with an error
// naming the node's op and the shapes.
func TestConv3dBadChannels(t *testing.T) {
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{floatInit("w", []int{2, 3, 1, 1, 1}, make([]float64, 6))},
		nodes:   []*onnxpb.NodeProto{nodeOf("Conv", []string{"x", "w"}, []string{"y"})},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 1, 2, 3, 3, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 1, 2, 3, 3, 3)},
	}
	runFails(t, g.load(t), []int{1, 2, 3, 3, 3}, "Conv3d", "[1 2 3 3 3]")
}

// runFails runs m on zeros of shape x on the CPU and checks that the error
// says each of want.
func runFails(t *testing.T, m *Model, x []int, want ...string) {
	t.Helper()
	in := tensor.Zeros(testdevice.CPU(t), x...)
	defer in.Release()
	_, err := m.Run(map[string]*tensor.Tensor{"x": in})
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("error %v, want one saying %q", err, w)
		}
	}
}

// loadFails loads g and checks that it fails with an UnsupportedError
// listing nodes unsupported nodes and saying each of want.
func loadFails(t *testing.T, g graphSpec, nodes int, want ...string) *UnsupportedError {
	t.Helper()
	_, err := Load(g.bytes(t), Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Nodes) != nodes {
		t.Fatalf("got %v, want an UnsupportedError naming %d unsupported node(s)", err, nodes)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %v, want one saying %q", err, w)
		}
	}
	return ue
}

// An operator the importer lacks (MaxUnpool) fails at load with an
// UnsupportedError naming the node and the op.
func TestMaxUnpoolUnsupportedAtLoad(t *testing.T) {
	g := graphSpec{
		nodes:   []*onnxpb.NodeProto{nodeOf("MaxUnpool", []string{"x", "i"}, []string{"y"}, attrInts("kernel_shape", 2, 2, 2))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 1, 2, 3, 3, 3), tensorInput("i", onnxpb.TensorProto_INT64, 1, 2, 3, 3, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 1, 2, 6, 6, 6)},
	}
	loadFails(t, g, 1, `"MaxUnpool_y" (MaxUnpool)`)
}
