package tensor_test

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/tensor"
)

// Int64 tensors hold PyTorch's long values: token ids, counters, indices.
func ExampleFromInt64() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	ids := tensor.FromInt64(dev, []int64{1 << 40, -3, 7}, 3)
	defer ids.Release()
	sum := ids.Sum(nil, false)
	defer sum.Release()
	total, err := sum.Int64s()
	if err != nil {
		panic(err)
	}
	fmt.Println(ids.DType(), total)
	// Output: int64 [1099511627780]
}

// On a WebGPU device, which has no 64-bit integers, Int64 data becomes
// Int32; a value out of the int32 range is an error naming it. The
// function below shows the rule on any device it is given.
func ExampleHoldsInt64() {
	show := func(dev *tensor.Device) {
		small := tensor.FromInt64(dev, []int64{1, 2, 3})
		defer small.Release()
		fmt.Println(dev.Name(), "holds int64:", tensor.HoldsInt64(dev), "small ids are", small.DType())
		err := tensor.Catch(func() { tensor.FromInt64(dev, []int64{1 << 40}).Release() })
		fmt.Println("2^40 overflows:", errors.Is(err, tensor.ErrInt64Overflow))
	}
	cpu, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	show(cpu)
	// Output:
	// cpu holds int64: true small ids are int64
	// 2^40 overflows: false
}

// On a WebGPU adapter the same ids are stored as Int32 (no output is
// checked: the example needs a WebGPU adapter).
func ExampleFromInt64_webGPU() {
	gpu, err := tensor.Open("webgpu")
	if err != nil {
		fmt.Println("no WebGPU adapter:", err)
		return
	}
	ids := tensor.FromInt64(gpu, []int64{3, 1, 2})
	defer ids.Release()
	back, err := ids.Int64s()
	fmt.Println(ids.DType(), back, err) // int32 [3 1 2] <nil>
	err = tensor.Catch(func() { tensor.FromInt64(gpu, []int64{1 << 40}).Release() })
	fmt.Println(errors.Is(err, tensor.ErrInt64Overflow)) // true
}
