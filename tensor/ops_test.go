package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var elementwiseSizes = []int{0, 1, 7, 1000, 1025}

func TestElementwiseOps(t *testing.T) { forEachDevice(t, testElementwiseOps) }

func testElementwiseOps(t *testing.T, dev *Device) {
	binaryOps := []struct {
		name string
		op   func(a, b *Tensor) *Tensor
		ref  func(a, b float64) float64
	}{
		{"Add", Add, func(a, b float64) float64 { return a + b }},
		{"Mul", Mul, func(a, b float64) float64 { return a * b }},
		{"Tensor.Add", (*Tensor).Add, func(a, b float64) float64 { return a + b }},
		{"Tensor.Mul", (*Tensor).Mul, func(a, b float64) float64 { return a * b }},
	}
	for _, tc := range binaryOps {
		for _, n := range elementwiseSizes {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				rng := newRand(t)
				av, bv := randomFloat32s(rng, n), randomFloat32s(rng, n)
				a, b := FromFloat32(dev, av), FromFloat32(dev, bv)
				c := tc.op(a, b)
				defer releaseAll(a, b, c)

				want := make([]float64, n)
				for i := range want {
					want[i] = tc.ref(float64(av[i]), float64(bv[i]))
				}
				assert.Equal(t, []int{n}, c.Shape())
				requireClose(t, want, read(t, c), elementwiseTol(want))
			})
		}
	}

	unaryOps := []struct {
		name string
		op   func(x *Tensor) *Tensor
		ref  func(x float64) float64
		tol  func(want []float64) func(int) float64
	}{
		{"ReLU", ReLU, func(x float64) float64 { return math.Max(x, 0) }, elementwiseTol},
		{"Sigmoid", Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, sigmoidTol},
		{"Tensor.ReLU", (*Tensor).ReLU, func(x float64) float64 { return math.Max(x, 0) }, elementwiseTol},
		{"Tensor.Sigmoid", (*Tensor).Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, sigmoidTol},
	}
	for _, tc := range unaryOps {
		for _, n := range elementwiseSizes {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				xv := randomFloat32s(newRand(t), n)
				x := FromFloat32(dev, xv)
				y := tc.op(x)
				defer releaseAll(x, y)

				want := make([]float64, n)
				for i := range want {
					want[i] = tc.ref(float64(xv[i]))
				}
				requireClose(t, want, read(t, y), tc.tol(want))
			})
		}
	}
}

// GPU exp may be a few ulp off; sigmoid is in (0, 1), so an absolute bound.
func sigmoidTol([]float64) func(int) float64 {
	return func(int) float64 { return 2e-6 }
}

func TestElementwiseKeepsShape(t *testing.T) { forEachDevice(t, testElementwiseKeepsShape) }

func testElementwiseKeepsShape(t *testing.T, dev *Device) {
	x := FromFloat32(dev, []float32{-1, 2, -3, 4, -5, 6}, 2, 3)
	y := x.ReLU().Add(x)
	defer releaseAll(x, y)
	assert.Equal(t, []int{2, 3}, y.Shape())
	assert.Equal(t, []float32{-1, 4, -3, 8, -5, 12}, read(t, y))
}

func TestMatMul(t *testing.T) { forEachDevice(t, testMatMul) }

func testMatMul(t *testing.T, dev *Device) {
	for _, s := range [][3]int{
		{1, 1, 1}, {7, 7, 7}, {1, 1000, 1}, {7, 1025, 3}, {33, 65, 17}, {1, 1, 1025}, {1025, 1, 1},
	} {
		m, k, n := s[0], s[1], s[2]
		t.Run(fmt.Sprintf("%dx%dx%d", m, k, n), func(t *testing.T) {
			rng := newRand(t)
			av, bv := randomFloat32s(rng, m*k), randomFloat32s(rng, k*n)
			a, b := FromFloat32(dev, av, m, k), FromFloat32(dev, bv, k, n)
			c := a.MatMul(b)
			defer releaseAll(a, b, c)

			want := make([]float64, m*n)
			magnitude := make([]float64, m*n) // Σ|a·b|, which bounds the rounding error
			for i := range m {
				for j := range n {
					for p := range k {
						prod := float64(av[i*k+p]) * float64(bv[p*n+j])
						want[i*n+j] += prod
						magnitude[i*n+j] += math.Abs(prod)
					}
				}
			}
			assert.Equal(t, []int{m, n}, c.Shape())
			const eps32 = 0x1p-23
			requireClose(t, want, read(t, c), func(i int) float64 {
				return 2*float64(k)*eps32*magnitude[i] + 1e-7
			})
		})
	}
}

func TestEmptyTensors(t *testing.T) { forEachDevice(t, testEmptyTensors) }

func testEmptyTensors(t *testing.T, dev *Device) {

	x := Zeros(dev, 0, 3)
	y := Sigmoid(Add(x, x))
	defer releaseAll(x, y)
	assert.Equal(t, []int{0, 3}, y.Shape())
	assert.Equal(t, 0, y.Len())
	assert.Equal(t, []float32{}, read(t, y))

	a, b := Zeros(dev, 0, 3), Zeros(dev, 3, 4)
	c := MatMul(a, b)
	defer releaseAll(a, b, c)
	assert.Equal(t, []int{0, 4}, c.Shape())
	assert.Empty(t, read(t, c))

	// An empty inner dimension is an empty sum: the result is zeros.
	p := FromFloat32(dev, nil, 2, 0)
	q := FromFloat32(dev, []float32{}, 0, 3)
	r := MatMul(p, q)
	defer releaseAll(p, q, r)
	assert.Equal(t, []int{2, 3}, r.Shape())
	assert.Equal(t, make([]float32, 6), read(t, r))
}

// Ops must stay on the device: a long chain costs one read-back, the one
// the caller asks for.
func TestOpsDoNotReadBack(t *testing.T) { forEachDevice(t, testOpsDoNotReadBack) }

func testOpsDoNotReadBack(t *testing.T, dev *Device) {
	before := dev.Stats().HostReads

	x := FromFloat32(dev, randomFloat32s(newRand(t), 257), 257)
	ones := FromFloat32(dev, onesFloat32(257))
	acc := x
	for i := range 100 {
		var next *Tensor
		switch i % 4 {
		case 0:
			next = acc.Add(ones)
		case 1:
			next = acc.Mul(x)
		case 2:
			next = acc.ReLU()
		default:
			next = acc.Sigmoid()
		}
		if acc != x {
			acc.Release()
		}
		acc = next
	}
	defer releaseAll(x, ones, acc)
	read(t, acc)

	assert.Equal(t, int64(1), dev.Stats().HostReads-before)
}

func onesFloat32(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func TestZeros(t *testing.T) {
	dev := openCPU(t)
	z := Zeros(dev, 3, 5)
	s := Zeros(dev)
	defer releaseAll(z, s)
	assert.Equal(t, make([]float32, 15), read(t, z))
	assert.Equal(t, []int{}, s.Shape())
	assert.Equal(t, 1, s.Len())
	assert.Equal(t, []float32{0}, read(t, s))
}

func TestFromFloat32Shape(t *testing.T) {
	dev := openCPU(t)
	data := []float32{1, 2, 3, 4, 5, 6}
	x := FromFloat32(dev, data)
	y := FromFloat32(dev, data, 3, 2)
	defer releaseAll(x, y)
	assert.Equal(t, []int{6}, x.Shape())
	assert.Equal(t, []int{3, 2}, y.Shape())
	assert.Equal(t, 6, y.Len())

	shape := y.Shape()
	shape[0] = 99
	assert.Equal(t, []int{3, 2}, y.Shape(), "Shape must return a copy")

	data[0] = 42 // the tensor must not alias the caller's slice
	require.Equal(t, float32(1), read(t, y)[0])
}

func TestTensorString(t *testing.T) {
	x := Zeros(openCPU(t), 2, 3)
	assert.Equal(t, "tensor [2 3] float32 on cpu", x.String())
	x.Release()
	assert.Equal(t, "tensor [2 3] float32 on cpu (released)", x.String())
}
