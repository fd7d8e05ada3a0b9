package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Values print as their tensors, marked as PyTorch marks what autodiff
// tracks.
func ExampleValue_Format() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	w := graph.Param(tensor.FromFloat32(dev, []float32{0.5, -1}, 2))
	defer w.Release()
	y := graph.Mul(w, w)
	defer y.Release()
	fmt.Println(w)
	fmt.Println(y)
	// Output:
	// tensor([ 0.5000, -1.0000], requires_grad=True)
	// tensor([0.2500, 1.0000], grad_fn=<MulBackward>)
}
