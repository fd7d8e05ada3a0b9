package onnx

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

func attrS(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func floatsInit(name string, v ...float64) *onnxpb.TensorProto {
	return floatInit(name, []int{len(v)}, v)
}

func mapF(x []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(x))
	for k, v := range x {
		out[k] = f(v)
	}
	return out
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// The pointwise activations and functions, one node each, against their
// float64 formulas on [3, 7] random inputs.
func TestPointwiseOps(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	x := mapF(randn(r, 21), func(v float64) float64 { return 3 * v })
	hardSig := func(a, b float64) func(float64) float64 {
		return func(v float64) float64 { return math.Max(0, math.Min(1, a*v+b)) }
	}
	for _, c := range []struct {
		op    string
		attrs []*onnxpb.AttributeProto
		f     func(float64) float64
		pos   bool // the function wants positive inputs
	}{
		{"LeakyRelu", []*onnxpb.AttributeProto{attrF("alpha", 0.1)}, func(v float64) float64 { return map[bool]float64{true: v, false: 0.1 * v}[v >= 0] }, false},
		{"LeakyRelu", nil, func(v float64) float64 { return map[bool]float64{true: v, false: 0.01 * v}[v >= 0] }, false},
		{"Elu", []*onnxpb.AttributeProto{attrF("alpha", 0.7)}, func(v float64) float64 { return map[bool]float64{true: v, false: 0.7 * math.Expm1(v)}[v > 0] }, false},
		{"HardSigmoid", []*onnxpb.AttributeProto{attrF("alpha", 0.3), attrF("beta", 0.4)}, hardSig(float64(float32(0.3)), float64(float32(0.4))), false},
		{"HardSigmoid", nil, hardSig(float64(float32(0.2)), 0.5), false},
		{"HardSwish", nil, func(v float64) float64 { return v * hardSig(1.0/6, 0.5)(v) }, false},
		{"Softplus", nil, func(v float64) float64 { return math.Log1p(math.Exp(v)) }, false},
		{"Sigmoid", nil, sigmoid, false},
		{"Neg", nil, func(v float64) float64 { return -v }, false},
		{"Abs", nil, math.Abs, false},
		{"Exp", nil, math.Exp, false},
		{"Log", nil, math.Log, true},
	} {
		t.Run(c.op, func(t *testing.T) {
			in := x
			if c.pos {
				in = mapF(x, func(v float64) float64 { return math.Abs(v) + 0.1 })
			}
			g := graphSpec{
				nodes:   []*onnxpb.NodeProto{nodeOf(c.op, []string{"x"}, []string{"y"}, c.attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, 7)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, 7)},
			}
			checkOp(t, g.load(t), map[string][]float64{"x": in}, map[string][]int{"x": {3, 7}}, mapF(in, c.f), []int{3, 7})
		})
	}
}

// Max and Min of three broadcast inputs, and Sum.
func TestVariadicMinMaxSum(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	a, b, c := randn(r, 12), randn(r, 4), randn(r, 3)
	for _, op := range []struct {
		name string
		f    func(a, b, c float64) float64
	}{
		{"Max", func(a, b, c float64) float64 { return math.Max(a, math.Max(b, c)) }},
		{"Min", func(a, b, c float64) float64 { return math.Min(a, math.Min(b, c)) }},
		{"Sum", func(a, b, c float64) float64 { return a + b + c }},
	} {
		t.Run(op.name, func(t *testing.T) {
			g := graphSpec{
				nodes:   []*onnxpb.NodeProto{nodeOf(op.name, []string{"a", "b", "c"}, []string{"y"})},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("a", F, 3, 4), tensorInput("b", F, 4), tensorInput("c", F, 3, 1)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 3, 4)},
			}
			var want []float64
			for i := range 3 {
				for j := range 4 {
					want = append(want, op.f(a[i*4+j], b[j], c[i]))
				}
			}
			checkOp(t, g.load(t), map[string][]float64{"a": a, "b": b, "c": c},
				map[string][]int{"a": {3, 4}, "b": {4}, "c": {3, 1}}, want, []int{3, 4})
		})
	}
}

// ReduceSum (axes input), ReduceMax and ReduceMin (axes attribute) over
// axes 0 and 2 of [3, 4, 5], and ArgMax along axis 1 (Int32 indices).
func TestReductionsArgMax(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	const a, b, c = 3, 4, 5
	x := randn(r, a*b*c)
	reduce := func(f func(acc, v float64) float64, init float64) []float64 {
		out := make([]float64, b)
		for j := range b {
			acc := init
			for i := range a {
				for k := range c {
					acc = f(acc, x[(i*b+j)*c+k])
				}
			}
			out[j] = acc
		}
		return out
	}
	cases := []struct {
		name string
		node *onnxpb.NodeProto
		want []float64
	}{
		{"ReduceSum", nodeOf("ReduceSum", []string{"x", "axes"}, []string{"y"}, attrI("keepdims", 0)), reduce(func(acc, v float64) float64 { return acc + v }, 0)},
		{"ReduceMax", nodeOf("ReduceMax", []string{"x"}, []string{"y"}, attrI("keepdims", 0), attrInts("axes", 0, -1)), reduce(math.Max, math.Inf(-1))},
		{"ReduceMin", nodeOf("ReduceMin", []string{"x"}, []string{"y"}, attrI("keepdims", 0), attrInts("axes", 0, -1)), reduce(math.Min, math.Inf(1))},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			g := graphSpec{
				inits:   []*onnxpb.TensorProto{intInit("axes", []int{2}, 0, 2)},
				nodes:   []*onnxpb.NodeProto{cs.node},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, b, c)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, b)},
			}
			if cs.name != "ReduceSum" {
				g.opset = 13 // axes became an input of ReduceMax/Min in opset 18
			}
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {a, b, c}}, cs.want, []int{b})
		})
	}
	t.Run("ArgMax", func(t *testing.T) {
		g := graphSpec{
			nodes:   []*onnxpb.NodeProto{nodeOf("ArgMax", []string{"x"}, []string{"y"}, attrI("axis", 1))},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, b, c)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", onnxpb.TensorProto_INT64, a, 1, c)},
		}
		var want []float64
		for i := range a {
			for k := range c {
				best := 0
				for j := range b {
					if x[(i*b+j)*c+k] > x[(i*b+best)*c+k] {
						best = j
					}
				}
				want = append(want, float64(best))
			}
		}
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {a, b, c}}, want, []int{a, 1, c})
	})
	t.Run("ArgMaxSelectLast", func(t *testing.T) {
		g := graphSpec{
			nodes:   []*onnxpb.NodeProto{nodeOf("ArgMax", []string{"x"}, []string{"y"}, attrI("select_last_index", 1))},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, b, c)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", onnxpb.TensorProto_INT64, 1, b, c)},
		}
		_, err := Load(g.bytes(t), Options{})
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "select_last_index") {
			t.Fatalf("got %v, want an UnsupportedError naming select_last_index", err)
		}
	})
}

// Tile [2, 3] by (2, 3) to [4, 9]; Split [7, 3] along 0 into (2, 4, 1)
// and evenly into 3 parts of 3, 3, 1 (ONNX's rule), reassembled in
// another order by Concat.
func TestTileSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	t.Run("Tile", func(t *testing.T) {
		x := randn(r, 6)
		g := graphSpec{
			inits:   []*onnxpb.TensorProto{intInit("reps", []int{2}, 2, 3)},
			nodes:   []*onnxpb.NodeProto{nodeOf("Tile", []string{"x", "reps"}, []string{"y"})},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 2, 3)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4, 9)},
		}
		var want []float64
		for i := range 4 {
			for j := range 9 {
				want = append(want, x[(i%2)*3+j%3])
			}
		}
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {2, 3}}, want, []int{4, 9})
	})
	x := randn(r, 21)
	rows := func(from, to int) []float64 { return x[from*3 : to*3] }
	for _, c := range []struct {
		name  string
		split []*onnxpb.TensorProto
		in    []string
		want  []float64
	}{
		{"sizes", []*onnxpb.TensorProto{intInit("split", []int{3}, 2, 4, 1)}, []string{"x", "split"},
			append(append(append([]float64{}, rows(6, 7)...), rows(0, 2)...), rows(2, 6)...)},
		{"even", nil, []string{"x"},
			append(append(append([]float64{}, rows(6, 7)...), rows(0, 3)...), rows(3, 6)...)},
	} {
		t.Run("Split_"+c.name, func(t *testing.T) {
			g := graphSpec{
				inits: c.split,
				nodes: []*onnxpb.NodeProto{
					nodeOf("Split", c.in, []string{"p0", "p1", "p2"}),
					nodeOf("Concat", []string{"p2", "p0", "p1"}, []string{"y"}, attrI("axis", 0)),
				},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 7, 3)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 7, 3)},
			}
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {7, 3}}, c.want, []int{7, 3})
		})
	}
}

// Slice with negative steps: on the device (rows reversed, every other
// column backwards from the last) and on the host (a shape reversed, then
// used by Reshape).
func TestSliceNegativeSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	x := randn(r, 24)
	t.Run("device", func(t *testing.T) {
		g := graphSpec{
			inits: []*onnxpb.TensorProto{intInit("starts", []int{2}, -1, 100), intInit("ends", []int{2}, math.MinInt64, 0),
				intInit("axes", []int{2}, 0, 1), intInit("steps", []int{2}, -1, -2)},
			nodes:   []*onnxpb.NodeProto{nodeOf("Slice", []string{"x", "starts", "ends", "axes", "steps"}, []string{"y"})},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, 6)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, 3)},
		}
		var want []float64
		for i := 3; i >= 0; i-- {
			for _, j := range []int{5, 3, 1} {
				want = append(want, x[i*6+j])
			}
		}
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {4, 6}}, want, []int{4, 3})
	})
	t.Run("host", func(t *testing.T) {
		g := graphSpec{
			inits: []*onnxpb.TensorProto{intInit("starts", []int{1}, -1), intInit("ends", []int{1}, -100), intInit("steps", []int{1}, -1),
				intInit("axes", []int{1}, 0)},
			nodes: []*onnxpb.NodeProto{
				nodeOf("Shape", []string{"x"}, []string{"s"}),
				nodeOf("Slice", []string{"s", "starts", "ends", "axes", "steps"}, []string{"rs"}),
				nodeOf("Reshape", []string{"x", "rs"}, []string{"y"}),
			},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, 6)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 6, -1)},
		}
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {4, 6}}, x, []int{6, 4})
	})
}

// resizeRef2D resizes the last two axes of x [n, h, w] to [oh, ow] by the
// textbook formulas (torch's upsample kernels): nearest reads
// floor(o / scale); bilinear blends the four neighbours of the source
// point, half-pixel or corner-aligned.
func resizeRef2D(x []float64, n, h, w, oh, ow int, sh, sw float64, mode string) []float64 {
	src := func(o, in, out int, scale float64) float64 {
		if mode == "align_corners" {
			if out == 1 {
				return 0
			}
			return float64(o) * float64(in-1) / float64(out-1)
		}
		return math.Max((float64(o)+0.5)/scale-0.5, 0)
	}
	var out []float64
	for c := range n {
		at := func(i, j int) float64 { return x[(c*h+i)*w+j] }
		for i := range oh {
			for j := range ow {
				if mode == "nearest" {
					out = append(out, at(min(int(math.Floor(float64(i)/sh)), h-1), min(int(math.Floor(float64(j)/sw)), w-1)))
					continue
				}
				sy, sx := src(i, h, oh, sh), src(j, w, ow, sw)
				y0, x0 := int(sy), int(sx)
				y1, x1 := min(y0+1, h-1), min(x0+1, w-1)
				ly, lx := sy-float64(y0), sx-float64(x0)
				out = append(out, (1-ly)*((1-lx)*at(y0, x0)+lx*at(y0, x1))+ly*((1-lx)*at(y1, x0)+lx*at(y1, x1)))
			}
		}
	}
	return out
}

// Resize as torch 1.13 exports nn.Upsample and F.interpolate: nearest
// (asymmetric, floor) by scales, bilinear half_pixel by scales and by
// sizes, bilinear align_corners by sizes; unsupported modes fail at load.
func TestResize(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const n, c, h, w = 2, 3, 4, 5
	x := randn(r, n*c*h*w)
	for _, cs := range []struct {
		name          string
		attrs         []*onnxpb.AttributeProto
		scales, sizes []float64
		oh, ow        int
		ref           string
	}{
		{"nearest_scales", []*onnxpb.AttributeProto{attrS("mode", "nearest"), attrS("coordinate_transformation_mode", "asymmetric"), attrS("nearest_mode", "floor")},
			[]float64{1, 1, 2, 3}, nil, 8, 15, "nearest"},
		{"nearest_sizes", []*onnxpb.AttributeProto{attrS("mode", "nearest"), attrS("coordinate_transformation_mode", "asymmetric"), attrS("nearest_mode", "floor")},
			nil, []float64{n, c, 6, 7}, 6, 7, "nearest"},
		{"linear_half_pixel", []*onnxpb.AttributeProto{attrS("mode", "linear"), attrS("coordinate_transformation_mode", "half_pixel")},
			[]float64{1, 1, 2, 2}, nil, 8, 10, "half_pixel"},
		{"linear_half_pixel_down", []*onnxpb.AttributeProto{attrS("mode", "linear"), attrS("coordinate_transformation_mode", "half_pixel")},
			nil, []float64{n, c, 3, 2}, 3, 2, "half_pixel"},
		{"linear_align_corners", []*onnxpb.AttributeProto{attrS("mode", "linear"), attrS("coordinate_transformation_mode", "align_corners")},
			nil, []float64{n, c, 7, 9}, 7, 9, "align_corners"},
	} {
		t.Run(cs.name, func(t *testing.T) {
			inits := []*onnxpb.TensorProto{}
			in := []string{"x", "", "scales"}
			sh, sw := float64(cs.oh)/h, float64(cs.ow)/w
			if cs.scales != nil {
				inits = append(inits, floatsInit("scales", cs.scales...))
				sh, sw = cs.scales[2], cs.scales[3]
			} else {
				sizes := make([]int64, len(cs.sizes))
				for k, v := range cs.sizes {
					sizes[k] = int64(v)
				}
				inits = append(inits, intInit("sizes", []int{4}, sizes...))
				in = []string{"x", "", "", "sizes"}
			}
			g := graphSpec{
				inits:   inits,
				nodes:   []*onnxpb.NodeProto{nodeOf("Resize", in, []string{"y"}, cs.attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, c, h, w)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, c, -1, -1)},
			}
			want := resizeRef2D(x, n*c, h, w, cs.oh, cs.ow, sh, sw, cs.ref)
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, c, h, w}}, want, []int{n, c, cs.oh, cs.ow})
		})
	}
	// Cubic as torch 1.13 exports F.interpolate(mode="bicubic"): Keys'
	// kernel with A = −0.75, border pixels repeated, against a float64
	// reference; other cubic variants fail at load.
	for _, cs := range []struct {
		name   string
		coord  string
		scales []float64
		oh, ow int
	}{
		{"cubic_scales", "half_pixel", []float64{1, 1, 2, 1.5}, 8, 7},
		{"cubic_sizes_align_corners", "align_corners", nil, 7, 3},
		{"cubic_sizes_down", "half_pixel", nil, 3, 4},
	} {
		t.Run(cs.name, func(t *testing.T) {
			in := []string{"x", "", "scales"}
			var inits []*onnxpb.TensorProto
			sh, sw := float64(cs.oh)/h, float64(cs.ow)/w
			if cs.scales != nil {
				inits = append(inits, floatsInit("scales", cs.scales...))
				sh, sw = cs.scales[2], cs.scales[3]
			} else {
				inits = append(inits, intInit("sizes", []int{4}, n, c, int64(cs.oh), int64(cs.ow)))
				in = []string{"x", "", "", "sizes"}
			}
			g := graphSpec{
				inits:   inits,
				nodes:   []*onnxpb.NodeProto{nodeOf("Resize", in, []string{"y"}, attrS("mode", "cubic"), attrS("coordinate_transformation_mode", cs.coord))},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, c, h, w)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, c, -1, -1)},
			}
			want := resizeCubicRef(x, n*c, h, w, cs.oh, cs.ow, sh, sw, cs.coord == "align_corners")
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, c, h, w}}, want, []int{n, c, cs.oh, cs.ow})
		})
	}
	t.Run("cubic_unsupported", func(t *testing.T) {
		for _, attrs := range [][]*onnxpb.AttributeProto{
			{attrS("mode", "cubic"), attrS("coordinate_transformation_mode", "asymmetric")},
			{attrS("mode", "cubic"), attrF("cubic_coeff_a", -0.5)},
		} {
			g := graphSpec{
				inits:   []*onnxpb.TensorProto{floatsInit("scales", 1, 1, 2, 2)},
				nodes:   []*onnxpb.NodeProto{nodeOf("Resize", []string{"x", "", "scales"}, []string{"y"}, attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, c, h, w)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, c, -1, -1)},
			}
			_, err := Load(g.bytes(t), Options{})
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), `mode "cubic"`) {
				t.Fatalf("got %v, want an UnsupportedError naming mode cubic", err)
			}
		}
	})
}

// resizeCubicRef is bicubic resampling in float64 (Keys, A = −0.75, indices
// clamped to the image) of planes [planes, h, w] to [oh, ow].
func resizeCubicRef(x []float64, planes, h, w, oh, ow int, sh, sw float64, alignCorners bool) []float64 {
	const a = -0.75
	kernel := func(d float64) float64 {
		d = math.Abs(d)
		switch {
		case d <= 1:
			return ((a+2)*d-(a+3))*d*d + 1
		case d < 2:
			return ((a*d-5*a)*d+8*a)*d - 4*a
		}
		return 0
	}
	src := func(o, in, out int, scale float64) float64 {
		if alignCorners {
			if out == 1 {
				return 0
			}
			return float64(o) * float64(in-1) / float64(out-1)
		}
		return (float64(o)+0.5)/scale - 0.5
	}
	var out []float64
	for p := range planes {
		for oy := range oh {
			for ox := range ow {
				sy, sx := src(oy, h, oh, sh), src(ox, w, ow, sw)
				y0, x0 := math.Floor(sy), math.Floor(sx)
				var v float64
				for i := -1; i <= 2; i++ {
					for j := -1; j <= 2; j++ {
						yy := min(max(int(y0)+i, 0), h-1)
						xx := min(max(int(x0)+j, 0), w-1)
						v += kernel(sy-(y0+float64(i))) * kernel(sx-(x0+float64(j))) * x[(p*h+yy)*w+xx]
					}
				}
				out = append(out, v)
			}
		}
	}
	return out
}

// Gather with device indices counts negative ones from the end of the
// axis, for Int32 and Int64 index inputs (Int64 is narrowed: on the CPU
// by Run, on WebGPU by FromInt64 already).
func TestGatherNegativeDeviceIndices(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	const rows, cols = 5, 4
	table := randn(r, rows*cols)
	ids := []int64{-1, 0, 3, -5, 2, -2}
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{floatInit("table", []int{rows, cols}, table)},
		nodes:   []*onnxpb.NodeProto{nodeOf("Gather", []string{"table", "ids"}, []string{"y"})},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("ids", onnxpb.TensorProto_INT64, -1, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, 3, cols)},
	}
	m := g.load(t)
	var want []float64
	for _, id := range ids {
		row := (int(id) + rows) % rows
		want = append(want, table[row*cols:(row+1)*cols]...)
	}
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		ids32 := make([]int32, len(ids))
		for k, v := range ids {
			ids32[k] = int32(v)
		}
		for name, in := range map[string]*tensor.Tensor{
			"int32": tensor.FromInt32(dev, ids32, 2, 3),
			"int64": tensor.FromInt64(dev, ids, 2, 3),
		} {
			out, err := m.Run(map[string]*tensor.Tensor{"ids": in})
			in.Release()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			y := out["y"]
			if !equalInts(y.Shape(), []int{2, 3, cols}) {
				t.Fatalf("%s: shape %v", name, y.Shape())
			}
			got := testdevice.Float64s(t, y)
			y.Release()
			for k := range want {
				if got[k] != float64(float32(want[k])) {
					t.Fatalf("%s: element %d: got %v, want %v", name, k, got[k], want[k])
				}
			}
		}
	})
	t.Run("int64_overflow", func(t *testing.T) {
		in := tensor.FromInt64(testdevice.CPU(t), []int64{1, 2, 1 << 40}, 1, 3)
		defer in.Release()
		_, err := m.Run(map[string]*tensor.Tensor{"ids": in})
		if !errors.Is(err, tensor.ErrInt64Overflow) || !strings.Contains(err.Error(), `"ids"`) || !strings.Contains(err.Error(), "element 2") {
			t.Fatalf("got %v, want an overflow error naming input ids and element 2", err)
		}
	})
}

// Less, Greater and Not as exporters use them for masks: where x ≥ b
// (Not Less) x, else 1 where x > −0.5 (Greater, Cast to float) and 0.
func TestComparisonsNot(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	x, b := randn(r, 15), randn(r, 5)
	g := graphSpec{
		inits: []*onnxpb.TensorProto{floatInit("half", nil, []float64{-0.5})},
		nodes: []*onnxpb.NodeProto{
			nodeOf("Less", []string{"x", "b"}, []string{"lt"}),
			nodeOf("Not", []string{"lt"}, []string{"ge"}),
			nodeOf("Greater", []string{"x", "half"}, []string{"gt"}),
			nodeOf("Cast", []string{"gt"}, []string{"gtf"}, attrI("to", int64(F))),
			nodeOf("Where", []string{"ge", "x", "gtf"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 3, 5), tensorInput("b", F, 5)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 3, 5)},
	}
	want := make([]float64, len(x))
	for k, v := range x {
		switch {
		case !(float32(v) < float32(b[k%5])):
			want[k] = v
		case v > -0.5:
			want[k] = 1
		}
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x, "b": b}, map[string][]int{"x": {3, 5}, "b": {5}}, want, []int{3, 5})
}
