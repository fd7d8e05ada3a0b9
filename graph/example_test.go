package graph_test

import (
	"fmt"
	"strings"

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

// A NoGrad scope evaluates without recording: nothing is saved for a
// backward pass and the results need no gradient — for the computation
// that flows from the scope's members only, so another goroutine training
// the same parameters meanwhile records as usual.
func ExampleNoGrad() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{2, -1}))
	x := graph.Constant(tensor.FromFloat32(dev, []float32{3, 4}))
	defer w.Release()
	defer x.Release()

	train := graph.Mul(w, x)
	defer train.Release()

	s := graph.NewScope(graph.NoGrad)
	eval := graph.Mul(w, s.Use(x.Detach())) // x stays ours: s gets a view
	values, _ := eval.Float32s()
	fmt.Println(values)
	fmt.Println("recorded:", train.RequiresGrad())
	fmt.Println("under no-grad:", eval.RequiresGrad())
	s.Close() // releases eval and the view of x
	// Output:
	// [6 -4]
	// recorded: true
	// under no-grad: false
}

// A Scope releases, when closed, every value computed from its members
// except those kept: a training step needs no Release calls.
func ExampleScope() {
	dev, _ := tensor.Open("cpu")
	w := graph.Param(tensor.FromFloat32(dev, []float32{0.5, -1}))
	defer w.Release()
	before := dev.Stats().LiveBytes

	for step := range 3 {
		s := graph.NewScope()
		x := s.Use(graph.Constant(tensor.FromFloat32(dev, []float32{1, 2})))
		y := s.Use(graph.Constant(tensor.FromFloat32(dev, []float32{1, 1})))
		diff := graph.Sub(graph.Mul(x, w), y) // members: computed from x
		loss := graph.Mul(diff, diff).Sum(nil, false)
		if err := graph.Backward(loss); err != nil {
			panic(err)
		}
		l, _ := loss.Item()
		s.Close() // x, y, diff, the product, loss: all released
		g, _ := w.Grad().Float32s()
		fmt.Printf("step %d loss %.2f grad %v\n", step, l, g)
	}
	w.ZeroGrad()
	fmt.Println("memory back to where it was:", dev.Stats().LiveBytes == before)
	// Output:
	// step 0 loss 9.25 grad [-1 -12]
	// step 1 loss 9.25 grad [-2 -24]
	// step 2 loss 9.25 grad [-3 -36]
	// memory back to where it was: true
}

// Tidy runs a function in a scope and keeps only what it returns.
func ExampleTidy() {
	dev, _ := tensor.Open("cpu")
	x := graph.Constant(tensor.FromFloat32(dev, []float32{1, 2, 3}))
	defer x.Release()

	norm := graph.Tidy(func(s *graph.Scope) *graph.Value {
		v := s.Use(x.Detach())
		return graph.Mul(v, v).Sum(nil, false).Sqrt() // the square and sum are released
	})
	defer norm.Release()
	n, _ := norm.Item()
	fmt.Printf("%.4f\n", n)
	// Output:
	// 3.7417
}

// A Function with a hand-written gradient: softplus, log(1 + eˣ), whose
// derivative is the logistic sigmoid of x. Backward uses graph operations,
// so the second derivative works too.
func ExampleFunction() {
	softplus := &graph.Function{
		Name:       "Softplus",
		SaveInputs: true,
		Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
			// A tensor scope releases the temporaries eˣ and 1 + eˣ.
			return tensor.Tidy(func(s *tensor.Scope) *tensor.Tensor {
				return s.Use(in[0].Exp()).AddScalar(1).Log()
			}), nil
		},
		Backward: func(c *graph.Context, g *graph.Value) []*graph.Value {
			return []*graph.Value{graph.Mul(g, c.Input(0).Sigmoid())}
		},
	}
	dev, _ := tensor.Open("cpu")
	x := graph.Param(tensor.FromFloat64(dev, []float64{0, 2}))
	defer x.Release()

	y := softplus.Apply(x).Sum(nil, false)
	defer y.Release()
	if err := graph.Backward(y); err != nil {
		panic(err)
	}
	g, _ := x.Grad().Float64s()
	fmt.Printf("softplus'(0) = %.4f, softplus'(2) = %.4f\n", g[0], g[1])

	err := graph.GradCheck(func(in []*graph.Value) *graph.Value { return softplus.Apply(in[0]) },
		[]*graph.Value{x}, graph.GradCheckOptions{SecondOrder: true})
	fmt.Println("gradcheck:", err)
	// Output:
	// softplus'(0) = 0.5000, softplus'(2) = 0.8808
	// gradcheck: <nil>
}

// GradCheck compares the graph's gradients with finite differences and
// names the first element that disagrees.
func ExampleGradCheck() {
	dev, _ := tensor.Open("cpu")
	a := graph.Param(tensor.FromFloat64(dev, []float64{1, -2, 0.5, 3}, 2, 2))
	b := graph.Param(tensor.FromFloat64(dev, []float64{0.3, 0.7}, 2, 1))
	defer a.Release()
	defer b.Release()

	f := func(in []*graph.Value) *graph.Value { return graph.MatMul(in[0], in[1]).Tanh() }
	fmt.Println(graph.GradCheck(f, []*graph.Value{a, b}, graph.GradCheckOptions{SecondOrder: true}))

	// A wrong gradient: ReLU's rule used for Abs (abs'(x) is −1 below 0).
	wrongAbs := &graph.Function{
		Name:       "WrongAbs",
		SaveInputs: true,
		Forward: func(in []*tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
			return in[0].Abs(), nil
		},
		Backward: func(c *graph.Context, g *graph.Value) []*graph.Value {
			pos := c.Input(0).GtScalar(0).Cast(tensor.Float64)
			return []*graph.Value{graph.Mul(g, pos)}
		},
	}
	err := graph.GradCheck(func(in []*graph.Value) *graph.Value { return wrongAbs.Apply(in[0]) },
		[]*graph.Value{a}, graph.GradCheckOptions{})
	fmt.Println(err != nil)
	fmt.Println(strings.Split(err.Error(), ":")[1])
	// Output:
	// <nil>
	// true
	//  input 0, element 1 [0 1]
}
