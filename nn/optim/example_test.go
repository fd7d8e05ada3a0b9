package optim_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

func ExampleSGD() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{1, 2, 3}))
	defer w.Release()
	opt := optim.NewSGD([]nn.Named{{Name: "w", Value: w}}, optim.SGDConfig{LR: 0.1})

	// Backward would set the gradient; here it is set by hand.
	w.SetGrad(tensor.FromFloat32(dev, []float32{0.5, -1, 2}))
	if err := opt.Step(); err != nil {
		panic(err)
	}
	opt.ZeroGrad()
	v, _ := w.Float32s()
	fmt.Println(v)
	// Output: [0.95 2.1 2.8]
}

func ExampleAdam() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{1, 2, 3}))
	defer w.Release()
	opt := optim.NewAdam([]nn.Named{{Name: "w", Value: w}}, optim.AdamConfig{LR: 0.1})
	defer opt.Release()

	// Adam's first step moves each weight by about LR against the sign of
	// its gradient, whatever the gradient's size (the values are
	// torch.optim.Adam's).
	for _, g := range [][]float32{{0.5, -1, 2}, {0.5, 1, 20}} {
		w.SetGrad(tensor.FromFloat32(dev, g))
		if err := opt.Step(); err != nil {
			panic(err)
		}
		v, _ := w.Float32s()
		fmt.Printf("%.4f\n", v)
	}
	state, meta := opt.State()
	fmt.Println(len(state), "state tensors; steps:", meta["w.step"])
	// Output:
	// [0.9000 2.1000 2.9000]
	// [0.8000 2.0947 2.8193]
	// 2 state tensors; steps: 2
}

func ExampleCosineWarmup() {
	s := optim.CosineWarmup{Base: 0.1, Min: 0.001, Warmup: 2, Total: 6}
	for step := 0; step <= 7; step++ {
		fmt.Printf("%.4f ", s.LR(step))
	}
	fmt.Println()
	// Output: 0.0000 0.0500 0.1000 0.0855 0.0505 0.0155 0.0010 0.0010
}

func ExampleClipGradNorm() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.Zeros(dev, 2))
	defer w.Release()
	params := []nn.Named{{Name: "w", Value: w}}
	w.SetGrad(tensor.FromFloat32(dev, []float32{3, 4}))

	norm := optim.ClipGradNorm(params, 1)
	defer norm.Release()
	n, _ := norm.Item()
	g, _ := w.Grad().Float32s()
	fmt.Printf("norm %.4f, clipped %.4f\n", n, g)
	// Output: norm 5.0000, clipped [0.6000 0.8000]
}

// Fields whose PyTorch default is not zero are pointers: nil takes the
// default, and new sets any value, zero included.
func ExampleAdamConfig() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{1}))
	defer w.Release()
	params := []nn.Named{{Name: "w", Value: w}}

	c := optim.NewAdamW(params, optim.AdamConfig{LR: 1e-2}).Config()
	fmt.Println(*c.Beta1, *c.Beta2, *c.WeightDecay)
	c = optim.NewAdamW(params, optim.AdamConfig{LR: 1e-2, Beta1: new(0.0), WeightDecay: new(0.0)}).Config()
	fmt.Println(*c.Beta1, *c.Beta2, *c.WeightDecay)
	// Output:
	// 0.9 0.999 0.01
	// 0 0.999 0
}
