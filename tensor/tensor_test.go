package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
