package tensor_test

import (
	"fmt"

	"github.com/webtensor/webtensor/tensor"
)

// A 2×2×2 box filter over a 3×3×3 volume of ones, padded by one slice in
// depth only: the inner output slices sum 8 ones, the two border slices
// (half in the padding) 4.
func ExampleConv3d() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	x := tensor.Ones(dev, 1, 1, 3, 3, 3) // [N, C, D, H, W]
	defer x.Release()
	w := tensor.Ones(dev, 1, 1, 2, 2, 2) // [Cout, Cin, KD, KH, KW]
	defer w.Release()
	y := tensor.Conv3d(x, w, nil, tensor.Conv3dOptions{Padding: [3]int{1, 0, 0}})
	defer y.Release()
	v, err := y.Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Shape(), v)
	// Output: [1 1 4 2 2] [4 4 4 4 8 8 8 8 8 8 8 8 4 4 4 4]
}
