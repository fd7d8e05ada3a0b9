package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

func ExampleLinear() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	l := nn.NewLinear(dev, 2, 3, true, tensor.NewGenerator(0))
	defer nn.Release(l)
	// Replace the random initialization with known weights, as loading a
	// checkpoint would.
	l.Weight.SetTensor(tensor.FromFloat32(dev, []float32{1, 0, 0, 1, 1, 1}, 3, 2))
	l.Bias.SetTensor(tensor.FromFloat32(dev, []float32{0, 0, 10}, 3))
	for _, p := range l.Parameters() {
		fmt.Println(p.Name, p.Value.Shape())
	}

	x := graph.Constant(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2))
	defer x.Release()
	y := l.Forward(x) // x·Wᵀ + b
	defer y.Release()
	out, err := y.Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Shape(), out)
	// Output:
	// weight [3 2]
	// bias [3]
	// [2 3] [1 2 13 3 4 17]
}

func ExampleCrossEntropy() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	// Two samples, three classes; the second sample's logits are extreme,
	// which the log-softmax form handles.
	logits := graph.Param(tensor.FromFloat32(dev, []float32{2, 0, 0, 100, -100, 0}, 2, 3))
	defer logits.Release()
	labels := graph.Constant(tensor.FromInt32(dev, []int32{0, 1}, 2))
	defer labels.Release()

	loss := nn.CrossEntropy(logits, labels, 0)
	defer loss.Release()
	if err := graph.Backward(loss); err != nil {
		panic(err)
	}
	v, err := loss.Item()
	if err != nil {
		panic(err)
	}
	g, err := logits.Grad().Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Printf("loss %.4f\n", v)
	fmt.Printf("gradient (softmax − one-hot)/N: %.4f\n", g)
	// Output:
	// loss 100.1198
	// gradient (softmax − one-hot)/N: [-0.1065 0.0533 0.0533 0.5000 -0.5000 0.0000]
}
