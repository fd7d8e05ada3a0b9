package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// The gradient of the top-2 values goes back to the positions they came
// from; Cumprod's gradient stays right at a zero input (∂/∂x₁ of
// Σ cumprod([2, 0, 3]) is 2 + 2·3 = 8).
func ExampleValue_TopK() {
	dev, _ := tensor.Open("cpu")
	x := graph.Param(tensor.FromFloat32(dev, []float32{0.5, 3, -1, 2}))
	z := graph.Param(tensor.FromFloat32(dev, []float32{2, 0, 3}))
	defer x.Release()
	defer z.Release()

	top, _ := x.TopK(2, 0, true, true)
	loss := graph.Add(top.Sum(nil, false), z.Cumprod(0).Sum(nil, false))
	defer top.Release()
	defer loss.Release()
	if err := graph.Backward(loss); err != nil {
		panic(err)
	}
	gx, _ := x.Grad().Float32s()
	gz, _ := z.Grad().Float32s()
	fmt.Println(gx, gz)
	// Output: [0 1 0 1] [1 8 0]
}
