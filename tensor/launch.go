package tensor

import (
	"fmt"
	"runtime"

	"github.com/webtensor/webtensor/hal"
)

// compute allocates a contiguous result of dtype and shape on dev and runs
// kernel into it. Nothing runs when an input carries a failure (the result
// carries it too) or when the result is empty. A kernel failure is
// recorded on the result and the device, never panicked: it is the
// device's fault, not the caller's.
//
// inputs are every tensor whose view kernel reads; compute keeps them
// alive until the kernel is issued, so that a cleanup cannot free a
// buffer the call still names.
func compute(op string, dev *Device, dtype DType, shape []int, inputs []*Tensor, kernel func(dst hal.View) error) *Tensor {
	if err := inputsErr(op, inputs...); err != nil {
		checkShape(op, shape)
		f := failedTensor(dev, dtype, shape, err)
		adopt(f, inputs...)
		return f
	}
	out := newTensor(op, dev, dtype, shape)
	adopt(out, inputs...)
	out.exec(op, inputs, func() error { return kernel(out.view()) })
	return out
}

// exec runs kernels that write into t, a result under construction (a
// tensor no caller has seen yet). It is compute's second half, for ops
// that issue several kernels into one result (Concat, Pad, Gemm).
func (t *Tensor) exec(op string, inputs []*Tensor, kernels func() error) {
	adopt(t, inputs...)
	if t.err != nil {
		return
	}
	if err := inputsErr(op, inputs...); err != nil {
		t.setFailed(err)
		return
	}
	if t.Len() == 0 {
		return
	}
	started := profileClock()
	err := kernels()
	t.dev.recordOp(op, started)
	runtime.KeepAlive(inputs)
	if err != nil {
		t.setFailed(t.dev.fail(op, err))
	}
}

// empty allocates an uninitialized contiguous tensor, for ops that fill it
// with exec.
func empty(op string, dev *Device, dtype DType, shape []int) *Tensor {
	return newTensor(op, dev, dtype, shape)
}

// requireKernel panics with an unsupported-operation *Error unless dev
// runs kernel for dtype. op is the user-facing operation and opType the
// dtype the user asked for, which the message names.
func (d *Device) requireKernel(op string, opType DType, kernel string, kernelType DType) {
	if !d.caps().Supports(kernel, kernelType) {
		panic(unsupported(op, opType, d, kernel, kernelType))
	}
}

func unsupported(op string, opType DType, d *Device, kernel string, kernelType DType) *Error {
	return &Error{
		Op:  op,
		Msg: fmt.Sprintf("%v on %v", opType, d),
		Err: fmt.Errorf("%w (no %s kernel for %v)", hal.ErrUnsupported, kernel, kernelType),
	}
}
