package tensor_test

import (
	"fmt"

	"github.com/webtensor/webtensor/tensor"
)

func ExampleMatMul() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	a := tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := tensor.FromFloat32(dev, []float32{1, 0, 0, 1, 1, 1}, 3, 2)
	defer a.Release()
	defer b.Release()

	c := tensor.MatMul(a, b)
	defer c.Release()
	values, err := c.Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Shape(), values)
	// Output: [2 2] [4 5 10 11]
}

func ExampleCatch() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	a := tensor.Zeros(dev, 2, 3)
	b := tensor.Zeros(dev, 3, 2)
	defer a.Release()
	defer b.Release()

	err = tensor.Catch(func() { a.Add(b) })
	fmt.Println(err)
	// Output: tensor: Add: shape mismatch: [2 3] vs [3 2]
}

func ExampleOpen() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	again, _ := tensor.Open("cpu")
	fmt.Println(dev.Name(), dev == again)

	_, err = tensor.Open("webgpu:x")
	fmt.Println(err)
	// Output:
	// cpu true
	// tensor: Open: invalid adapter index "x" in device name "webgpu:x": want a number ≥ 0
}
