package amp_test

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/amp"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// A mixed-precision training step: the forward pass in an Autocast scope,
// the loss scaled before Backward, the step skipped and the scale backed
// off when a gradient overflows (injected here as an Inf), the scale grown
// after GrowthInterval clean steps.
func ExampleGradScaler() {
	dev, _ := tensor.Open("cpu")
	gen := tensor.NewGenerator(1)
	model := nn.NewLinear(dev, 3, 2, true, gen)
	defer nn.Release(model)
	opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.1})
	scaler := amp.NewGradScaler(model.Parameters(), amp.Config{InitScale: 1024, GrowthInterval: 2})

	for step := range 4 {
		s := graph.NewScope(graph.Autocast)
		x := s.Use(graph.Constant(tensor.FromFloat32(dev, []float32{1, -2, 0.5, 3, 1, -1}, 2, 3)))
		y := s.Use(graph.Constant(tensor.FromInt32(dev, []int32{0, 1}, 2)))
		loss := nn.CrossEntropy(model.Forward(x), y, 0) // float32
		if err := graph.Backward(scaler.Scale(loss)); err != nil {
			panic(err)
		}
		if step == 1 { // an overflow, as float16 gradients may have
			model.Bias.SetGrad(tensor.FromFloat32(dev, []float32{float32(math.Inf(1)), 0}))
		}
		stepped, err := scaler.Step(opt)
		if err != nil {
			panic(err)
		}
		if err := scaler.Update(); err != nil {
			panic(err)
		}
		opt.ZeroGrad()
		s.Close()
		fmt.Printf("step %d: stepped %v, scale now %g\n", step, stepped, scaler.CurrentScale())
	}
	// Output:
	// step 0: stepped true, scale now 1024
	// step 1: stepped false, scale now 512
	// step 2: stepped true, scale now 512
	// step 3: stepped true, scale now 1024
}
