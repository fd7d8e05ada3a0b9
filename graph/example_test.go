package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// The gradient of y = Σ (x² + 3x) is 2x + 3, accumulated into x's Grad.
func ExampleBackward() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	x := graph.Param(tensor.FromFloat32(dev, []float32{1, 2, 3}))
	defer x.Release()

	sq := graph.Mul(x, x)
	lin := x.MulScalar(3)
	y := graph.Add(sq, lin)
	loss := y.Sum(nil, false)
	// The graph keeps what the backward pass needs: the intermediate
	// values can go at once.
	sq.Release()
	lin.Release()
	y.Release()
	defer loss.Release()

	if err := graph.Backward(loss); err != nil {
		panic(err)
	}
	l, _ := loss.Item()
	g, _ := x.Grad().Float32s()
	fmt.Println("loss:", l)
	fmt.Println("dloss/dx:", g)
	// Output:
	// loss: 32
	// dloss/dx: [5 7 9]
}

// With CreateGraph the gradient is itself recorded, so it can be
// differentiated again: for y = x³, dy/dx = 3x² and d²y/dx² = 6x.
func ExampleGrad_createGraph() {
	dev, _ := tensor.Open("cpu")
	x := graph.Param(tensor.FromFloat32(dev, []float32{1.5}))
	defer x.Release()

	sq := graph.Mul(x, x)
	y := graph.Mul(sq, x)
	sq.Release()
	defer y.Release()

	dy, err := graph.Grad([]*graph.Value{y}, []*graph.Value{x}, nil, graph.CreateGraph)
	if err != nil {
		panic(err)
	}
	defer dy[0].Release()
	d2y, err := graph.Grad([]*graph.Value{dy[0]}, []*graph.Value{x}, nil)
	if err != nil {
		panic(err)
	}
	defer d2y[0].Release()

	first, _ := dy[0].Item()
	second, _ := d2y[0].Item()
	fmt.Println("dy/dx:", first)
	fmt.Println("d²y/dx²:", second)
	// Output:
	// dy/dx: 6.75
	// d²y/dx²: 9
}

// NoGrad evaluates without recording: nothing is saved for a backward
// pass, and the result needs no gradient.
func ExampleNoGrad() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{2, -1}))
	x := graph.Constant(tensor.FromFloat32(dev, []float32{3, 4}))
	defer w.Release()
	defer x.Release()

	train := graph.Mul(w, x)
	defer train.Release()
	var eval *graph.Value
	graph.NoGrad(func() {
		eval = graph.Mul(w, x)
	})
	defer eval.Release()

	values, _ := eval.Float32s()
	fmt.Println(values)
	fmt.Println("recorded:", train.RequiresGrad())
	fmt.Println("under NoGrad:", eval.RequiresGrad())
	// Output:
	// [6 -4]
	// recorded: true
	// under NoGrad: false
}
