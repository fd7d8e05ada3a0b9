package tensor

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/webtensor/webtensor/hal"
)

// Tensor is an n-dimensional array of float32 held on a device.
//
// A tensor owns device memory: call Release when done with it. A cleanup
// frees the memory of tensors that become unreachable, but only as a
// safety net — the garbage collector does not see device memory pressure
// and may run far too late.
//
// Operations never block on the device and never return errors. A device
// failure is carried by the result (and by every tensor computed from it)
// and surfaces from Float32s and Device.Sync.
type Tensor struct {
	dev   *Device
	buf   hal.Buffer // nil when the tensor is empty or failed
	shape []int
	err   error // device failure that kept this tensor from being computed

	released atomic.Bool
	cleanup  runtime.Cleanup
}

// FromFloat32 copies data to dev as a tensor of the given shape. Without a
// shape the tensor is 1-D with len(data) elements; otherwise the shape's
// element count must equal len(data). data is written to the device as it
// is, without an intermediate copy, and may be reused once FromFloat32
// returns.
func FromFloat32(dev *Device, data []float32, shape ...int) *Tensor {
	const op = "FromFloat32"
	checkDevice(op, dev)
	if shape == nil {
		shape = []int{len(data)}
	}
	if n := numElements(op, shape); n != len(data) {
		misuse(op, "shape %v needs %d elements, data has %d", shape, n, len(data))
	}
	t := newTensor(op, dev, shape)
	if t.buf != nil {
		if err := dev.hal.Write(t.buf, float32Bytes(data)); err != nil {
			t.setFailed(dev.fail(op, err))
		}
	}
	return t
}

// Zeros returns a tensor of the given shape filled with zeros. Without a
// shape it is a scalar (one element, shape []).
func Zeros(dev *Device, shape ...int) *Tensor {
	const op = "Zeros"
	checkDevice(op, dev)
	t := newTensor(op, dev, shape)
	if t.buf != nil {
		// hal has no fill kernel; Alloc leaves contents undefined.
		if err := dev.hal.Write(t.buf, make([]byte, t.buf.Size())); err != nil {
			t.setFailed(dev.fail(op, err))
		}
	}
	return t
}

// newTensor allocates an uninitialized tensor. An allocation failure does
// not panic: it is recorded on the tensor and on the device.
func newTensor(op string, dev *Device, shape []int) *Tensor {
	t := &Tensor{dev: dev, shape: append([]int{}, shape...)}
	n := numElements(op, shape)
	if n == 0 {
		return t // nothing to hold; some backends reject zero-size buffers
	}
	buf, err := dev.hal.Alloc(int64(n) * 4)
	if err != nil {
		t.err = dev.fail(op, fmt.Errorf("allocating %v: %w", shape, err))
		return t
	}
	t.buf = buf
	// The cleanup must not reach t, or t would never become unreachable.
	t.cleanup = runtime.AddCleanup(t, freeBuffer, bufferRef{dev.hal, buf})
	return t
}

// failedTensor is the result of an op that could not run: it carries err.
func failedTensor(dev *Device, shape []int, err error) *Tensor {
	return &Tensor{dev: dev, shape: append([]int{}, shape...), err: err}
}

type bufferRef struct {
	dev hal.Device
	buf hal.Buffer
}

func freeBuffer(r bufferRef) { r.dev.Free(r.buf) }

// setFailed turns t into a failed tensor, giving its memory back at once.
func (t *Tensor) setFailed(err error) {
	t.err = err
	if t.buf != nil {
		t.cleanup.Stop()
		t.dev.hal.Free(t.buf)
		t.buf = nil
	}
}

// Shape returns a copy of the tensor's dimensions.
func (t *Tensor) Shape() []int { return append([]int{}, t.shape...) }

// Len returns the number of elements.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// Device returns the device that holds the tensor.
func (t *Tensor) Device() *Device { return t.dev }

// Float32s copies the tensor's elements to the host in row-major order.
// This is where device failures surface: the error of whatever op failed
// while computing t, or a failure the device reports while reading.
func (t *Tensor) Float32s() ([]float32, error) {
	const op = "Float32s"
	t.checkLive(op)
	if t.err != nil {
		return nil, t.err
	}
	out := make([]float32, t.Len())
	if t.buf == nil {
		return out, nil
	}
	err := t.dev.hal.Read(t.buf, float32Bytes(out))
	runtime.KeepAlive(t)
	if err != nil {
		return nil, t.dev.fail(op, err)
	}
	return out, nil
}

// To returns a copy of t on dev. The copy is independent of t, even when
// dev is t's own device, so both must be released; it costs a round trip
// through host memory because hal has no device-to-device copy.
func (t *Tensor) To(dev *Device) *Tensor {
	const op = "To"
	t.checkLive(op)
	checkDevice(op, dev)
	if t.err != nil {
		return failedTensor(dev, t.shape, t.err)
	}
	data, err := t.Float32s()
	if err != nil {
		return failedTensor(dev, t.shape, err)
	}
	return FromFloat32(dev, data, t.shape...)
}

// Release frees the tensor's device memory. It is idempotent; any other
// use of t after Release panics.
func (t *Tensor) Release() {
	if t == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	if t.buf != nil {
		t.cleanup.Stop()
		t.dev.hal.Free(t.buf)
	}
}

// String describes the tensor without reading it back from the device.
func (t *Tensor) String() string {
	if t == nil {
		return "tensor <nil>"
	}
	s := fmt.Sprintf("tensor %v float32 on %s", t.shape, t.dev.Name())
	switch {
	case t.released.Load():
		s += " (released)"
	case t.err != nil:
		s += fmt.Sprintf(" (failed: %v)", t.err)
	}
	return s
}

// checkLive panics unless t can be used by op.
func (t *Tensor) checkLive(op string) {
	if t == nil {
		misuse(op, "nil tensor")
	}
	if t.released.Load() {
		misuse(op, "use of released tensor %v on %s", t.shape, t.dev.Name())
	}
}

func checkDevice(op string, dev *Device) {
	if dev == nil {
		misuse(op, "nil device")
	}
}

// float32Bytes views data as its raw bytes, so transfers need no copy.
func float32Bytes(data []float32) []byte {
	if len(data) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*4)
}
