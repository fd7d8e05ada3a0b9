package graph

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// TestGoldenSortGrads checks the gradients of Sort, TopK, KthValue and the
// scans against PyTorch's (testdata/golden/grad_ops/sort.json, written by
// testdata/golden/gen_sort.py in float64): each case gives the input x,
// the upstream gradient g of the op's values and PyTorch's gradient of x,
// Cumprod's with zeros in x among them. They run in float64 on the CPU
// and in float32 on every device, with autogradTolerances (the rules are a
// few kernels deep, like the models there).
func TestGoldenSortGrads(t *testing.T) {
	raw, err := os.ReadFile("../testdata/golden/grad_ops/sort.json")
	require.NoError(t, err, "run `make golden`")
	var file struct {
		Cases []struct {
			Name    string          `json:"name"`
			Op      string          `json:"op"`
			Args    map[string]any  `json:"args"`
			Inputs  []gradGoldenArr `json:"inputs"`
			Grad    gradGoldenArr   `json:"grad"`
			Outputs []gradGoldenArr `json:"outputs"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Cases)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		for _, dtype := range []tensor.DType{tensor.Float64, tensor.Float32} {
			if !tensor.Supports(dev, "Sort", dtype) {
				continue
			}
			for _, c := range file.Cases {
				t.Run(fmt.Sprintf("%v/%s", dtype, c.Name), func(t *testing.T) {
					num := func(k string) int { return int(c.Args[k].(float64)) }
					flag := func(k string) bool { b, _ := c.Args[k].(bool); return b }
					in := c.Inputs[0]
					x := Param(fromFloat64s(dev, dtype, in.Data, in.Shape...))
					defer x.Release()
					var y *Value
					switch c.Op {
					case "sort":
						y, _ = x.Sort(num("dim"), flag("descending"), true)
					case "topk":
						y, _ = x.TopK(num("k"), num("dim"), flag("largest"), true)
					case "kthvalue":
						y, _ = x.KthValue(num("k"), num("dim"), flag("keepdim"))
					case "cumsum":
						y = x.Cumsum(num("dim"))
					case "cumprod":
						y = x.Cumprod(num("dim"))
					case "logcumsumexp":
						y = x.LogCumSumExp(num("dim"))
					default:
						t.Fatalf("unknown op %q", c.Op)
					}
					g := Constant(fromFloat64s(dev, dtype, c.Grad.Data, c.Grad.Shape...))
					loss := y.Mul(g).Sum(nil, false)
					defer releaseValues([]*Value{y, g, loss})
					require.NoError(t, Backward(loss))
					got, err := x.Grad().Float64s()
					require.NoError(t, err)
					want := c.Outputs[0].Data
					tol := autogradTolerances[dtype]
					largest := 0.0
					for _, w := range want {
						largest = max(largest, math.Abs(w))
					}
					require.Len(t, got, len(want))
					for i, w := range want {
						if d := math.Abs(got[i] - w); !(d <= tol.rtol*largest+tol.atol) {
							t.Fatalf("element %d: got %v, want %v (|diff| %.3g > %.3g)", i, got[i], w, d, tol.rtol*largest+tol.atol)
						}
					}
				})
			}
		}
	})
}

// gradGoldenArr is a tensor of the grad_ops files (contiguous; no NaN or
// infinities).
type gradGoldenArr struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}
