package tensor_test

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/tensor"
)

// Sort orders each row and says where every value came from; NaN sorts
// after +Inf, and a stable sort keeps equal values (here the two 1s) in
// their input order.
func ExampleTensor_Sort() {
	dev, _ := tensor.Open("cpu")
	nan := float32(math.NaN())
	x := tensor.FromFloat32(dev, []float32{3, nan, 1, -2, 1, 0}, 2, 3)
	defer x.Release()

	values, indices := x.Sort(-1, false, true)
	defer values.Release()
	defer indices.Release()
	v, _ := values.Float32s()
	i, _ := indices.Int32s()
	fmt.Println(v, i)
	// Output: [1 3 NaN -2 0 1] [2 0 1 0 2 1]
}

// TopK picks the k largest values of each row (NaN would count as the
// largest), for beam search or top-k sampling; KthValue the k-th
// smallest.
func ExampleTensor_TopK() {
	dev, _ := tensor.Open("cpu")
	logits := tensor.FromFloat32(dev, []float32{0.1, 2.5, -1, 0.7, 1.9}, 5)
	defer logits.Release()

	top, at := logits.TopK(2, 0, true, true)
	median, medianAt := logits.KthValue(3, 0, false)
	for _, t := range []*tensor.Tensor{top, at, median, medianAt} {
		defer t.Release()
	}
	v, _ := top.Float32s()
	i, _ := at.Int32s()
	m, _ := median.Item()
	mi, _ := medianAt.Item()
	fmt.Println(v, i, m, mi)
	// Output: [2.5 1.9] [1 4] 0.699999988079071 3
}

// Cumsum and Cumprod accumulate along a dim; LogCumSumExp is the stable
// running log-sum-exp of log-probabilities.
func ExampleTensor_Cumsum() {
	dev, _ := tensor.Open("cpu")
	x := tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 4)
	defer x.Release()

	sum, prod := x.Cumsum(0), x.Cumprod(0)
	lse := x.LogCumSumExp(0)
	defer sum.Release()
	defer prod.Release()
	defer lse.Release()
	s, _ := sum.Float32s()
	p, _ := prod.Float32s()
	l, _ := lse.Float32s()
	fmt.Println(s, p)
	fmt.Printf("%.4f\n", l)
	// Output:
	// [1 3 6 10] [1 2 6 24]
	// [1.0000 2.3133 3.4076 4.4402]
}
