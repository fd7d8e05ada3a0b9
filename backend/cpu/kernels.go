package cpu

import (
	"fmt"

	"github.com/webtensor/webtensor/hal"
)

// maxElems bounds element counts so that their byte sizes cannot overflow
// int64; no buffer can hold more anyway.
const maxElems = maxBufferSize / 4

// Binary computes dst[i] = a[i] op b[i] for i < n. dst may alias a or b.
func (d *Device) Binary(op hal.BinaryOp, dst, a, b hal.Buffer, n int) error {
	kernel, ok := binaryKernels[op]
	if !ok {
		return fmt.Errorf("cpu: binary %v: %w", op, hal.ErrUnsupported)
	}
	if n < 0 || int64(n) > maxElems {
		return fmt.Errorf("cpu: %v n=%d: %w", op, n, hal.ErrInvalid)
	}
	bytes := int64(n) * 4
	s, err := d.resolve(op.String(), operand{dst, bytes}, operand{a, bytes}, operand{b, bytes})
	if err != nil {
		return err
	}
	d.dispatches.Add(1)
	parallelFor(n, elementGrain, func(lo, hi int) {
		kernel(s[0][lo:hi], s[1][lo:hi], s[2][lo:hi])
	})
	return nil
}

// Unary computes dst[i] = op(src[i]) for i < n. dst may alias src.
func (d *Device) Unary(op hal.UnaryOp, dst, src hal.Buffer, n int) error {
	kernel, ok := unaryKernels[op]
	if !ok {
		return fmt.Errorf("cpu: unary %v: %w", op, hal.ErrUnsupported)
	}
	if n < 0 || int64(n) > maxElems {
		return fmt.Errorf("cpu: %v n=%d: %w", op, n, hal.ErrInvalid)
	}
	bytes := int64(n) * 4
	s, err := d.resolve(op.String(), operand{dst, bytes}, operand{src, bytes})
	if err != nil {
		return err
	}
	d.dispatches.Add(1)
	parallelFor(n, elementGrain, func(lo, hi int) {
		kernel(s[0][lo:hi], s[1][lo:hi])
	})
	return nil
}

// MatMul computes the row-major product dst[m×n] = a[m×k]·b[k×n]. Any
// dimension may be zero; k = 0 fills dst with zeros. dst must not alias a
// or b, since rows of dst are written while a and b are still being read
// (a GPU backend cannot bind one buffer as both input and output either).
func (d *Device) MatMul(dst, a, b hal.Buffer, m, k, n int) error {
	da, ok1 := elems(m, k)
	db, ok2 := elems(k, n)
	dd, ok3 := elems(m, n)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("cpu: matmul %dx%dx%d: %w", m, k, n, hal.ErrInvalid)
	}
	s, err := d.resolve("matmul", operand{dst, dd * 4}, operand{a, da * 4}, operand{b, db * 4})
	if err != nil {
		return fmt.Errorf("%w (shape %dx%dx%d)", err, m, k, n)
	}
	if dst == a || dst == b {
		return fmt.Errorf("cpu: matmul: dst aliases an input: %w", hal.ErrInvalid)
	}
	d.dispatches.Add(1)
	matmul(s[0], s[1], s[2], m, k, n)
	return nil
}

// elems returns rows·cols, or false if either is negative or the product
// is more elements than a buffer can hold.
func elems(rows, cols int) (int64, bool) {
	if rows < 0 || cols < 0 {
		return 0, false
	}
	if rows == 0 || cols == 0 {
		return 0, true
	}
	if int64(cols) > maxElems/int64(rows) {
		return 0, false
	}
	return int64(rows) * int64(cols), true
}
