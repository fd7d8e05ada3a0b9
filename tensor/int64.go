package tensor

import (
	"errors"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/hal"
)

// ErrInt64Overflow is wrapped by the *Error of a move of Int64 data onto
// a device that holds it as Int32 (see "Int64 on WebGPU" in the package
// doc) when a value does not fit in int32.
var ErrInt64Overflow = errors.New("int64 value does not fit in int32")

// HoldsInt64 reports whether dev stores Int64 tensors as Int64; on a
// device that does not (WebGPU), Int64 data moved there by FromInt64, To
// or a checkpoint load becomes Int32.
func HoldsInt64(dev *Device) bool {
	checkDevice("HoldsInt64", dev)
	return dev.caps().Supports(hal.KernelCopy, Int64)
}

// narrowsInt64 reports whether Int64 data moved to dev becomes Int32.
func narrowsInt64(dev *Device) bool {
	caps := dev.caps()
	return !caps.Supports(hal.KernelCopy, Int64) && caps.Supports(hal.KernelCopy, Int32)
}

// narrowInt64 converts data to int32 for a device that holds Int64 as
// Int32, or returns an *Error naming op, dev, the first value out of the
// int32 range and its flat position.
func narrowInt64(op string, dev *Device, data []int64) ([]int32, error) {
	out := make([]int32, len(data))
	for i, v := range data {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, &Error{Op: op, Err: ErrInt64Overflow,
				Msg: fmt.Sprintf("element %d is %d: %v holds int64 as int32", i, v, dev)}
		}
		out[i] = int32(v)
	}
	return out, nil
}

// Int64s copies the elements to the host as int64; floats truncate toward
// zero and saturate, NaN becomes 0 (as Cast). Int64 data narrowed to Int32
// on a WebGPU device reads back as the same int64 values. See Float32s.
func (t *Tensor) Int64s() ([]int64, error) {
	const op = "Int64s"
	t.checkLive(op)
	if t.dtype == Int64 {
		out := make([]int64, t.Len())
		if err := t.readInto(op, sliceBytes(out)); err != nil {
			return nil, err
		}
		return out, nil
	}
	raw, err := t.readRaw(op)
	if err != nil {
		return nil, err
	}
	out := make([]int64, t.Len())
	for i := range out {
		if t.dtype == Int32 {
			out[i] = int64(int32(leUint32(raw[4*i:])))
			continue
		}
		out[i] = toInt64(rawAt(t.dtype, raw, i))
	}
	return out, nil
}

func leUint32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// toInt64 converts as the Copy kernel does: truncate, saturate, NaN → 0.
func toInt64(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= 0x1p63:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}

// toNarrowed moves t, an Int64 tensor, to dev, which holds Int64 as
// Int32: the values are read, checked and written as Int32. A value out
// of range gives a failed tensor whose error wraps ErrInt64Overflow.
func (t *Tensor) toNarrowed(op string, dev *Device) *Tensor {
	if t.err != nil {
		return failedTensor(dev, Int32, t.shape, t.err)
	}
	data, err := t.Int64s()
	if err != nil {
		return failedTensor(dev, Int32, t.shape, err)
	}
	narrow, err := narrowInt64(op, dev, data)
	if err != nil {
		return failedTensor(dev, Int32, t.shape, err)
	}
	return fromHost(op, dev, Int32, sliceBytes(narrow), len(narrow), t.Shape())
}
