package tensor

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refMatMul is torch.matmul in float64 over row-major operands, returning
// the result, Σ|a·b| per element (which bounds the rounding error) and the
// result shape.
func refMatMul(av []float64, sa []int, bv []float64, sb []int) (want, magnitude []float64, shape []int) {
	pa, pb := slices.Clone(sa), slices.Clone(sb)
	if len(sa) == 1 {
		pa = []int{1, sa[0]}
	}
	if len(sb) == 1 {
		pb = []int{sb[0], 1}
	}
	m, k, n := pa[len(pa)-2], pa[len(pa)-1], pb[len(pb)-1]
	batch := broadcastShapes("ref", pa[:len(pa)-2], pb[:len(pb)-2])
	full := append(slices.Clone(batch), m, n)
	aFull := append(slices.Clone(batch), m, k)
	bFull := append(slices.Clone(batch), k, n)
	want = make([]float64, product(full))
	magnitude = make([]float64, len(want))
	for i := range want {
		bi, rc := i/(m*n), i%(m*n)
		r, c := rc/n, rc%n
		for p := range k {
			x := av[broadcastIndex(aFull, pa, bi*m*k+r*k+p)]
			y := bv[broadcastIndex(bFull, pb, bi*k*n+p*n+c)]
			want[i] += x * y
			magnitude[i] += math.Abs(x * y)
		}
	}
	shape = slices.Clone(batch)
	if len(sa) > 1 {
		shape = append(shape, m)
	}
	if len(sb) > 1 {
		shape = append(shape, n)
	}
	return want, magnitude, shape
}

func matmulTol(dtype DType, k int, want, magnitude []float64) func(int) float64 {
	return func(i int) float64 { return sumTol(dtype, k, magnitude[i], want[i]) }
}

var matmulCases = [][2][]int{
	{{1, 1}, {1, 1}}, {{7, 7}, {7, 7}}, {{1, 1000}, {1000, 1}}, {{7, 1025}, {1025, 3}}, {{33, 65}, {65, 17}},
	{{1, 1}, {1, 1025}}, {{1025, 1}, {1, 1}},
	{{5}, {5}}, {{3, 4}, {4}}, {{4}, {2, 4, 3}}, {{2, 1, 3, 4}, {5, 4, 2}}, {{2, 3, 4, 5}, {2, 3, 5, 4}},
	{{3, 4}, {2, 4, 5}}, {{2, 0}, {0, 3}}, {{0, 3}, {3, 4}}, {{2, 3, 0}, {0, 2}},
}

func TestMatMul(t *testing.T) { forEachDevice(t, testMatMul) }

func testMatMul(t *testing.T, dev *Device) {
	forEachDType(t, dev, "MatMul", probeUnary(dev, func(x *Tensor) *Tensor {
		m := x.Reshape(1, 1)
		defer m.Release()
		return m.MatMul(m)
	}), func(t *testing.T, dtype DType) {
		for _, c := range matmulCases {
			for _, l := range []layout{packed, transposed} {
				t.Run(fmt.Sprintf("%v·%v/%v", c[0], c[1], l), func(t *testing.T) {
					rng := newRand(t)
					sa, sb := c[0], c[1]
					av, bv := randomValues(rng, dtype, product(sa), -2, 2), randomValues(rng, dtype, product(sb), -2, 2)
					a, b := uploadAs(dev, dtype, av, sa, l), uploadAs(dev, dtype, bv, sb, l)
					got := MatMul(a, b)
					defer releaseAll(a, b, got)
					want, magnitude, shape := refMatMul(av, sa, bv, sb)
					require.Equal(t, shape, got.Shape())
					k := sa[len(sa)-1]
					checkClose(t, want, read64(t, got), matmulTol(dtype, k, want, magnitude))
				})
			}
		}
	})
}

func TestGemm(t *testing.T) { forEachDevice(t, testGemm) }

func testGemm(t *testing.T, dev *Device) {
	for _, dtype := range []DType{Float32, Float64} {
		if !Supports(dev, "Gemm", dtype) {
			continue
		}
		for _, tc := range []struct {
			transA, transB bool
			alpha, beta    float64
			cShape         []int // nil: no c
		}{
			{false, false, 1, 0, nil}, {true, false, 2, 0, nil}, {false, true, 1, 1, []int{5}},
			{true, true, -0.5, 2, []int{3, 5}}, {false, false, 1, 0.5, []int{3, 1}}, {true, false, 1, 1, []int{}},
		} {
			t.Run(fmt.Sprintf("%v/%+v", dtype, tc), func(t *testing.T) {
				rng := newRand(t)
				m, k, n := 3, 7, 5
				sa, sb := []int{m, k}, []int{k, n}
				if tc.transA {
					sa = []int{k, m}
				}
				if tc.transB {
					sb = []int{n, k}
				}
				av, bv := randomValues(rng, dtype, m*k, -2, 2), randomValues(rng, dtype, k*n, -2, 2)
				a, b := upload(dev, dtype, av, sa...), upload(dev, dtype, bv, sb...)
				var c *Tensor
				var cv []float64
				if tc.cShape != nil {
					cv = randomValues(rng, dtype, product(tc.cShape), -2, 2)
					c = upload(dev, dtype, cv, tc.cShape...)
				}
				got := Gemm(tc.alpha, a, tc.transA, b, tc.transB, tc.beta, c)
				defer releaseAll(a, b, c, got)

				// The reference transposes on the host.
				opA, opB := av, bv
				if tc.transA {
					opA = transpose2(av, k, m)
				}
				if tc.transB {
					opB = transpose2(bv, n, k)
				}
				prod, magnitude, shape := refMatMul(opA, []int{m, k}, opB, []int{k, n})
				require.Equal(t, shape, got.Shape())
				want := make([]float64, len(prod))
				for i := range want {
					want[i] = tc.alpha * prod[i]
					magnitude[i] *= math.Abs(tc.alpha)
					if c != nil {
						cTerm := tc.beta * cv[broadcastIndex(shape, tc.cShape, i)]
						want[i] += cTerm
						magnitude[i] += math.Abs(cTerm)
					}
				}
				checkClose(t, want, read64(t, got), matmulTol(dtype, k+1, want, magnitude))
			})
		}
	}
}

func transpose2(v []float64, rows, cols int) []float64 {
	out := make([]float64, len(v))
	for r := range rows {
		for c := range cols {
			out[c*rows+r] = v[r*cols+c]
		}
	}
	return out
}

func TestMatVecOuterTranspose(t *testing.T) { forEachDevice(t, testMatVecOuterTranspose) }

func testMatVecOuterTranspose(t *testing.T, dev *Device) {
	rng := newRand(t)
	av, xv := randomValues(rng, Float32, 4*6, -2, 2), randomValues(rng, Float32, 6, -2, 2)
	a, x := upload(dev, Float32, av, 4, 6), upload(dev, Float32, xv)
	y := MatVec(a, x)
	outer := Outer(x, x)
	at := a.T()
	tt := at.T()
	defer releaseAll(a, x, y, outer, at, tt)

	want, magnitude, _ := refMatMul(av, []int{4, 6}, xv, []int{6})
	require.Equal(t, []int{4}, y.Shape())
	checkClose(t, want, read64(t, y), matmulTol(Float32, 6, want, magnitude))

	wantOuter := make([]float64, 36)
	for i := range wantOuter {
		wantOuter[i] = float64(float32(xv[i/6] * xv[i%6]))
	}
	assert.Equal(t, wantOuter, read64(t, outer), "each element is one rounded product")

	assert.Equal(t, []int{6, 4}, at.Shape())
	assert.Equal(t, []int{1, 6}, at.Strides(), "T is a view")
	assert.Equal(t, transpose2(av, 4, 6), read64(t, at))
	assert.Equal(t, av, read64(t, tt))

	x3 := upload(dev, Float32, randomValues(rng, Float32, 2*3*4, -2, 2), 2, 3, 4)
	p := x3.Permute(2, 0, 1)
	q := x3.Transpose(0, -1)
	defer releaseAll(x3, p, q)
	assert.Equal(t, []int{4, 2, 3}, p.Shape())
	assert.Equal(t, []int{1, 12, 4}, p.Strides())
	assert.Equal(t, []int{4, 3, 2}, q.Shape())
	xs := read64(t, x3)
	ps := read64(t, p)
	for i := range 4 {
		for j := range 2 {
			for k := range 3 {
				assert.Equal(t, xs[j*12+k*4+i], ps[i*6+j*3+k])
			}
		}
	}
}

func TestLinalgErrors(t *testing.T) {
	dev := openCPU(t)
	a23, a34, v3 := Zeros(dev, 2, 3), Zeros(dev, 3, 4), Zeros(dev, 3)
	b := Zeros(dev, 2, 2, 3, 4)
	s := Zeros(dev)
	i23 := Full(dev, Int32, 0, 2, 3)
	defer releaseAll(a23, a34, v3, b, s, i23)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { MatMul(a23, a23) }, "tensor: MatMul: shape mismatch: [2 3] vs [2 3] (inner dimensions 3 and 2 differ)"},
		{func() { MatMul(s, a23) }, "tensor: MatMul: both operands need at least one axis, got [] and [2 3]"},
		{func() { MatMul(a23, i23) }, "tensor: MatMul: dtype mismatch: float32 vs int32"},
		{func() { MatMul(b, Zeros(dev, 3, 4, 5)) }, "tensor: MatMul: shape mismatch: [2 2] vs [3] (not broadcastable)"},
		{func() { Gemm(1, a23, false, v3, false, 0, nil) }, "tensor: Gemm: need tensors of rank ≥ 2, got [2 3] and [3]"},
		{func() { Gemm(1, a23, false, a34, false, 1, nil) }, "tensor: Gemm: beta is 1 but c is nil"},
		{func() { Gemm(1, a23, false, a34, false, 1, a34) }, "tensor: Gemm: shape mismatch: [3 4] vs [2 4] (not broadcastable)"},
		{func() { MatVec(a23, a34) }, "tensor: MatVec: need a matrix (rank ≥ 2) and a vector, got [2 3] and [3 4]"},
		{func() { Outer(a23, v3) }, "tensor: Outer: need two vectors, got [2 3] and [3]"},
		{func() { b.T() }, "tensor: T: need a tensor of rank ≤ 2, got [2 2 3 4]; use Transpose or Permute"},
		{func() { b.Permute(0, 1, 2) }, "tensor: Permute: need 4 dims for shape [2 2 3 4], got [0 1 2]"},
		{func() { b.Permute(0, 1, 2, -4) }, "tensor: Permute: dims [0 1 2 -4] are not a permutation"},
		{func() { b.Transpose(0, 4) }, "tensor: Transpose: dim 4 is out of range for rank 4 (want -4 … 3)"},
	} {
		assert.Equal(t, tc.want, panicMessage(t, tc.f))
	}
}
