package tensor_test

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

func ExampleMatMul() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	a := tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := tensor.FromFloat32(dev, []float32{1, 0, 0, 1, 1, 1}, 3, 2)
	defer a.Release()
	defer b.Release()

	c := tensor.MatMul(a, b)
	defer c.Release()
	values, err := c.Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Shape(), values)
	// Output: [2 2] [4 5 10 11]
}

// Batched matmul broadcasts the batch axes: one [3, 2] matrix multiplies
// each of the 4 matrices of a [4, 2, 3] batch, without copying it 4 times.
func ExampleMatMul_batched() {
	dev, _ := tensor.Open("cpu")
	w := tensor.Ones(dev, 3, 2)
	r := tensor.Arange(dev, tensor.Float32, 0, 24, 1)
	x := r.Reshape(4, 2, 3) // a view of r
	y := tensor.MatMul(x, w)
	for _, t := range []*tensor.Tensor{w, r, x, y} {
		defer t.Release()
	}

	values, _ := y.Float32s()
	fmt.Println(y.Shape(), values[:4])
	// Output: [4 2 2] [3 3 12 12]
}

// Binary ops broadcast as NumPy: a column [3, 1] and a row [4] combine
// into a [3, 4] table.
func ExampleAdd_broadcasting() {
	dev, _ := tensor.Open("cpu")
	col := tensor.FromFloat32(dev, []float32{0, 10, 20}, 3, 1)
	row := tensor.FromFloat32(dev, []float32{1, 2, 3, 4})
	table := col.Add(row)
	defer col.Release()
	defer row.Release()
	defer table.Release()

	values, _ := table.Float32s()
	fmt.Println(table.Shape(), values)
	// Output: [3 4] [1 2 3 4 11 12 13 14 21 22 23 24]
}

// Reductions take the dims to reduce (negative counts from the end, nil
// means all) and whether to keep them as size-1 axes.
func ExampleTensor_Sum() {
	dev, _ := tensor.Open("cpu")
	x := tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	rows := x.Sum([]int{-1}, false)
	cols := x.Mean([]int{0}, true)
	all := x.Sum(nil, false)
	best := x.ArgMax([]int{1}, false)
	for _, t := range []*tensor.Tensor{x, rows, cols, all, best} {
		defer t.Release()
	}

	r, _ := rows.Float32s()
	c, _ := cols.Float32s()
	a, _ := all.Item()
	b, _ := best.Int32s()
	fmt.Println(rows.Shape(), r)
	fmt.Println(cols.Shape(), c)
	fmt.Println(all.Shape(), a)
	fmt.Println(best.DType(), b)
	// Output:
	// [2] [6 15]
	// [1 3] [2.5 3.5 4.5]
	// [] 21
	// int32 [2 2]
}

// Transpose, Slice, Expand and friends are views: they share the input's
// memory and cost no kernel. Kernels read the strides directly;
// Contiguous packs a view when a caller needs dense memory.
func ExampleTensor_Transpose() {
	dev, _ := tensor.Open("cpu")
	r := tensor.Arange(dev, tensor.Float32, 0, 6, 1)
	x := r.Reshape(2, 3)
	xt := x.Transpose(0, 1)
	every2nd := xt.Slice(0, 0, 3, 2)
	for _, t := range []*tensor.Tensor{r, x, xt, every2nd} {
		defer t.Release()
	}

	values, _ := every2nd.Float32s()
	fmt.Println(xt.Shape(), xt.Strides(), xt.IsContiguous())
	fmt.Println(every2nd.Shape(), every2nd.Strides(), values)
	// Output:
	// [3 2] [1 3] false
	// [2 2] [2 3] [0 3 2 5]
}

func ExampleCatch() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	a := tensor.Zeros(dev, 2, 3)
	b := tensor.Zeros(dev, 3, 2)
	defer a.Release()
	defer b.Release()

	err = tensor.Catch(func() { a.Add(b) })
	fmt.Println(err)
	// Output: tensor: Add: shape mismatch: [2 3] vs [3 2] (not broadcastable)
}

// An op a device cannot run for a dtype panics with an *Error wrapping
// hal.ErrUnsupported; Supports says so beforehand.
func ExampleSupports() {
	dev, _ := tensor.Open("cpu")
	fmt.Println(tensor.Supports(dev, "Exp", tensor.Float64), tensor.Supports(dev, "Pow", tensor.Int32))

	i := tensor.FromInt32(dev, []int32{2, 3})
	defer i.Release()
	err := tensor.Catch(func() { i.Pow(i) })
	fmt.Println(errors.Is(err, hal.ErrUnsupported))
	// Output:
	// true false
	// true
}

func ExampleOpen() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	again, _ := tensor.Open("cpu")
	fmt.Println(dev.Name(), dev == again)

	_, err = tensor.Open("webgpu:x")
	fmt.Println(err)
	// Output:
	// cpu true
	// tensor: Open: invalid adapter index "x" in device name "webgpu:x": want a number ≥ 0
}

// A Generator's stream depends only on its seed and the order of draws,
// so every device draws the same numbers.
func ExampleGenerator() {
	dev, _ := tensor.Open("cpu")
	g := tensor.NewGenerator(42)
	a := g.Rand(dev, 3)
	g.SetOffset(0)
	b := g.Rand(dev, 3)
	defer a.Release()
	defer b.Release()

	x, _ := a.Float32s()
	y, _ := b.Float32s()
	fmt.Println(x[0] == y[0] && x[2] == y[2], g.Offset())
	// Output: true 3
}

// A scope per iteration releases every intermediate of the loop body: no
// Release calls, and memory stays at the working set.
func ExampleScope() {
	dev, _ := tensor.Open("cpu")
	w := tensor.FromFloat32(dev, []float32{0.5, 0, 0, 0.5}, 2, 2)
	defer w.Release()
	x := tensor.FromFloat32(dev, []float32{8, -4}, 1, 2)
	before := dev.Stats().LiveBytes

	for range 3 {
		s := tensor.NewScope()
		next := s.Use(x).MatMul(w).Add(s.Use(tensor.Ones(dev, 1, 2))) // x·w + 1
		s.Keep(next)
		s.Close() // releases the old x, the product and the ones
		x = next
	}
	v, _ := x.Float32s()
	fmt.Println(v)
	x.Release()
	fmt.Println("back to where it was:", dev.Stats().LiveBytes <= before)
	// Output:
	// [2.75 1.25]
	// back to where it was: true
}

// Tidy runs a function in a scope and keeps only its result.
func ExampleTidy() {
	dev, _ := tensor.Open("cpu")
	x := tensor.FromFloat32(dev, []float32{3, 4}, 2)
	defer x.Release()

	norm := tensor.Tidy(func(s *tensor.Scope) *tensor.Tensor {
		v := s.Use(x.Reshape(2)) // a view: x stays the caller's
		return v.Square().Sum(nil, false).Sqrt()
	})
	defer norm.Release()
	n, _ := norm.Item()
	fmt.Println(n)
	// Output:
	// 5
}

// A loop that keeps only a few results alive calls Flush before it
// releases the older ones: their work is submitted, so the GPU computes
// and stores every iteration's result (a lazy engine skips the stores of
// results released before they ran), and nothing waits until the Sync.
func ExampleDevice_Flush() {
	dev, err := tensor.Open("cpu") // on the CPU, Flush does nothing
	if err != nil {
		panic(err)
	}
	x := tensor.FromFloat32(dev, []float32{1, 2, 3}, 3)
	defer x.Release()
	var ring []*tensor.Tensor
	for range 10 {
		ring = append(ring, x.Add(x))
		if len(ring) > 2 {
			if err := dev.Flush(); err != nil {
				panic(err)
			}
			ring[0].Release()
			ring = ring[1:]
		}
	}
	if err := dev.Sync(); err != nil {
		panic(err)
	}
	last, err := ring[len(ring)-1].Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Println(len(ring), last)
	for _, r := range ring {
		r.Release()
	}
	// Output:
	// 2 [2 4 6]
}
