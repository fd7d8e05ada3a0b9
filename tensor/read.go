package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"

	"github.com/webtensor/webtensor/hal"
	"github.com/x448/float16"
)

// Float32s copies the tensor's elements to the host in row-major order,
// converting any dtype to float32. This is where device failures surface:
// the error of whatever op failed while computing t (every read of t
// returns it), or a failure the device reports while reading (such as an
// out-of-range gather index on a GPU, reported once, by the first read or
// Sync after the op). A failure a read returns is not returned again by
// Sync.
func (t *Tensor) Float32s() ([]float32, error) {
	return readAs("Float32s", t, Float32, func(v float64) float32 { return float32(v) })
}

// Float64s copies the elements to the host as float64; see Float32s.
func (t *Tensor) Float64s() ([]float64, error) {
	return readAs("Float64s", t, Float64, func(v float64) float64 { return v })
}

// Int32s copies the elements to the host as int32; floats truncate toward
// zero and saturate, NaN becomes 0 (as Cast). See Float32s.
func (t *Tensor) Int32s() ([]int32, error) {
	return readAs("Int32s", t, Int32, toInt32)
}

// readAs reads t as a []T. When t's dtype is T's (own), the device copies
// straight into the result, with no intermediate buffer or per-element
// decoding; other dtypes are read raw and converted.
func readAs[T float32 | float64 | int32](op string, t *Tensor, own DType, conv func(float64) T) ([]T, error) {
	if err := t.liveErr(op); err != nil {
		return nil, err
	}
	out := make([]T, t.Len())
	if t.dtype == own {
		if err := t.readInto(op, sliceBytes(out)); err != nil {
			return nil, err
		}
		return out, nil
	}
	raw, err := t.readRaw(op)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = conv(rawAt(t.dtype, raw, i))
	}
	return out, nil
}

// Item returns the value of a one-element tensor (of any rank) as float64.
// A tensor of another size is an *Error wrapping ErrNotScalar, returned
// (not panicked), as are a released tensor and the device failures that
// Float32s returns.
func (t *Tensor) Item() (float64, error) {
	const op = "Item"
	if err := t.liveErr(op); err != nil {
		return 0, err
	}
	if n := t.Len(); n != 1 {
		return 0, &Error{Op: op, Msg: fmt.Sprintf("tensor %v %v on %s has %d elements", t.shape, t.dtype, t.dev.Name(), n), Err: ErrNotScalar}
	}
	raw, err := t.readRaw(op)
	if err != nil {
		return 0, err
	}
	return rawAt(t.dtype, raw, 0), nil
}

// readRaw reads t's elements in row-major order as raw bytes. A view that
// is not a packed prefix of its buffer is packed on the device first, so
// that only t's own elements cross to the host.
func (t *Tensor) readRaw(op string) ([]byte, error) {
	t.checkLive(op)
	raw := make([]byte, t.Len()*t.dtype.Size())
	if err := t.readInto(op, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// readInto reads t's elements in row-major order into raw, which holds
// exactly t.Len() elements of t's dtype.
func (t *Tensor) readInto(op string, raw []byte) error {
	if err := t.lostErr(op); err != nil {
		return err
	}
	if t.err != nil {
		t.dev.reported(t.err)
		return t.err
	}
	src := t
	if !t.IsContiguous() || t.offset != 0 {
		src = t.copy(op)
		defer src.Release()
		if src.err != nil {
			t.dev.reported(src.err)
			return src.err
		}
	}
	err := t.dev.hal.Read(src.st.buf, raw)
	runtime.KeepAlive(src)
	if err != nil {
		// Reported here, to this read, and not kept for Sync: the device
		// has already forgotten it (a failure of an earlier batch, such as
		// an out-of-range gather index, is reported by the next read).
		return &Error{Op: op, Msg: "on " + t.dev.name, Err: err}
	}
	return nil
}

// rawAt decodes element i of little-endian raw data of dtype.
func rawAt(dtype DType, raw []byte, i int) float64 {
	switch dtype {
	case hal.Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	case hal.Int32:
		return float64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	case hal.Int64:
		return float64(int64(binary.LittleEndian.Uint64(raw[8*i:])))
	case hal.Float16:
		return float64(float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32())
	}
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
}

// toInt32 converts as the Copy kernel does: truncate, saturate, NaN → 0.
func toInt32(v float64) int32 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt32:
		return math.MaxInt32
	case v <= math.MinInt32:
		return math.MinInt32
	}
	return int32(v)
}

// To returns a copy of t on dev, with t's dtype and shape. The copy is
// independent of t, even when dev is t's own device, so both must be
// released; it goes through host memory because hal has no
// device-to-device copy. An Int64 t moved to a device that holds Int64 as
// Int32 (WebGPU) becomes Int32; a value outside the int32 range makes the
// result a failed tensor whose reads return an *Error wrapping
// ErrInt64Overflow (see "Int64 on WebGPU" in the package doc).
func (t *Tensor) To(dev *Device) *Tensor {
	const op = "To"
	t.checkLive(op)
	checkDevice(op, dev)
	if t.dtype == Int64 && narrowsInt64(dev) {
		return t.toNarrowed(op, dev)
	}
	requireDType(op, dev, t.dtype)
	var out *Tensor
	if t.err != nil {
		out = failedTensor(dev, t.dtype, t.shape, t.err)
	} else if raw, err := t.readRaw(op); err != nil {
		out = failedTensor(dev, t.dtype, t.shape, err)
	} else {
		out = fromHost(op, dev, t.dtype, raw, t.Len(), t.Shape())
	}
	adopt(out, t) // a copy is computed from t: it joins t's scope
	return out
}
