package tensor_test

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/tensor"
)

// Einsum names each axis with a letter: "bij,bjk->bik" is a batched
// matrix product, "ii" a trace, and labels missing from the output are
// summed.
func ExampleEinsum() {
	dev, _ := tensor.Open("cpu")
	a := tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2)
	b := tensor.FromFloat32(dev, []float32{1, 1, 0, 1}, 2, 2)
	prod := tensor.Einsum("ij,jk->ik", a, b)
	trace := tensor.Einsum("ii", a)
	colSums := tensor.Einsum("ij->j", a)
	for _, t := range []*tensor.Tensor{a, b, prod, trace, colSums} {
		defer t.Release()
	}
	p, _ := prod.Float32s()
	tr, _ := trace.Item()
	cs, _ := colSums.Float32s()
	fmt.Println(p, tr, cs)
	// Output: [1 3 3 7] 5 [4 6]
}

// Interpolate resizes images [N, C, H, W] as PyTorch's
// F.interpolate: here a 2×2 image doubles with nearest and bilinear
// sampling.
func ExampleInterpolate() {
	dev, _ := tensor.Open("cpu")
	img := tensor.FromFloat32(dev, []float32{0, 1, 2, 3}, 1, 1, 2, 2)
	near := tensor.Interpolate(img, tensor.InterpolateOptions{ScaleFactor: []float64{2}, Mode: tensor.InterpolateNearest})
	lin := tensor.Interpolate(img, tensor.InterpolateOptions{Size: []int{3, 3}, Mode: tensor.InterpolateBilinear, AlignCorners: true})
	for _, t := range []*tensor.Tensor{img, near, lin} {
		defer t.Release()
	}
	n, _ := near.Float32s()
	l, _ := lin.Float32s()
	fmt.Println(near.Shape(), n[:4])
	fmt.Println(lin.Shape(), l)
	// Output:
	// [1 1 4 4] [0 0 1 1]
	// [1 1 3 3] [0 0.5 1 1 1.5 2 2 2.5 3]
}

// MaskedFill writes a value where an Int32 mask is set (a comparison makes
// one), broadcasting the mask; MaskedSelect gathers the selected elements
// into a vector.
func ExampleTensor_MaskedFill() {
	dev, _ := tensor.Open("cpu")
	scores := tensor.FromFloat32(dev, []float32{0.5, -1, 2, 0.25, 3, -2}, 2, 3)
	pad := tensor.FromInt32(dev, []int32{0, 0, 1}, 3) // mask the last column of every row
	masked := scores.MaskedFill(pad, math.Inf(-1))
	positive := scores.MaskedSelect(scores.GtScalar(0))
	for _, t := range []*tensor.Tensor{scores, pad, masked, positive} {
		defer t.Release()
	}
	m, _ := masked.Float32s()
	p, _ := positive.Float32s()
	fmt.Println(m)
	fmt.Println(p)
	// Output:
	// [0.5 -1 -Inf 0.25 3 -Inf]
	// [0.5 2 0.25 3]
}

// Tril keeps the lower triangle of each matrix: a causal attention mask.
// Triu keeps the upper one.
func ExampleTensor_Tril() {
	dev, _ := tensor.Open("cpu")
	ones := tensor.Ones(dev, 3, 3)
	causal := ones.Tril(0)
	strict := ones.Triu(1)
	for _, t := range []*tensor.Tensor{ones, causal, strict} {
		defer t.Release()
	}
	c, _ := causal.Float32s()
	s, _ := strict.Float32s()
	fmt.Println(c)
	fmt.Println(s)
	// Output:
	// [1 0 0 1 1 0 1 1 1]
	// [0 1 1 0 0 1 0 0 0]
}

// Roll shifts elements with wrap-around; Flip reverses axes.
func ExampleTensor_Roll() {
	dev, _ := tensor.Open("cpu")
	x := tensor.Arange(dev, tensor.Float32, 0, 6, 1).Reshape(2, 3)
	rolled := x.Roll([]int{1}, 1)
	flat := x.Roll([]int{-1}) // no dims: rolled as one vector
	flipped := x.Flip(0, 1)
	for _, t := range []*tensor.Tensor{x, rolled, flat, flipped} {
		defer t.Release()
	}
	r, _ := rolled.Float32s()
	f, _ := flat.Float32s()
	p, _ := flipped.Float32s()
	fmt.Println(r, f, p)
	// Output: [2 0 1 5 3 4] [1 2 3 4 5 0] [5 4 3 2 1 0]
}
