package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// A full training loop: a two-layer network learns XOR with Adam and
// cross-entropy, then classifies the four inputs without recording a graph.
// Nothing in the loop reads from the device except the occasional loss
// printed, and nothing is released by hand: a scope per step does it.
func Example_trainingLoop() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	gen := tensor.NewGenerator(42) // the same seed gives the same network on every device
	model := nn.NewSequential(
		nn.NewLinear(dev, 2, 16, true, gen), nn.Tanh{},
		nn.NewLinear(dev, 16, 2, true, gen))
	defer nn.Release(model)
	opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.01})

	x := graph.Constant(tensor.FromFloat32(dev, []float32{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2))
	defer x.Release()
	y := graph.Constant(tensor.FromInt32(dev, []int32{0, 1, 1, 0}, 4))
	defer y.Release()

	for step := range 200 {
		// A scope per step: closing it releases the logits, the loss and
		// everything else this step computed from x; the parameters, their
		// gradients and the optimizer state stay.
		s := graph.NewScope()
		loss := nn.CrossEntropy(model.Forward(s.Use(x.Detach())), y, 0)
		if err := graph.Backward(loss); err != nil {
			panic(err)
		}
		if err := opt.Step(); err != nil {
			panic(err)
		}
		opt.ZeroGrad()
		if step%50 == 0 || step == 199 {
			l, err := loss.Item()
			if err != nil {
				panic(err)
			}
			fmt.Printf("step %3d  loss %.3f\n", step, l)
		}
		s.Close()
	}

	model.SetTraining(false)
	// Evaluation records nothing and keeps nothing: the scope releases
	// the logits and the predictions.
	eval := graph.NewScope(graph.NoGrad)
	pred := model.Forward(eval.Use(x.Detach())).ArgMax([]int{1}, false)
	classes, err := pred.Tensor().Int32s()
	if err != nil {
		panic(err)
	}
	eval.Close()
	fmt.Println("XOR of 00 01 10 11:", classes)
	// Output:
	// step   0  loss 0.737
	// step  50  loss 0.522
	// step 100  loss 0.052
	// step 150  loss 0.011
	// step 199  loss 0.006
	// XOR of 00 01 10 11: [0 1 1 0]
}
