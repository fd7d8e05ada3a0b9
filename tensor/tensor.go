package tensor

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// Tensor is an n-dimensional array held on a device: a dtype, a shape,
// and element strides and an offset into a buffer that several tensors
// may share. Views (Reshape, Transpose, Slice, Expand, …) are tensors over
// the same buffer; writing is never done through a view, so sharing is
// invisible except for the memory it saves.
//
// A tensor holds one reference to its buffer: call Release when done with
// it. The buffer goes back to the device when its last tensor is released.
// A cleanup releases tensors that become unreachable, but only as a safety
// net — the garbage collector does not see device memory pressure and may
// run far too late.
//
// Operations never block on the device and never return errors. A device
// failure is carried by the result (and by every tensor computed from it)
// and surfaces from Float32s (and the other readers) and Device.Sync.
type Tensor struct {
	dev     *Device
	st      *storage // nil when the tensor failed
	dtype   DType
	shape   []int
	strides []int
	offset  int   // in elements
	err     error // device failure that kept this tensor from being computed

	scope atomic.Pointer[Scope] // the Scope t belongs to, or nil

	released atomic.Bool
	cleanup  runtime.Cleanup
}

// newTensor allocates an uninitialized contiguous tensor. An allocation
// failure does not panic: it is recorded on the tensor and on the device.
func newTensor(op string, dev *Device, dtype DType, shape []int) *Tensor {
	checkShape(op, shape)
	t := &Tensor{dev: dev, dtype: dtype}
	t.shape, t.strides = packedLayout(shape)
	n := numElements(op, shape)
	// Empty tensors get a zero-byte buffer too, so that every tensor has a
	// valid view to hand to a kernel (a sum over zero elements still
	// writes its result).
	// The storage frees to the backend device that made the buffer, which
	// may not be the current one after a device loss (lost.go).
	owner, buf, err := dev.hal.AllocOwned(int64(n) * int64(dtype.Size()))
	if err != nil {
		t.err = dev.fail(op, fmt.Errorf("allocating %v %v: %w", dtype, shape, err))
		return t
	}
	t.attach(newStorage(owner, buf))
	return t
}

// packedLayout returns a copy of shape and its row-major strides, both
// in one allocation: every op's result needs them, and a small op's cost
// is mostly its allocations.
func packedLayout(shape []int) (dims, strides []int) {
	r := len(shape)
	both := make([]int, 2*r)
	dims, strides = both[:r:r], both[r:]
	copy(dims, shape)
	step := 1
	for i := r - 1; i >= 0; i-- {
		strides[i] = step
		step *= dims[i]
	}
	return dims, strides
}

// attach makes t hold a reference to s that its cleanup drops.
func (t *Tensor) attach(s *storage) {
	t.st = s
	// The cleanup must not reach t, or t would never become unreachable.
	t.cleanup = runtime.AddCleanup(t, (*storage).release, s)
}

// failedTensor is the result of an op that could not run: it carries err.
func failedTensor(dev *Device, dtype DType, shape []int, err error) *Tensor {
	return &Tensor{dev: dev, dtype: dtype, shape: slices.Clone(shape), strides: hal.RowMajorStrides(shape), err: err}
}

// newView returns a tensor over t's buffer with another layout. It holds
// its own reference, so t and the view are released independently.
func (t *Tensor) newView(shape, strides []int, offset int) *Tensor {
	if len(shape) > hal.MaxRank {
		misuse("view", "rank %d exceeds the maximum %d", len(shape), hal.MaxRank)
	}
	if shape == nil {
		shape = []int{}
	}
	if t.err != nil {
		f := failedTensor(t.dev, t.dtype, shape, t.err)
		adopt(f, t)
		return f
	}
	v := &Tensor{dev: t.dev, dtype: t.dtype, shape: shape, strides: strides, offset: offset}
	t.st.acquire()
	v.attach(t.st)
	adopt(v, t)
	return v
}

// alias returns another reference to t with the same layout, for ops that
// are the identity on their input (Contiguous of a contiguous tensor, Cast
// to the same dtype).
func (t *Tensor) alias() *Tensor {
	return t.newView(slices.Clone(t.shape), slices.Clone(t.strides), t.offset)
}

// view is t as the hal sees it. The slices are t's own: kernels only read
// them.
func (t *Tensor) view() hal.View {
	return hal.View{Buf: t.st.buf, DType: t.dtype, Offset: t.offset, Shape: t.shape, Strides: t.strides}
}

// setFailed turns a freshly made result into a failed tensor, giving its
// memory back at once.
func (t *Tensor) setFailed(err error) {
	t.err = err
	if t.st != nil {
		t.cleanup.Stop()
		t.st.release()
		t.st = nil
	}
}

// Release drops the tensor's reference to its buffer, which goes back to
// the device once every view of it is released. It is idempotent; any
// other use of t after Release panics.
func (t *Tensor) Release() {
	if t == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	if t.st != nil {
		t.cleanup.Stop()
		t.st.release()
	}
}

// Shape returns a copy of the tensor's dimensions.
func (t *Tensor) Shape() []int { return slices.Clone(t.shape) }

// Strides returns a copy of the tensor's element strides: element
// (i₀, …, iₙ₋₁) lives Σ iₖ·Strides()[k] elements past the tensor's start.
// Broadcast axes have stride 0.
func (t *Tensor) Strides() []int { return slices.Clone(t.strides) }

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Rank returns the number of axes.
func (t *Tensor) Rank() int { return len(t.shape) }

// Len returns the number of elements.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// IsContiguous reports whether the elements are densely packed in
// row-major order, so that a kernel sees the tensor as a plain array.
func (t *Tensor) IsContiguous() bool {
	return hal.View{Shape: t.shape, Strides: t.strides}.Contiguous()
}

// Device returns the device that holds the tensor.
func (t *Tensor) Device() *Device { return t.dev }

// Released reports whether Release was called on t: every use but
// Release, String, Format and Released then panics or, for the methods
// with an error result, returns an *Error.
func (t *Tensor) Released() bool { return t.released.Load() }

// Err returns the device failure the tensor carries, if any, without
// waiting for the device. Float32s and Device.Sync report it as well.
func (t *Tensor) Err() error {
	if err := t.liveErr("Err"); err != nil {
		return err
	}
	if err := t.lostErr("Err"); err != nil {
		return err
	}
	return t.err
}

// String describes the tensor without reading it back from the device.
func (t *Tensor) String() string {
	if t == nil {
		return "tensor <nil>"
	}
	s := fmt.Sprintf("tensor %v %v on %s", t.shape, t.dtype, t.dev.Name())
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
	if err := t.liveErr(op); err != nil {
		panic(err)
	}
}

// liveErr is checkLive's finding as an error, for the methods that have
// an error result (the readers, Item, Err): they return it instead of
// panicking.
func (t *Tensor) liveErr(op string) *Error {
	if t == nil {
		return &Error{Op: op, Msg: "nil tensor"}
	}
	if t.released.Load() {
		return &Error{Op: op, Msg: fmt.Sprintf("use of released tensor %v on %s", t.shape, t.dev.Name())}
	}
	return nil
}

func checkDevice(op string, dev *Device) {
	if dev == nil {
		misuse(op, "nil device")
	}
}

// sameDevice panics unless every tensor is live and on one device, which
// it returns.
func sameDevice(op string, ts ...*Tensor) *Device {
	for _, t := range ts {
		t.checkLive(op)
	}
	for _, t := range ts[1:] {
		if t.dev != ts[0].dev {
			misuse(op, "tensors on different devices: %s vs %s", ts[0].dev.Name(), t.dev.Name())
		}
	}
	return ts[0].dev
}

// sameDType panics unless a and b share a dtype.
func sameDType(op string, a, b *Tensor) {
	if a.dtype != b.dtype {
		misuse(op, "dtype mismatch: %v vs %v", a.dtype, b.dtype)
	}
}

// firstErr returns the failure an input carries, so that it propagates
// through every op computed from it.
func firstErr(ts ...*Tensor) error {
	for _, t := range ts {
		if t != nil && t.err != nil {
			return t.err
		}
	}
	return nil
}

// releaseAll releases every tensor; nil entries are skipped.
func releaseAll(ts ...*Tensor) {
	for _, t := range ts {
		t.Release()
	}
}
