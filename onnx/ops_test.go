package onnx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

const F = onnxpb.TensorProto_FLOAT

// checkOp runs m on every device with the float inputs and compares output
// "y" with want (float64 reference) within 1e-5·max|want| + 1e-5.
func checkOp(t *testing.T, m *Model, inputs map[string][]float64, shapes map[string][]int, want []float64, wantShape []int) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		in := map[string]*tensor.Tensor{}
		for name, v := range inputs {
			f := make([]float32, len(v))
			for k, x := range v {
				f[k] = float32(x)
			}
			in[name] = tensor.FromFloat32(dev, f, shapes[name]...)
			defer in[name].Release()
		}
		out, err := m.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		y := out["y"]
		defer y.Release()
		if got := y.Shape(); !equalInts(got, wantShape) {
			t.Fatalf("shape %v, want %v", got, wantShape)
		}
		got := testdevice.Float64s(t, y)
		maxRef := 0.0
		for _, v := range want {
			maxRef = max(maxRef, math.Abs(v))
		}
		for k := range want {
			if d := math.Abs(got[k] - want[k]); !(d <= 1e-5*maxRef+1e-5) {
				t.Fatalf("element %d: got %v, want %v", k, got[k], want[k])
			}
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// (x + y) · x / (y² + 1) with x [3, 1, 5] and y [4, 1]: NumPy broadcasting
// to [3, 4, 5].
func TestBroadcastArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y := randn(r, 15), randn(r, 4)
	g := graphSpec{
		inits: []*onnxpb.TensorProto{floatInit("one", nil, []float64{1})},
		nodes: []*onnxpb.NodeProto{
			nodeOf("Add", []string{"x", "b"}, []string{"s"}),
			nodeOf("Mul", []string{"s", "x"}, []string{"p"}),
			nodeOf("Mul", []string{"b", "b"}, []string{"b2"}),
			nodeOf("Add", []string{"b2", "one"}, []string{"d"}),
			nodeOf("Div", []string{"p", "d"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 3, 1, 5), tensorInput("b", F, 4, 1)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 3, 4, 5)},
	}
	var want []float64
	for i := range 3 {
		for j := range 4 {
			for k := range 5 {
				xv, yv := x[i*5+k], y[j]
				want = append(want, (xv+yv)*xv/(yv*yv+1))
			}
		}
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x, "b": y}, map[string][]int{"x": {3, 1, 5}, "b": {4, 1}}, want, []int{3, 4, 5})
}

// Conv with groups 2, dilation (1, 2), stride (2, 1) and asymmetric pads,
// against a direct float64 convolution.
func TestConvGroupsDilationAsymmetricPads(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, cin, h, w, cout, groups, kh, kw = 2, 4, 7, 6, 6, 2, 3, 2
	stride, dil := [2]int{2, 1}, [2]int{1, 2}
	pads := [4]int{0, 1, 2, 1} // top, left, bottom, right
	x, wt, b := randn(r, n*cin*h*w), randn(r, cout*cin/groups*kh*kw), randn(r, cout)
	g := graphSpec{
		inits: []*onnxpb.TensorProto{floatInit("w", []int{cout, cin / groups, kh, kw}, wt), floatInit("bias", []int{cout}, b)},
		nodes: []*onnxpb.NodeProto{nodeOf("Conv", []string{"x", "w", "bias"}, []string{"y"},
			attrI("group", groups), attrInts("dilations", 1, 2), attrInts("strides", 2, 1), attrInts("pads", 0, 1, 2, 1))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, cin, h, w)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, cout, -1, -1)},
	}
	oh := (h+pads[0]+pads[2]-dil[0]*(kh-1)-1)/stride[0] + 1
	ow := (w+pads[1]+pads[3]-dil[1]*(kw-1)-1)/stride[1] + 1
	cpg, opg := cin/groups, cout/groups
	var want []float64
	for i := range n {
		for o := range cout {
			for y := range oh {
				for z := range ow {
					s := b[o]
					for c := range cpg {
						ci := o/opg*cpg + c
						for p := range kh {
							for q := range kw {
								iy, ix := y*stride[0]-pads[0]+p*dil[0], z*stride[1]-pads[1]+q*dil[1]
								if iy >= 0 && iy < h && ix >= 0 && ix < w {
									s += x[((i*cin+ci)*h+iy)*w+ix] * wt[((o*cpg+c)*kh+p)*kw+q]
								}
							}
						}
					}
					want = append(want, s)
				}
			}
		}
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, cin, h, w}}, want, []int{n, cout, oh, ow})
}

// Gemm with both transposes, alpha, beta and a broadcast C.
func TestGemmTransposes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const m, k, n = 3, 5, 4
	a, bm, c := randn(r, k*m), randn(r, n*k), randn(r, n) // a is [k, m], b is [n, k]
	g := graphSpec{
		inits: []*onnxpb.TensorProto{floatInit("b", []int{n, k}, bm), floatInit("c", []int{n}, c)},
		nodes: []*onnxpb.NodeProto{nodeOf("Gemm", []string{"a", "b", "c"}, []string{"y"},
			attrI("transA", 1), attrI("transB", 1), attrF("alpha", 0.5), attrF("beta", 2))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("a", F, k, m)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, m, n)},
	}
	var want []float64
	for i := range m {
		for j := range n {
			s := 0.0
			for p := range k {
				s += a[p*m+i] * bm[j*k+p]
			}
			want = append(want, 0.5*s+2*c[j])
		}
	}
	checkOp(t, g.load(t), map[string][]float64{"a": a}, map[string][]int{"a": {k, m}}, want, []int{m, n})
}

// The shape arithmetic of PyTorch's exporter with a dynamic batch:
// Shape → Gather → Unsqueeze → Concat → Reshape, then Slice with negative
// axes and bounds and a step, and Softmax over a negative axis.
func TestShapeArithmeticDynamicBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	g := graphSpec{
		inits: []*onnxpb.TensorProto{
			intInit("zero", nil, 0), intInit("rest", []int{1}, 30), intInit("ax0", []int{1}, 0),
			intInit("starts", []int{1}, 1), intInit("ends", []int{1}, -1), intInit("axes", []int{1}, -1), intInit("steps", []int{1}, 3),
		},
		nodes: []*onnxpb.NodeProto{
			nodeOf("Shape", []string{"x"}, []string{"s"}),
			nodeOf("Gather", []string{"s", "zero"}, []string{"batch"}, attrI("axis", 0)),
			nodeOf("Unsqueeze", []string{"batch", "ax0"}, []string{"b1"}),
			nodeOf("Concat", []string{"b1", "rest"}, []string{"shape"}, attrI("axis", 0)),
			nodeOf("Reshape", []string{"x", "shape"}, []string{"flat"}),
			nodeOf("Slice", []string{"flat", "starts", "ends", "axes", "steps"}, []string{"sl"}),
			nodeOf("Softmax", []string{"sl"}, []string{"y"}, attrI("axis", -1)),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, 6, 5)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, 10)},
	}
	m := g.load(t)
	for _, batch := range []int{1, 3} {
		x := randn(r, batch*30)
		var want []float64
		for i := range batch {
			row := []float64{}
			sum := 0.0
			for j := 1; j < 29; j += 3 {
				row = append(row, math.Exp(x[i*30+j]))
				sum += math.Exp(x[i*30+j])
			}
			for _, v := range row {
				want = append(want, v/sum)
			}
		}
		checkOp(t, m, map[string][]float64{"x": x}, map[string][]int{"x": {batch, 6, 5}}, want, []int{batch, 10})
	}
}

// Gather with negative constant indices from a device tensor (an
// embedding lookup), into a [2, 2, 3] result.
func TestGatherNegativeIndices(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	x := randn(r, 15)
	idx := []int64{-1, 0, 2, -2}
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{intInit("idx", []int{2, 2}, idx...)},
		nodes:   []*onnxpb.NodeProto{nodeOf("Gather", []string{"x", "idx"}, []string{"y"})},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 5, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 2, 2, 3)},
	}
	var want []float64
	for _, i := range idx {
		row := (int(i) + 5) % 5
		want = append(want, x[row*3:row*3+3]...)
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {5, 3}}, want, []int{2, 2, 3})
}

// ReduceMean over a negative axis without keepdims, then Transpose and
// Unsqueeze at a negative axis: [2, 3, 4] → [2, 3] → [3, 2] → [3, 2, 1].
func TestReduceTransposeUnsqueeze(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	x := randn(r, 24)
	g := graphSpec{
		inits: []*onnxpb.TensorProto{intInit("ax", []int{1}, -1)},
		nodes: []*onnxpb.NodeProto{
			nodeOf("ReduceMean", []string{"x"}, []string{"m"}, attrInts("axes", -1), attrI("keepdims", 0)),
			nodeOf("Transpose", []string{"m"}, []string{"tr"}, attrInts("perm", 1, 0)),
			nodeOf("Unsqueeze", []string{"tr", "ax"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 2, 3, 4)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 3, 2, 1)},
	}
	var want []float64
	for j := range 3 {
		for i := range 2 {
			s := 0.0
			for k := range 4 {
				s += x[(i*3+j)*4+k]
			}
			want = append(want, s/4)
		}
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {2, 3, 4}}, want, []int{3, 2, 1})
}

// Constant subgraphs fold at load time: only the device node stays.
func TestConstantFolding(t *testing.T) {
	g := graphSpec{
		inits: []*onnxpb.TensorProto{intInit("shape", []int{2}, 2, 3), intInit("one", nil, 1)},
		nodes: []*onnxpb.NodeProto{
			nodeOf("ConstantOfShape", []string{"shape"}, []string{"z"}),
			nodeOf("Shape", []string{"z"}, []string{"zs"}),
			nodeOf("Gather", []string{"zs", "one"}, []string{"three"}),
			nodeOf("Cast", []string{"three"}, []string{"threef"}, attrI("to", int64(F))),
			nodeOf("Mul", []string{"x", "threef"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 4)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4)},
	}
	m := g.load(t)
	if m.PlanLen() != 1 {
		t.Fatalf("%d nodes left after folding, want 1 (the Mul)", m.PlanLen())
	}
	x := []float64{1, -2, 0.5, 4}
	checkOp(t, m, map[string][]float64{"x": x}, map[string][]int{"x": {4}}, []float64{3, -6, 1.5, 12}, []int{4})
}
