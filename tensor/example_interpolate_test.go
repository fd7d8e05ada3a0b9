package tensor_test

import (
	"fmt"

	"github.com/webtensor/webtensor/tensor"
)

// InterpolateBackward is Interpolate's gradient, as PyTorch's
// upsample_linear1d_backward: each input position sums the output
// gradients that read it, weighted as the forward pass weighted it. Here a
// row of 2 was resized to 4 (taps (1, 0), (¾, ¼), (¼, ¾), (0, 1) with the
// last clamped onto position 1).
func ExampleInterpolateBackward() {
	dev, _ := tensor.Open("cpu")
	opts := tensor.InterpolateOptions{Size: []int{4}, Mode: tensor.InterpolateLinear}
	grad := tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 1, 1, 4)
	defer grad.Release()
	dx := tensor.InterpolateBackward(grad, []int{1, 1, 2}, opts)
	defer dx.Release()
	v, _ := dx.Float32s()
	fmt.Println(dx.Shape(), v)
	// Output:
	// [1 1 2] [3.25 6.75]
}
