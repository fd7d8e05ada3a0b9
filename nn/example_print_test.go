package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// Modules print their structure as PyTorch prints it.
func ExampleFormat() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	gen := tensor.NewGenerator(0)
	model := nn.NewSequential(
		nn.NewLinear(dev, 784, 512, true, gen),
		nn.ReLU{},
		nn.NewDropout(0.2, gen),
		nn.NewLinear(dev, 512, 10, true, gen),
	)
	defer nn.Release(model)
	fmt.Println(model) // the same as nn.Format(model)
	// Output:
	// Sequential(
	//   (0): Linear(in_features=784, out_features=512, bias=True)
	//   (1): ReLU()
	//   (2): Dropout(p=0.2, inplace=False)
	//   (3): Linear(in_features=512, out_features=10, bias=True)
	// )
}

// Summary runs a sample batch through the model and tabulates each
// layer's output shape and parameter count.
func ExampleSummary() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	gen := tensor.NewGenerator(0)
	model := nn.NewSequential(
		nn.NewConv2d(dev, 1, 8, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen),
		nn.NewBatchNorm2d(dev, 8),
		nn.ReLU{},
		nn.NewMaxPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}),
		nn.NewSequential(nn.NewFlatten(), nn.NewLinear(dev, 8*14*14, 10, true, gen)),
	)
	defer nn.Release(model)
	s, err := nn.SummaryOfShape(model, dev, 32, 1, 28, 28)
	if err != nil {
		panic(err)
	}
	fmt.Print(s)
	// Output:
	// ============================================
	// Layer (type)        Output Shape     Param #
	// ============================================
	// Sequential          [32, 10]              --
	// ├─(0): Conv2d       [32, 8, 28, 28]       80
	// ├─(1): BatchNorm2d  [32, 8, 28, 28]       16
	// ├─(2): ReLU         [32, 8, 28, 28]       --
	// ├─(3): MaxPool2d    [32, 8, 14, 14]       --
	// └─(4): Sequential   [32, 10]              --
	//   ├─(0): Flatten    [32, 1568]            --
	//   └─(1): Linear     [32, 10]          15,690
	// ============================================
	// Input shape: [32, 1, 28, 28]
	// Total params: 15,786
	// Trainable params: 15,786
	// Non-trainable params (buffers): 17
	// Params size: 61.66 KiB
	// Buffers size: 72 B
	// ============================================
}
