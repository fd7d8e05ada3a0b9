package data_test

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/tensor"
)

// An epoch over a dataset read from CSV: a different seeded order each
// epoch, one device batch at a time.
func Example() {
	csv := "0,0,1\n1,1,0\n0,1,1\n1,0,0\n1,1,1\n"
	d, err := data.ReadCSV(strings.NewReader(csv), -1, []int{2}) // label last
	if err != nil {
		panic(err)
	}
	dev, _ := tensor.Open("cpu")
	for epoch := range 2 {
		for _, idx := range data.Batches(d.Len(), 2, true, uint64(epoch), true) {
			x, y := d.Batch(dev, idx)
			fmt.Println("epoch", epoch, "x", x.Shape(), "y", y.Shape())
			x.Release()
			y.Release()
		}
	}
	// Output:
	// epoch 0 x [2 2] y [2]
	// epoch 0 x [2 2] y [2]
	// epoch 1 x [2 2] y [2]
	// epoch 1 x [2 2] y [2]
}

func ExampleBatches() {
	fmt.Println(data.Batches(7, 3, false, 0, false))
	fmt.Println(data.Batches(7, 3, false, 0, true))
	fmt.Println(data.Batches(7, 3, true, 1, false))
	// Output:
	// [[0 1 2] [3 4 5] [6]]
	// [[0 1 2] [3 4 5]]
	// [[1 0 2] [3 5 4] [6]]
}

func ExampleDataset_Split() {
	d := &data.Dataset{X: make([]float32, 10), Y: make([]int32, 10), Shape: []int{1}}
	train, test := d.Split(0.2, 42)
	fmt.Println(train.Len(), test.Len())
	// Output: 8 2
}

// A regression dataset: float targets instead of class labels, here two
// numbers per sample.
func ExampleDataset_targets() {
	d := &data.Dataset{
		X:           []float32{0, 1, 2, 3, 4, 5},
		Shape:       []int{2},
		Targets:     []float32{0.5, -1, 1.5, -2, 2.5, -3},
		TargetShape: []int{2},
	}
	dev, _ := tensor.Open("cpu")
	x, y := d.Batch(dev, []int{2, 0})
	defer x.Release()
	defer y.Release()
	ys, _ := y.Float32s()
	fmt.Println(d.Len(), x.Shape(), y.Shape(), y.DType(), ys)
	// Output: 3 [2 2] [2 2] float32 [2.5 -3 0.5 -1]
}
