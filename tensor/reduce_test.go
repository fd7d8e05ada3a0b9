package tensor

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// groups splits row-major values of shape into the groups a reduction over
// dims combines: one group per output element (kept axes in order), each
// in row-major order of the reduced axes.
func groups(values []float64, shape, dims []int) [][]float64 {
	reduced := make([]bool, len(shape))
	for _, d := range dims {
		if len(shape) > 0 {
			reduced[(d+len(shape))%len(shape)] = true
		}
	}
	if len(dims) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	}
	var keptShape []int
	for a, d := range shape {
		if !reduced[a] {
			keptShape = append(keptShape, d)
		}
	}
	out := make([][]float64, product(keptShape))
	coords := make([]int, len(shape))
	for _, v := range values {
		o := 0
		for a, c := range coords {
			if !reduced[a] {
				o = o*shape[a] + c
			}
		}
		out[o] = append(out[o], v)
		for a := len(shape) - 1; a >= 0; a-- {
			coords[a]++
			if coords[a] < shape[a] {
				break
			}
			coords[a] = 0
		}
	}
	return out
}

// reducedN is the number of elements each result of a reduction over
// dims combines.
func reducedN(shape, dims []int) int {
	n := 1
	for a, d := range shape {
		if len(dims) == 0 || slices.Contains(dims, a) || slices.Contains(dims, a-len(shape)) {
			n *= d
		}
	}
	return n
}

// reduceShape is the result shape of a reduction over dims.
func reduceShape(shape, dims []int, keepDim bool) []int {
	out := []int{}
	for a, d := range shape {
		isReduced := len(dims) == 0
		for _, r := range dims {
			if r == a || r == a-len(shape) {
				isReduced = true
			}
		}
		switch {
		case !isReduced:
			out = append(out, d)
		case keepDim:
			out = append(out, 1)
		}
	}
	return out
}

type reduceCase struct {
	name   string
	op     func(t *Tensor, dims []int, keepDim bool) *Tensor
	ref    func(g []float64) float64
	tol    func(dtype DType, g []float64, want float64) float64
	lo, hi float64
	int32  bool // results are Int32 indices
}

func sumOf(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += v
	}
	return s
}

func absSum(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += math.Abs(v)
	}
	return s
}

func meanOf(g []float64) float64 { return sumOf(g) / float64(len(g)) }

func varianceOf(g []float64, correction int) float64 {
	m, s := meanOf(g), 0.0
	for _, v := range g {
		s += (v - m) * (v - m)
	}
	return s / float64(max(0, len(g)-correction))
}

func exactTol(DType, []float64, float64) float64 { return 0 }

// A sum-like result: √n·ε·Σ|x|; relative ones (prod, var) scale |want|.
func sumLikeTol(dtype DType, g []float64, want float64) float64 {
	return sumTol(dtype, len(g), absSum(g), want)
}

func meanTol(dtype DType, g []float64, want float64) float64 {
	return sumTol(dtype, len(g), absSum(g), want)/float64(max(1, len(g))) + 2*epsilon[dtype]*math.Abs(want)
}

func relativeTol(dtype DType, g []float64, want float64) float64 {
	return (2*float64(len(g))+8)*epsilon[dtype]*math.Abs(want) + tolerances[dtype][familyExact].abs
}

// The two-pass variance has the error of a sum of squares of deviations;
// the float16 mean rounds each deviation by 2⁻¹¹ of the mean as well.
func varianceTol(dtype DType, g []float64, want float64) float64 {
	m := math.Abs(meanOf(g))
	return 8*math.Sqrt(float64(len(g))+1)*epsilon[dtype]*(math.Abs(want)+m*m) + tolerances[dtype][familyTranscendental].abs
}

func logSumExpTol(dtype DType, g []float64, want float64) float64 {
	return tolFor(dtype, familyTranscendental)(want) + 4*math.Sqrt(float64(len(g)+1))*epsilon[dtype]
}

func argOf(g []float64, better func(a, b float64) bool) float64 {
	best := 0
	for i, v := range g {
		if math.IsNaN(g[best]) {
			break
		}
		if math.IsNaN(v) || better(v, g[best]) {
			best = i
		}
	}
	return float64(best)
}

var reduceCases = []reduceCase{
	{"Sum", (*Tensor).Sum, sumOf, sumLikeTol, -4, 4, false},
	{"Prod", (*Tensor).Prod, func(g []float64) float64 {
		p := 1.0
		for _, v := range g {
			p *= v
		}
		return p
	}, relativeTol, 0.5, 1.5, false},
	{"Max", (*Tensor).Max, func(g []float64) float64 { return slices.Max(g) }, exactTol, -4, 4, false},
	{"Min", (*Tensor).Min, func(g []float64) float64 { return slices.Min(g) }, exactTol, -4, 4, false},
	{"LogSumExp", (*Tensor).LogSumExp, func(g []float64) float64 {
		if len(g) == 0 {
			return math.Inf(-1)
		}
		m, s := slices.Max(g), 0.0
		for _, v := range g {
			s += math.Exp(v - m)
		}
		return m + math.Log(s)
	}, logSumExpTol, -4, 4, false},
	{"Mean", (*Tensor).Mean, meanOf, meanTol, -4, 4, false},
	{"ArgMax", (*Tensor).ArgMax, func(g []float64) float64 { return argOf(g, func(a, b float64) bool { return a > b }) }, exactTol, -4, 4, true},
	{"ArgMin", (*Tensor).ArgMin, func(g []float64) float64 { return argOf(g, func(a, b float64) bool { return a < b }) }, exactTol, -4, 4, true},
	{"Var", func(t *Tensor, dims []int, keepDim bool) *Tensor { return t.Var(dims, 1, keepDim) },
		func(g []float64) float64 { return varianceOf(g, 1) }, varianceTol, -4, 4, false},
	{"Std", func(t *Tensor, dims []int, keepDim bool) *Tensor { return t.Std(dims, 0, keepDim) },
		func(g []float64) float64 { return math.Sqrt(varianceOf(g, 0)) }, varianceTol, -4, 4, false},
}

var reduceShapes = []struct {
	shape []int
	dims  []int
}{
	{[]int{1}, nil}, {[]int{7}, nil}, {[]int{1000}, []int{0}}, {[]int{1025}, []int{-1}},
	{[]int{3, 4, 5}, []int{1}}, {[]int{3, 4, 5}, []int{0, 2}}, {[]int{3, 4, 5}, []int{-1}}, {[]int{3, 4, 5}, nil},
	{[]int{2, 3, 4, 5}, []int{3, 1}}, {[]int{4, 1}, []int{1}}, {[]int{}, nil}, {[]int{}, []int{0}},
	{[]int{0, 3}, []int{1}}, {[]int{3, 0}, []int{1}}, {[]int{0}, nil},
}

func TestReductions(t *testing.T) { forEachDevice(t, testReductions) }

func testReductions(t *testing.T, dev *Device) {
	for _, c := range reduceCases {
		t.Run(c.name, func(t *testing.T) {
			probe := probeUnary(dev, func(x *Tensor) *Tensor { return c.op(x, nil, false) })
			forEachDType(t, dev, c.name, probe, func(t *testing.T, dtype DType) {
				for _, s := range reduceShapes {
					noIdentity := c.int32 || c.name == "Max" || c.name == "Min"
					if noIdentity && reducedN(s.shape, s.dims) == 0 && product(reduceShape(s.shape, s.dims, false)) > 0 {
						continue // misuse: tested in TestReductionErrors
					}
					if c.int32 && len(s.dims) > 1 {
						continue // one dim or all
					}
					for _, keepDim := range []bool{false, true} {
						for _, l := range []layout{packed, transposed} {
							t.Run(fmt.Sprintf("%v/%v/keep=%v/%v", s.shape, s.dims, keepDim, l), func(t *testing.T) {
								testReduction(t, dev, c, dtype, s.shape, s.dims, keepDim, l)
							})
						}
					}
				}
			})
		})
	}
}

func testReduction(t *testing.T, dev *Device, c reduceCase, dtype DType, shape, dims []int, keepDim bool, l layout) {
	lo, hi := c.lo, c.hi
	if dtype.IsInteger() && c.name == "Prod" {
		lo, hi = -1.4, 1.4 // −1, 0 and 1, so that products stay in range
	}
	values := randomValues(newRand(t), dtype, product(shape), lo, hi)
	x := uploadAs(dev, dtype, values, shape, l)
	got := c.op(x, dims, keepDim)
	defer releaseAll(x, got)

	require.Equal(t, reduceShape(shape, dims, keepDim), got.Shape())
	rt := dtype
	switch {
	case c.int32:
		rt = Int32
	case dtype.IsInteger() && (c.name == "Mean" || c.name == "Var" || c.name == "Std"):
		rt = Float32
	}
	require.Equal(t, rt, got.DType())
	gs := groups(values, shape, dims)
	want := make([]float64, len(gs))
	for i, g := range gs {
		want[i] = c.ref(g)
		if rt.IsInteger() && !c.int32 {
			want[i] = float64(int32(want[i]))
		}
	}
	gotValues := read64(t, got)
	checkClose(t, want, gotValues, func(i int) float64 { return c.tol(rt, gs[i], want[i]) })
}

// The sums of ≥ 1M elements must stay accurate: a naive float32 running
// sum of 2²⁴+ ones stalls at 2²⁴, and of random values drifts by far more
// than the √n bound.
func TestLargeReductions(t *testing.T) { forEachDevice(t, testLargeReductions) }

func testLargeReductions(t *testing.T, dev *Device) {
	t.Run("Sum of 2^24+1025 ones", func(t *testing.T) {
		n := 1<<24 + 1025
		ones := Ones(dev, n)
		sum := ones.Sum(nil, false)
		defer releaseAll(ones, sum)
		got, err := sum.Item()
		require.NoError(t, err)
		assert.InDelta(t, float64(n), got, 2, "float32 spacing at 2^24 is 2")
	})
	t.Run("random 1000x1025", func(t *testing.T) {
		shape := []int{1000, 1025}
		values := randomValues(newRand(t), Float32, product(shape), 0, 1)
		x := upload(dev, Float32, values, shape...)
		sum, mean, variance := x.Sum(nil, false), x.Mean(nil, false), x.Var(nil, 1, false)
		rows := x.Sum([]int{1}, false)
		cols := x.Mean([]int{0}, false)
		defer releaseAll(x, sum, mean, variance, rows, cols)

		g := groups(values, shape, nil)[0]
		checkClose(t, []float64{sumOf(g)}, read64(t, sum), func(int) float64 { return sumLikeTol(Float32, g, sumOf(g)) })
		checkClose(t, []float64{meanOf(g)}, read64(t, mean), func(int) float64 { return meanTol(Float32, g, meanOf(g)) })
		v := varianceOf(g, 1)
		checkClose(t, []float64{v}, read64(t, variance), func(int) float64 { return varianceTol(Float32, g, v) })
		for _, r := range []struct {
			got  *Tensor
			dims []int
			f    func([]float64) float64
			tol  func(DType, []float64, float64) float64
		}{{rows, []int{1}, sumOf, sumLikeTol}, {cols, []int{0}, meanOf, meanTol}} {
			gs := groups(values, shape, r.dims)
			want := make([]float64, len(gs))
			for i, g := range gs {
				want[i] = r.f(g)
			}
			checkClose(t, want, read64(t, r.got), func(i int) float64 { return r.tol(Float32, gs[i], want[i]) })
		}
	})
}

func TestReductionIdentities(t *testing.T) { forEachDevice(t, testReductionIdentities) }

func testReductionIdentities(t *testing.T, dev *Device) {
	x := Zeros(dev, 3, 0)
	sum, prod, lse, mean := x.Sum([]int{1}, false), x.Prod([]int{1}, true), x.LogSumExp([]int{1}, false), x.Mean(nil, false)
	emptyMax := x.Max([]int{0}, false) // reduces 3 elements into an empty result: fine
	defer releaseAll(x, sum, prod, lse, mean, emptyMax)
	assert.Equal(t, []float64{0, 0, 0}, read64(t, sum))
	assert.Equal(t, []int{3, 1}, prod.Shape())
	assert.Equal(t, []float64{1, 1, 1}, read64(t, prod))
	assert.Equal(t, []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}, read64(t, lse))
	assert.True(t, math.IsNaN(read64(t, mean)[0]), "mean of nothing is NaN, as torch")
	assert.Equal(t, []int{0}, emptyMax.Shape())

	one := FromFloat32(dev, []float32{3})
	v := one.Var(nil, 1, false)
	v0 := one.Var(nil, 0, false)
	defer releaseAll(one, v, v0)
	assert.True(t, math.IsNaN(read64(t, v)[0]), "unbiased variance of one element is NaN, as torch")
	assert.Equal(t, []float64{0}, read64(t, v0))
}

func TestReductionErrors(t *testing.T) {
	dev := openCPU(t)
	x := Zeros(dev, 2, 3)
	empty := Zeros(dev, 3, 0)
	defer releaseAll(x, empty)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { x.Sum([]int{2}, false) }, "tensor: Sum: dim 2 is out of range for rank 2 (want -2 … 1)"},
		{func() { x.Mean([]int{-3}, false) }, "tensor: Mean: dim -3 is out of range for rank 2 (want -2 … 1)"},
		{func() { x.Max([]int{1, -1}, false) }, "tensor: Max: dim -1 appears more than once in [1 -1]"},
		{func() { x.ArgMax([]int{0, 1}, false) }, "tensor: ArgMax: reduces one dim or all (nil), got [0 1]"},
		{func() { empty.Max([]int{1}, false) }, "tensor: Max: reducing [3 0] over dims [1]: the reduction of no elements has no identity"},
		{func() { empty.ArgMin(nil, false) }, "tensor: ArgMin: reducing [3 0] over dims []: the reduction of no elements has no identity"},
	} {
		assert.Equal(t, tc.want, panicMessage(t, tc.f))
	}
}
