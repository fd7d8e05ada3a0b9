package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Einsum's gradient comes from the matrix products it lowers to: for
// loss = Σᵢⱼ (a·b)ᵢⱼ, ∂loss/∂a = 1·bᵀ, each row the row sums of b.
func ExampleEinsum() {
	dev, _ := tensor.Open("cpu")
	a := graph.Param(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2))
	b := graph.Constant(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2))
	loss := graph.Einsum("ij,jk->", a, b)
	if err := graph.Backward(loss); err != nil {
		panic(err)
	}
	l, _ := loss.Item()
	g, _ := a.Grad().Float32s()
	fmt.Println(l, g)
	// Output: 54 [3 7 3 7]
}

// Interpolate's gradient sends each output's gradient back to the input
// pixels it read, by their weights: upsampling 1×2 to 1×4 bilinearly
// (edges aligned) weights the two inputs ¾ and ¼ at the inner outputs.
func ExampleInterpolate() {
	dev, _ := tensor.Open("cpu")
	x := graph.Param(tensor.FromFloat32(dev, []float32{0, 4}, 1, 1, 1, 2))
	y := graph.Interpolate(x, tensor.InterpolateOptions{Size: []int{1, 4}, Mode: tensor.InterpolateBilinear})
	if err := graph.Backward(y.Sum(nil, false)); err != nil {
		panic(err)
	}
	v, _ := y.Tensor().Float32s()
	g, _ := x.Grad().Float32s()
	fmt.Println(v, g)
	// Output: [0 1 3 4] [2 2]
}

// The masked and triangular ops pass gradients only where they kept
// values: a causal mask's upper triangle gets none.
func ExampleValue_Tril() {
	dev, _ := tensor.Open("cpu")
	x := graph.Param(tensor.Ones(dev, 2, 2))
	if err := graph.Backward(x.Tril(0).Sum(nil, false)); err != nil {
		panic(err)
	}
	g, _ := x.Grad().Float32s()
	fmt.Println(g)
	// Output: [1 0 1 1]
}
