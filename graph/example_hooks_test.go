package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Hooks fire as each parameter's gradient becomes final: the second
// layer's weight (nearer the loss) before the first's.
func ExampleValue_OnGradReady() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	w1 := graph.Param(tensor.FromFloat32(dev, []float32{1, 2}))
	w2 := graph.Param(tensor.FromFloat32(dev, []float32{3, 4}))
	defer w1.Release()
	defer w2.Release()
	for name, w := range map[string]*graph.Value{"w1": w1, "w2": w2} {
		remove := w.OnGradReady(func(g *graph.Value) error {
			vs, err := g.Float32s()
			fmt.Println(name, "ready:", vs)
			return err
		})
		defer remove()
	}

	s := graph.NewScope()
	defer s.Close()
	h := graph.Mul(w1, s.Use(graph.Constant(tensor.FromFloat32(dev, []float32{5, 6})))).Tanh()
	loss := graph.Mul(h, w2).SumAll()
	if err := graph.Backward(loss); err != nil {
		panic(err)
	}
	// Output:
	// w2 ready: [0.9999092 1]
	// w1 ready: [0.0027233362 0]
}
