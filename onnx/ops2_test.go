package onnx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// BatchNormalization (inference) then Clip(−0.5, 0.8), as exporters other
// than PyTorch's leave them, against the float64 formula.
func TestBatchNormClip(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n, c, h, w = 2, 3, 4, 5
	x := randn(r, n*c*h*w)
	scale, bias, mean := randn(r, c), randn(r, c), randn(r, c)
	variance := make([]float64, c)
	for k := range variance {
		variance[k] = 0.5 + r.Float64()
	}
	g := graphSpec{
		inits: []*onnxpb.TensorProto{floatInit("s", []int{c}, scale), floatInit("b", []int{c}, bias), floatInit("m", []int{c}, mean),
			floatInit("v", []int{c}, variance), floatInit("lo", nil, []float64{-0.5}), floatInit("hi", nil, []float64{0.8})},
		nodes: []*onnxpb.NodeProto{
			nodeOf("BatchNormalization", []string{"x", "s", "b", "m", "v"}, []string{"bn"}, attrF("epsilon", 1e-3)),
			nodeOf("Clip", []string{"bn", "lo", "hi"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, c, h, w)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, c, h, w)},
	}
	want := make([]float64, len(x))
	for k, v := range x {
		ch := k / (h * w) % c
		y := (v-mean[ch])/math.Sqrt(variance[ch]+float64(float32(1e-3)))*scale[ch] + bias[ch]
		want[k] = math.Min(math.Max(y, -0.5), 0.8)
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, c, h, w}}, want, []int{n, c, h, w})
}

// pool2d is a direct float64 pooling reference with pads [top, left,
// bottom, right] (padding excluded from both max and average).
func pool2d(x []float64, n, c, h, w, k, s int, pads [4]int, avg bool) ([]float64, int, int) {
	oh := (h+pads[0]+pads[2]-k)/s + 1
	ow := (w+pads[1]+pads[3]-k)/s + 1
	var out []float64
	for i := range n * c {
		for y := range oh {
			for z := range ow {
				acc, cnt := math.Inf(-1), 0
				if avg {
					acc = 0
				}
				for p := range k {
					for q := range k {
						iy, ix := y*s-pads[0]+p, z*s-pads[1]+q
						if iy < 0 || iy >= h || ix < 0 || ix >= w {
							continue
						}
						v := x[(i*h+iy)*w+ix]
						if avg {
							acc += v
						} else {
							acc = math.Max(acc, v)
						}
						cnt++
					}
				}
				if avg {
					acc /= float64(cnt)
				}
				out = append(out, acc)
			}
		}
	}
	return out, oh, ow
}

func TestPools(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const n, c, h, w = 2, 3, 7, 6
	x := randn(r, n*c*h*w)
	for _, tc := range []struct {
		name string
		op   string
		pads [4]int
	}{
		{"average symmetric pads", "AveragePool", [4]int{1, 1, 1, 1}},
		{"max symmetric pads", "MaxPool", [4]int{1, 1, 1, 1}},
		{"max asymmetric pads", "MaxPool", [4]int{0, 1, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pads
			g := graphSpec{
				nodes: []*onnxpb.NodeProto{nodeOf(tc.op, []string{"x"}, []string{"y"}, attrInts("kernel_shape", 3, 3),
					attrInts("strides", 2, 2), attrInts("pads", int64(p[0]), int64(p[1]), int64(p[2]), int64(p[3])))},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, n, c, h, w)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, n, c, -1, -1)},
			}
			want, oh, ow := pool2d(x, n, c, h, w, 3, 2, p, tc.op == "AveragePool")
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {n, c, h, w}}, want, []int{n, c, oh, ow})
		})
	}
}

// Where(Equal(x, 0), Expand(a), sqrt(x²)^1.5 · tanh(x) + erf(x)) with x
// holding exact zeros and a [1] broadcast by Expand to [3, 4].
func TestWhereEqualExpandMath(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	x := randn(r, 12)
	x[2], x[7] = 0, 0
	g := graphSpec{
		inits: []*onnxpb.TensorProto{floatInit("zero", nil, []float64{0}), floatInit("a", []int{1}, []float64{-9}),
			intInit("shape", []int{2}, 3, 4), floatInit("e", nil, []float64{1.5})},
		nodes: []*onnxpb.NodeProto{
			nodeOf("Equal", []string{"x", "zero"}, []string{"isz"}),
			nodeOf("Expand", []string{"a", "shape"}, []string{"ax"}),
			nodeOf("Mul", []string{"x", "x"}, []string{"x2"}),
			nodeOf("Sqrt", []string{"x2"}, []string{"absx"}),
			nodeOf("Pow", []string{"absx", "e"}, []string{"p"}),
			nodeOf("Tanh", []string{"x"}, []string{"th"}),
			nodeOf("Mul", []string{"p", "th"}, []string{"m"}),
			nodeOf("Erf", []string{"x"}, []string{"er"}),
			nodeOf("Add", []string{"m", "er"}, []string{"f"}),
			nodeOf("Where", []string{"isz", "ax", "f"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 3, 4)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 3, 4)},
	}
	want := make([]float64, 12)
	for k, v := range x {
		if v == 0 {
			want[k] = -9
		} else {
			want[k] = math.Pow(math.Abs(v), 1.5)*math.Tanh(v) + math.Erf(v)
		}
	}
	checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": {3, 4}}, want, []int{3, 4})
}
