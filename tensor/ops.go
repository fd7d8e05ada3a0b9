package tensor

import (
	"runtime"

	"github.com/webtensor/webtensor/hal"
)

// Add returns the elementwise sum a + b. The shapes must be equal.
func Add(a, b *Tensor) *Tensor { return binary("Add", hal.Add, a, b) }

// Mul returns the elementwise product a · b. The shapes must be equal.
func Mul(a, b *Tensor) *Tensor { return binary("Mul", hal.Mul, a, b) }

// ReLU returns max(x, 0) elementwise.
func ReLU(x *Tensor) *Tensor { return unary("ReLU", hal.ReLU, x) }

// Sigmoid returns 1 / (1 + e^(−x)) elementwise.
func Sigmoid(x *Tensor) *Tensor { return unary("Sigmoid", hal.Sigmoid, x) }

// MatMul returns the matrix product of a [m, k] and b [k, n], of shape
// [m, n]. Both tensors must be 2-D.
func MatMul(a, b *Tensor) *Tensor {
	const op = "MatMul"
	dev := checkPair(op, a, b)
	if len(a.shape) != 2 || len(b.shape) != 2 {
		misuse(op, "need 2-D tensors, got %v and %v", a.shape, b.shape)
	}
	m, k, n := a.shape[0], a.shape[1], b.shape[1]
	if b.shape[0] != k {
		misuse(op, "shape mismatch: %v vs %v (inner dimensions %d and %d differ)", a.shape, b.shape, k, b.shape[0])
	}
	out := []int{m, n}
	if err := firstErr(a, b); err != nil {
		return failedTensor(dev, out, err)
	}
	if k == 0 {
		// An empty sum is zero; no kernel needs to see empty inputs.
		return Zeros(dev, out...)
	}
	return launch(op, dev, out, func(dst hal.Buffer) error {
		err := dev.hal.MatMul(dst, a.buf, b.buf, m, k, n)
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		return err
	})
}

// Add returns t + b; see the package function Add.
func (t *Tensor) Add(b *Tensor) *Tensor { return Add(t, b) }

// Mul returns t · b; see the package function Mul.
func (t *Tensor) Mul(b *Tensor) *Tensor { return Mul(t, b) }

// MatMul returns the matrix product t · b; see the package function MatMul.
func (t *Tensor) MatMul(b *Tensor) *Tensor { return MatMul(t, b) }

// ReLU returns max(t, 0) elementwise.
func (t *Tensor) ReLU() *Tensor { return ReLU(t) }

// Sigmoid returns 1 / (1 + e^(−t)) elementwise.
func (t *Tensor) Sigmoid() *Tensor { return Sigmoid(t) }

func binary(op string, kernel hal.BinaryOp, a, b *Tensor) *Tensor {
	dev := checkPair(op, a, b)
	if !sameShape(a.shape, b.shape) {
		misuse(op, "shape mismatch: %v vs %v", a.shape, b.shape)
	}
	if err := firstErr(a, b); err != nil {
		return failedTensor(dev, a.shape, err)
	}
	return launch(op, dev, a.shape, func(dst hal.Buffer) error {
		err := dev.hal.Binary(kernel, dst, a.buf, b.buf, a.Len())
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		return err
	})
}

func unary(op string, kernel hal.UnaryOp, x *Tensor) *Tensor {
	x.checkLive(op)
	if x.err != nil {
		return failedTensor(x.dev, x.shape, x.err)
	}
	return launch(op, x.dev, x.shape, func(dst hal.Buffer) error {
		err := x.dev.hal.Unary(kernel, dst, x.buf, x.Len())
		runtime.KeepAlive(x)
		return err
	})
}

// launch allocates the result and runs kernel into it. The kernel is
// skipped for empty results. A failure is recorded, never panicked: it is
// the device's fault, not the caller's.
//
// The kernels keep their inputs alive until the call returns so that a
// cleanup cannot free an input buffer while the device is reading it.
func launch(op string, dev *Device, shape []int, kernel func(dst hal.Buffer) error) *Tensor {
	t := newTensor(op, dev, shape)
	if t.err != nil || t.buf == nil {
		return t
	}
	if err := kernel(t.buf); err != nil {
		t.setFailed(dev.fail(op, err))
	}
	return t
}

// checkPair panics unless a and b are live tensors on the same device,
// which it returns.
func checkPair(op string, a, b *Tensor) *Device {
	a.checkLive(op)
	b.checkLive(op)
	if a.dev != b.dev {
		misuse(op, "tensors on different devices: %s vs %s", a.dev.Name(), b.dev.Name())
	}
	return a.dev
}

// firstErr returns the failure an input carries, so that it propagates
// through every op computed from it.
func firstErr(ts ...*Tensor) error {
	for _, t := range ts {
		if t.err != nil {
			return t.err
		}
	}
	return nil
}
