package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// The gradient checks of Sort, TopK, KthValue and the scans (rules_sort.go).
// Random inputs have no ties, so the selections are locally constant
// permutations that finite differences see through. Cumprod is checked
// on rows with one zero and with two (its rule's three regimes), and
// LogCumSumExp on large logits, where e^(−y) would overflow.
func init() {
	zeros := []float64{0.7, -1.3, 0, 1.1, 0.9, -0.6, 1.4, -0.8, 0, 1.2, 0.5, -1.5}
	gradCases = append(gradCases,
		gradCase{name: "Sort", inputs: []input{{shape: []int{3, 7}}},
			f: func(in []*Value) *Value { v, _ := in[0].Sort(1, false, true); return v.Square() }},
		gradCase{name: "Sort/descending dim0", inputs: []input{{shape: []int{5, 3}}},
			f: func(in []*Value) *Value { v, _ := in[0].Transpose(0, 1).Sort(-1, true, false); return v.Square() }},
		gradCase{name: "TopK", inputs: []input{{shape: []int{4, 6}}},
			f: func(in []*Value) *Value { v, _ := in[0].TopK(3, -1, true, true); return v.Square() }},
		gradCase{name: "TopK/smallest dim0", inputs: []input{{shape: []int{7, 2}}},
			f: func(in []*Value) *Value { v, _ := in[0].TopK(2, 0, false, true); return v.Exp() }},
		gradCase{name: "KthValue", inputs: []input{{shape: []int{3, 5}}},
			f: func(in []*Value) *Value { v, _ := in[0].KthValue(2, 1, false); return v.Square() }},
		gradCase{name: "KthValue/keepDim", inputs: []input{{shape: []int{5, 2, 3}}},
			f: func(in []*Value) *Value { v, _ := in[0].KthValue(5, 0, true); return v.Square() }},
		gradCase{name: "Cumsum", inputs: []input{{shape: []int{3, 7}}},
			f: func(in []*Value) *Value { return in[0].Cumsum(1).Square() }},
		gradCase{name: "Cumsum/dim0 transposed", inputs: []input{{shape: []int{4, 5}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Cumsum(0).Square() }},
		gradCase{name: "Cumprod", inputs: []input{{shape: []int{3, 6}, lo: 0.5, hi: 1.5}},
			f: func(in []*Value) *Value { return in[0].Cumprod(-1).Square() }},
		gradCase{name: "Cumprod/zeros", inputs: []input{{shape: []int{2, 6}, values: zeros}},
			f: func(in []*Value) *Value { return in[0].Cumprod(1).Square() }},
		gradCase{name: "Cumprod/zeros dim0", inputs: []input{{shape: []int{6, 2}, values: zeros}},
			f: func(in []*Value) *Value { return in[0].Cumprod(0).Square() }},
		gradCase{name: "LogCumSumExp", inputs: []input{{shape: []int{3, 7}}},
			f: func(in []*Value) *Value { return in[0].LogCumSumExp(1).Square() }},
		// tol: float16 holds values near 800 to ±0.25, so each rounded
		// result moves e^(x−y) by up to a quarter (measured: 5× the
		// default float16 bound); float32 stays far inside it.
		gradCase{name: "LogCumSumExp/large", tol: 4e-3, inputs: []input{{shape: []int{2, 5}, lo: 200, hi: 800}},
			f: func(in []*Value) *Value { return in[0].LogCumSumExp(0).MulScalar(1e-3).Sin() }},
	)
}

// TestSortIndicesNeedNoGradient: the indices of Sort and the result of
// Argsort are constants, and a backward pass through the values puts g at
// the positions they came from.
func TestSortIndicesNeedNoGradient(t *testing.T) {
	dev := cpuDevice(t)
	x := Param(tensor.FromFloat64(dev, []float64{3, 1, 2}, 3))
	defer x.Release()
	v, idx := x.Sort(0, true, true)
	arg := x.Argsort(0, false, true)
	defer releaseValues([]*Value{v, idx, arg})
	assert.False(t, idx.RequiresGrad())
	assert.False(t, arg.RequiresGrad())
	w := tensor.FromFloat64(dev, []float64{10, 20, 30}, 3)
	weighted := v.Mul(Constant(w)).Sum(nil, false)
	defer weighted.Release()
	require.NoError(t, Backward(weighted))
	got, err := x.Grad().Float64s()
	require.NoError(t, err)
	// Sorted descending: 3 (position 0), 2 (2), 1 (1).
	assert.Equal(t, []float64{10, 30, 20}, got)
}

// TestCumprodGradientAtZeros checks the three regimes against the closed
// form on one row [2, 0, 3, 0, 5] with g = 1: ∂/∂x_0 = 1 (only y_0 has
// it with nonzero products), ∂/∂x_1 = 2 + 2·3 (y_1 and y_2 skip the
// zero), and 0 after the first zero.
func TestCumprodGradientAtZeros(t *testing.T) {
	dev := cpuDevice(t)
	x := Param(tensor.FromFloat64(dev, []float64{2, 0, 3, 0, 5}, 5))
	defer x.Release()
	y := x.Cumprod(0).Sum(nil, false)
	defer y.Release()
	require.NoError(t, Backward(y))
	got, err := x.Grad().Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 8, 0, 0, 0}, got)
	for _, v := range got {
		assert.False(t, math.IsNaN(v))
	}
}
