package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// In an Autocast scope a matrix product runs in float16 where the device
// runs float16 (the CPU backend does), a softmax in float32, and the
// gradient reaches the float32 weight in float32.
func ExampleAutocast() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{1, 0.5, -1, 2}, 2, 2))
	defer w.Release()

	s := graph.NewScope(graph.Autocast)
	defer s.Close()
	x := s.Use(graph.Constant(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2)))
	logits := graph.MatMul(x, w)
	probs := logits.Softmax(1)
	loss := probs.Square().MeanAll()
	fmt.Println("logits:", logits.DType())
	fmt.Println("softmax:", probs.DType())
	if err := graph.Backward(loss); err != nil {
		panic(err)
	}
	fmt.Println("weight gradient:", w.Grad().DType())
	// Output:
	// logits: float16
	// softmax: float32
	// weight gradient: float32
}

// Checkpoint keeps only a block's input: its activations are recomputed
// in the backward pass, and the gradients are those of the block itself.
func ExampleCheckpoint() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{0.5, -1, 2, 1}, 2, 2))
	defer w.Release()
	x := graph.Constant(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2))
	defer x.Release()

	block := func(in []*graph.Value) *graph.Value {
		h := graph.MatMul(in[0], w)
		defer h.Release()
		return h.Tanh()
	}
	for _, checkpointed := range []bool{false, true} {
		var y *graph.Value
		if checkpointed {
			y = graph.Checkpoint(block, []*graph.Value{x})
		} else {
			y = block([]*graph.Value{x})
		}
		loss := y.SumAll()
		if err := graph.Backward(loss); err != nil {
			panic(err)
		}
		g, _ := w.Grad().Float32s()
		fmt.Printf("checkpointed=%v: %.4f\n", checkpointed, g)
		w.ZeroGrad()
		loss.Release()
		y.Release()
	}
	// Output:
	// checkpointed=false: [0.0005 1.6799 0.0010 2.5198]
	// checkpointed=true: [0.0005 1.6799 0.0010 2.5198]
}
