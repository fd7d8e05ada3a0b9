package onnx

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

// runNode runs m on every device with x (Float32, shape) as input "x" and
// hands each device's outputs, as float64, to check.
func runNode(t *testing.T, m *Model, x []float64, shape []int, check func(t *testing.T, out map[string][]float64, shapes map[string][]int)) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		f := make([]float32, len(x))
		for k, v := range x {
			f[k] = float32(v)
		}
		in := tensor.FromFloat32(dev, f, shape...)
		defer in.Release()
		out, err := m.Run(map[string]*tensor.Tensor{"x": in})
		if err != nil {
			t.Fatal(err)
		}
		vals, shapes := map[string][]float64{}, map[string][]int{}
		for name, y := range out {
			vals[name], shapes[name] = testdevice.Float64s(t, y), y.Shape()
			y.Release()
		}
		check(t, vals, shapes)
	})
}

// sameFloats compares within 1e-5·max|want| + 1e-5, NaN matching NaN.
func sameFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	maxRef := 0.0
	for _, v := range want {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			maxRef = max(maxRef, math.Abs(v))
		}
	}
	for k := range want {
		g, w := got[k], want[k]
		if math.IsNaN(w) || math.IsInf(w, 0) {
			if !(math.IsNaN(g) && math.IsNaN(w)) && g != w {
				t.Fatalf("%s[%d]: got %v, want %v", what, k, g, w)
			}
			continue
		}
		if d := math.Abs(g - w); !(d <= 1e-5*maxRef+1e-5) {
			t.Fatalf("%s[%d]: got %v, want %v", what, k, g, w)
		}
	}
}

// float32s rounds x to float32 as the devices hold it.
func float32s(x []float64) []float64 {
	out := make([]float64, len(x))
	for k, v := range x {
		out[k] = float64(float32(v))
	}
	return out
}

// TopK along axis 1 of [3, 9, 5] (a strided axis), largest and smallest,
// K from an initializer, with NaNs: ONNX and torch count NaN as larger
// than every number. The reference sorts stably in float64 (ties keep the
// lower index first).
func TestTopKNode(t *testing.T) {
	const a, b, c, k = 3, 9, 5, 4
	r := rand.New(rand.NewPCG(191, 192))
	x := float32s(randn(r, a*b*c))
	x[7], x[40] = math.NaN(), math.NaN()
	x[12] = x[17] // a tie along axis 1
	for _, largest := range []int64{1, 0} {
		g := graphSpec{
			inits:   []*onnxpb.TensorProto{intInit("k", []int{1}, k)},
			nodes:   []*onnxpb.NodeProto{nodeOf("TopK", []string{"x", "k"}, []string{"v", "i"}, attrI("axis", -2), attrI("largest", largest), attrI("sorted", 1))},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, b, c)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("v", F, a, k, c), tensorInput("i", onnxpb.TensorProto_INT64, a, k, c)},
		}
		var wantV, wantI []float64
		wantV, wantI = make([]float64, a*k*c), make([]float64, a*k*c)
		for i := range a {
			for l := range c {
				pos := make([]int, b)
				for j := range pos {
					pos[j] = j
				}
				at := func(j int) float64 { return x[(i*b+j)*c+l] }
				// before reports whether value p comes before q in the
				// requested order (NaN largest).
				before := func(p, q float64) bool {
					if largest == 1 {
						return (math.IsNaN(p) && !math.IsNaN(q)) || p > q
					}
					return (!math.IsNaN(p) && math.IsNaN(q)) || p < q
				}
				sort.SliceStable(pos, func(u, v int) bool { return before(at(pos[u]), at(pos[v])) })
				for j := range k {
					wantV[(i*k+j)*c+l], wantI[(i*k+j)*c+l] = at(pos[j]), float64(pos[j])
				}
			}
		}
		t.Run(map[int64]string{1: "largest", 0: "smallest"}[largest], func(t *testing.T) {
			runNode(t, g.load(t), x, []int{a, b, c}, func(t *testing.T, out map[string][]float64, shapes map[string][]int) {
				if !equalInts(shapes["v"], []int{a, k, c}) || !equalInts(shapes["i"], []int{a, k, c}) {
					t.Fatalf("shapes %v and %v, want [%d %d %d]", shapes["v"], shapes["i"], a, k, c)
				}
				sameFloats(t, "values", out["v"], wantV)
				sameFloats(t, "indices", out["i"], wantI)
			})
		})
	}
}

// CumSum along axis 1 of [2, 7, 3] in its four modes (exclusive, reverse)
// against float64 running sums; an infinity in the input stays an
// infinity (no subtraction makes it NaN) and a NaN poisons the sums after
// it, as in torch.
func TestCumSumNode(t *testing.T) {
	const a, b, c = 2, 7, 3
	r := rand.New(rand.NewPCG(193, 194))
	x := float32s(randn(r, a*b*c))
	x[(0*b+2)*c+1] = math.Inf(1)
	x[(1*b+4)*c+2] = math.NaN()
	for _, mode := range []struct{ exclusive, reverse int64 }{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		want := make([]float64, len(x))
		for i := range a {
			for l := range c {
				acc := 0.0
				for s := range b {
					j := s
					if mode.reverse == 1 {
						j = b - 1 - s
					}
					v := x[(i*b+j)*c+l]
					if mode.exclusive == 0 {
						acc += v
					}
					want[(i*b+j)*c+l] = acc
					if mode.exclusive == 1 {
						acc += v
					}
				}
			}
		}
		g := graphSpec{
			inits:   []*onnxpb.TensorProto{intInit("axis", nil, -2)},
			nodes:   []*onnxpb.NodeProto{nodeOf("CumSum", []string{"x", "axis"}, []string{"y"}, attrI("exclusive", mode.exclusive), attrI("reverse", mode.reverse))},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, b, c)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, a, b, c)},
		}
		name := map[int64]string{0: "inclusive", 1: "exclusive"}[mode.exclusive] + map[int64]string{0: "", 1: "_reverse"}[mode.reverse]
		t.Run(name, func(t *testing.T) {
			runNode(t, g.load(t), x, []int{a, b, c}, func(t *testing.T, out map[string][]float64, shapes map[string][]int) {
				if !equalInts(shapes["y"], []int{a, b, c}) {
					t.Fatalf("shape %v", shapes["y"])
				}
				sameFloats(t, "y", out["y"], want)
			})
		})
	}
}

// Trilu on [2, 5, 6] with k from an initializer (positive and negative)
// and without it, upper and lower, against the index rule.
func TestTriluNode(t *testing.T) {
	const a, rows, cols = 2, 5, 6
	r := rand.New(rand.NewPCG(195, 196))
	x := float32s(randn(r, a*rows*cols))
	for _, c := range []struct {
		upper int64
		k     []int64 // nil: no k input
	}{{1, nil}, {0, nil}, {1, []int64{2}}, {0, []int64{-1}}, {1, []int64{-7}}, {0, []int64{9}}} {
		k := 0
		inputs := []string{"x"}
		var inits []*onnxpb.TensorProto
		if c.k != nil {
			k = int(c.k[0])
			inputs = append(inputs, "k")
			inits = append(inits, intInit("k", nil, c.k...))
		}
		want := make([]float64, len(x))
		for p := range x {
			i, j := p/cols%rows, p%cols
			if (c.upper == 1 && j-i >= k) || (c.upper == 0 && j-i <= k) {
				want[p] = x[p]
			}
		}
		g := graphSpec{
			inits:   inits,
			nodes:   []*onnxpb.NodeProto{nodeOf("Trilu", inputs, []string{"y"}, attrI("upper", c.upper))},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, rows, cols)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, a, rows, cols)},
		}
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {a, rows, cols}}, want, []int{a, rows, cols})
	}
}

// Einsum with an implicit output ("ij,jk": the product, output indices in
// alphabetical order) and a trace-like diagonal sum ("ii->"), against
// float64 loops.
func TestEinsumNode(t *testing.T) {
	r := rand.New(rand.NewPCG(197, 198))
	const n, m, p = 3, 5, 4
	x := float32s(randn(r, n*m))
	w := float32s(randn(r, m*p))
	want := make([]float64, n*p)
	for i := range n {
		for k := range p {
			for j := range m {
				want[i*p+k] += x[i*m+j] * w[j*p+k]
			}
		}
	}
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{floatInit("w", []int{m, p}, w)},
		nodes:   []*onnxpb.NodeProto{nodeOf("Einsum", []string{"x", "w"}, []string{"y"}, attrS("equation", "ij,jk"))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, n, m)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, n, p)},
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, m}}, want, []int{n, p})

	sq := float32s(randn(r, 25))
	trace := 0.0
	for i := range 5 {
		trace += sq[i*5+i]
	}
	g = graphSpec{
		nodes:   []*onnxpb.NodeProto{nodeOf("Einsum", []string{"x"}, []string{"y"}, attrS("equation", "ii->"))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 5, 5)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F)},
	}
	checkOp(t, g.load(t), map[string][]float64{"x": sq}, map[string][]int{"x": {5, 5}}, []float64{trace}, []int{})
}

// Bad arguments are errors naming the node and what is wrong, on every
// device, never panics.
func TestIssue19NodeErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		node *onnxpb.NodeProto
		init *onnxpb.TensorProto
		want string
	}{
		{"TopK K too large", nodeOf("TopK", []string{"x", "c"}, []string{"y", "i"}), intInit("c", []int{1}, 8), "K 8 is out of range"},
		{"TopK K negative", nodeOf("TopK", []string{"x", "c"}, []string{"y", "i"}), intInit("c", []int{1}, -1), "out of range"},
		{"TopK K two values", nodeOf("TopK", []string{"x", "c"}, []string{"y", "i"}), intInit("c", []int{2}, 1, 2), "one value"},
		{"TopK axis", nodeOf("TopK", []string{"x", "c"}, []string{"y", "i"}, attrI("axis", 2)), intInit("c", []int{1}, 1), "axis"},
		{"CumSum axis", nodeOf("CumSum", []string{"x", "c"}, []string{"y"}), intInit("c", nil, 2), "axis"},
		{"Trilu vector", nodeOf("Trilu", []string{"c"}, []string{"y"}), floatInit("c", []int{3}, []float64{1, 2, 3}), "rank"},
		{"Einsum equation", nodeOf("Einsum", []string{"x", "c"}, []string{"y"}, attrS("equation", "ij,jk->ik")), floatInit("c", []int{3, 2}, []float64{1, 2, 3, 4, 5, 6}), "ij,jk->ik"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graphSpec{
				inits:   []*onnxpb.TensorProto{c.init},
				nodes:   []*onnxpb.NodeProto{c.node},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 2, 7)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 2, 7)},
			}
			m := g.load(t)
			testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
				x := tensor.Zeros(dev, 2, 7)
				defer x.Release()
				_, err := m.Run(map[string]*tensor.Tensor{"x": x})
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.node.GetOpType()) {
					t.Fatalf("error %v, want one naming %s and %q", err, c.node.GetOpType(), c.want)
				}
			})
		})
	}
	// CumSum's exclusive and reverse are flags: other values fail at load.
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{intInit("c", nil, 0)},
		nodes:   []*onnxpb.NodeProto{nodeOf("CumSum", []string{"x", "c"}, []string{"y"}, attrI("reverse", 2))},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 2, 7)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 2, 7)},
	}
	if _, err := Load(g.bytes(t), Options{}); err == nil || !strings.Contains(err.Error(), "reverse") {
		t.Fatalf("load error %v, want one naming reverse", err)
	}
}

// ArgMin along axis 1 of [3, 6, 4] with a repeated minimum (the first
// wins), keepdims 0 and the default 1, against a float64 scan.
func TestArgMinNode(t *testing.T) {
	const a, b, c = 3, 6, 4
	r := rand.New(rand.NewPCG(199, 200))
	x := float32s(randn(r, a*b*c))
	x[(1*b+4)*c+2] = -9
	x[(1*b+1)*c+2] = -9
	want := make([]float64, a*c)
	for i := range a {
		for l := range c {
			best := 0
			for j := 1; j < b; j++ {
				if x[(i*b+j)*c+l] < x[(i*b+best)*c+l] {
					best = j
				}
			}
			want[i*c+l] = float64(best)
		}
	}
	for _, keep := range []int64{0, 1} {
		attrs := []*onnxpb.AttributeProto{attrI("axis", 1)}
		shape := []int{a, c}
		if keep == 0 {
			attrs = append(attrs, attrI("keepdims", 0))
		} else {
			shape = []int{a, 1, c}
		}
		g := graphSpec{
			nodes:   []*onnxpb.NodeProto{nodeOf("ArgMin", []string{"x"}, []string{"y"}, attrs...)},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, a, b, c)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", onnxpb.TensorProto_INT64, shape...)},
		}
		checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {a, b, c}}, want, shape)
	}
}
