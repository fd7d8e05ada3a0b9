package tensor

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicMessage runs f, which must panic with an *Error, and returns the
// message. A panic of any other type propagates and fails the test.
func panicMessage(t *testing.T, f func()) string {
	t.Helper()
	err := Catch(f)
	var te *Error
	require.ErrorAs(t, err, &te, "expected a *tensor.Error panic")
	return te.Error()
}

func TestMisusePanics(t *testing.T) {
	dev := openCPU(t)
	other := openSecondCPU(t)

	a23 := Zeros(dev, 2, 3)
	a32 := Zeros(dev, 3, 2)
	b3 := Zeros(dev, 3)
	i3 := Full(dev, Int32, 1, 3)
	on2 := Zeros(other, 2, 3)
	released := Zeros(dev, 4, 4)
	released.Release()
	defer releaseAll(a23, a32, b3, i3, on2)

	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"Add shapes", func() { Add(a23, a32) }, "tensor: Add: shape mismatch: [2 3] vs [3 2] (not broadcastable)"},
		{"Mul shapes", func() { a32.Mul(b3) }, "tensor: Mul: shape mismatch: [3 2] vs [3] (not broadcastable)"},
		{"Where shapes", func() { Where(i3, a23, a32) }, "tensor: Where: shape mismatch: [3] vs [2 3] vs [3 2] (not broadcastable)"},
		{"Add dtypes", func() { Add(a23, i3) }, "tensor: Add: dtype mismatch: float32 vs int32"},
		{"Where dtypes", func() { Where(i3, a23, i3) }, "tensor: Where: dtype mismatch: float32 vs int32"},
		{"Where condition", func() { Where(b3, a23, a23) }, "tensor: Where: condition must be int32 (a mask), got float32"},
		{"Pow int32", func() { Pow(i3, i3) }, "tensor: Pow: int32 on cpu (" + dev.Info().Name + "): unsupported operation: Pow is not defined for int32"},
		{"LeakyReLU int32", func() { i3.LeakyReLU(0.1) }, "tensor: LeakyReLU: int32 on cpu (" + dev.Info().Name + "): unsupported operation: LeakyReLU is not defined for int32"},
		{"Clamp NaN", func() { a23.Clamp(math.NaN(), 1) }, "tensor: Clamp: NaN bound (lo NaN, hi 1)"},
		{"Cast dtype", func() { a23.Cast(DType(7)) }, "tensor: Cast: invalid dtype DType(7)"},
		{"MatMul inner", func() { MatMul(a23, a23) }, "tensor: MatMul: shape mismatch: [2 3] vs [2 3] (inner dimensions 3 and 2 differ)"},
		{"MatMul devices", func() { MatMul(a23, on2) }, "tensor: MatMul: tensors on different devices: [2 3] float32 on cpu vs [2 3] float32 on test-second-cpu:0 (the Explicit placement moves nothing: copy one with To)"},
		{"Add devices", func() { Add(on2, a23) }, "tensor: Add: tensors on different devices: [2 3] float32 on test-second-cpu:0 vs [2 3] float32 on cpu (the Explicit placement moves nothing: copy one with To)"},
		{"ReLU released", func() { ReLU(released) }, "tensor: ReLU: use of released tensor [4 4] on cpu"},
		{"Add released", func() { a23.Add(released) }, "tensor: Add: use of released tensor [4 4] on cpu"},
		{"To released", func() { released.To(other) }, "tensor: To: use of released tensor [4 4] on cpu"},
		{"nil tensor", func() { Sigmoid(nil) }, "tensor: Sigmoid: nil tensor"},
		{"nil device", func() { Zeros(nil, 1) }, "tensor: Zeros: nil device"},
		{"data length", func() { FromFloat32(dev, []float32{1, 2, 3}, 2, 2) }, "tensor: FromFloat32: shape [2 2] needs 4 elements, data has 3"},
		{"negative dim", func() { Zeros(dev, 2, -1) }, "tensor: Zeros: negative dimension in shape [2 -1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, panicMessage(t, tc.f))
		})
	}
}

func TestCatch(t *testing.T) {
	assert.NoError(t, Catch(func() {}))

	dev := openCPU(t)
	a, b := Zeros(dev, 2), Zeros(dev, 3)
	defer releaseAll(a, b)
	err := Catch(func() { a.Add(b) })
	var te *Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "Add", te.Op)

	// Panics that are not ours are not swallowed.
	assert.PanicsWithValue(t, "boom", func() { _ = Catch(func() { panic("boom") }) })
	sentinel := errors.New("sentinel")
	assert.PanicsWithError(t, "sentinel", func() { _ = Catch(func() { panic(sentinel) }) })
}

func TestReleaseIsIdempotent(t *testing.T) {
	dev, fd := newFaultyDevice()
	x := Zeros(dev, 8)
	x.Release()
	x.Release()
	assert.Equal(t, int64(1), fd.frees.Load())
	assert.Contains(t, x.String(), "(released)")

	var nilTensor *Tensor
	assert.NotPanics(t, nilTensor.Release)
}
