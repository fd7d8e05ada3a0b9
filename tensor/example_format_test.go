package tensor_test

import (
	"fmt"

	"github.com/webtensor/webtensor/tensor"
)

// Tensors print as PyTorch prints them: one number format for all the
// elements, big tensors summarized, and dtype (and device, when not the
// CPU) appended.
func ExampleTensor_Format() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	x := tensor.FromFloat32(dev, []float32{1, 2.5, 3, 4}, 2, 2)
	defer x.Release()
	fmt.Println(x)
	fmt.Printf("%.2v\n", x)
	fmt.Printf("%+v\n", x)

	wide := tensor.FromFloat32(dev, []float32{1e-5, 1, 1000}, 3)
	defer wide.Release()
	fmt.Println(wide)

	ints := tensor.Arange(dev, tensor.Int32, 0, 2000, 1)
	defer ints.Release()
	fmt.Println(ints)

	fmt.Println(x.String()) // short, and reads nothing from the device
	// Output:
	// tensor([[1.0000, 2.5000],
	//         [3.0000, 4.0000]])
	// tensor([[1.00, 2.50],
	//         [3.00, 4.00]])
	// tensor([[1.0000, 2.5000],
	//         [3.0000, 4.0000]], size=(2, 2))
	// tensor([1.0000e-05, 1.0000e+00, 1.0000e+03])
	// tensor([   0,    1,    2,  ..., 1997, 1998, 1999], dtype=int32)
	// tensor [2 2] float32 on cpu
}
