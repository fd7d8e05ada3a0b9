package tensor

import (
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/hal"
)

// FromFloat32 copies data to dev as a Float32 tensor of the given shape.
// Without a shape the tensor is 1-D with len(data) elements; otherwise the
// shape's element count must equal len(data). data may be reused once
// FromFloat32 returns.
func FromFloat32(dev *Device, data []float32, shape ...int) *Tensor {
	return fromHost("FromFloat32", placeNew(dev, Float32, len(data)), Float32, sliceBytes(data), len(data), shape)
}

// FromFloat64 copies data to dev as a Float64 tensor (CPU backend only);
// see FromFloat32.
func FromFloat64(dev *Device, data []float64, shape ...int) *Tensor {
	return fromHost("FromFloat64", placeNew(dev, Float64, len(data)), Float64, sliceBytes(data), len(data), shape)
}

// FromInt32 copies data to dev as an Int32 tensor; see FromFloat32.
func FromInt32(dev *Device, data []int32, shape ...int) *Tensor {
	return fromHost("FromInt32", placeNew(dev, Int32, len(data)), Int32, sliceBytes(data), len(data), shape)
}

// FromInt64 copies data to dev as an Int64 tensor; see FromFloat32. On a
// device that cannot hold Int64 (WebGPU: WGSL has no 64-bit integers) the
// tensor is Int32 instead, its values narrowed exactly; a value outside
// the int32 range panics with an *Error wrapping ErrInt64Overflow that
// names it and its position. See "Int64 on WebGPU" in the package doc.
func FromInt64(dev *Device, data []int64, shape ...int) *Tensor {
	const op = "FromInt64"
	checkDevice(op, dev)
	target := placeNew(dev, Int64, len(data))
	if narrowsInt64(target) {
		narrow, err := narrowInt64(op, target, data)
		if err != nil {
			panic(err)
		}
		return fromHost(op, target, Int32, sliceBytes(narrow), len(narrow), shape)
	}
	return fromHost(op, target, Int64, sliceBytes(data), len(data), shape)
}

// fromHost writes raw little-endian elements of dtype to a new tensor.
func fromHost(op string, dev *Device, dtype DType, data []byte, n int, shape []int) *Tensor {
	checkDevice(op, dev)
	if shape == nil {
		shape = []int{n}
	}
	checkShape(op, shape)
	if want := numElements(op, shape); want != n {
		misuse(op, "shape %v needs %d elements, data has %d", shape, want, n)
	}
	requireDType(op, dev, dtype)
	t := newTensor(op, dev, dtype, shape)
	if t.err == nil && n > 0 {
		if err := dev.hal.Write(t.st.buf, data); err != nil {
			t.setFailed(dev.fail(op, err))
		}
	}
	return t
}

// requireDType panics unless dev can hold and move tensors of dtype: a
// device that cannot even copy a dtype can do nothing with it.
func requireDType(op string, dev *Device, dtype DType) {
	if !dtype.Valid() {
		misuse(op, "invalid dtype %v", dtype)
	}
	if _, listed := lookupOp(op); listed {
		checkOp(op, dev, dtype)
	}
	dev.requireKernel(op, dtype, hal.KernelCopy, dtype)
}

// Zeros returns a Float32 tensor of the given shape filled with 0. Without
// a shape it is a scalar (one element, shape []).
func Zeros(dev *Device, shape ...int) *Tensor { return publicFull("Zeros", dev, Float32, 0, shape) }

// Ones returns a Float32 tensor of the given shape filled with 1.
func Ones(dev *Device, shape ...int) *Tensor { return publicFull("Ones", dev, Float32, 1, shape) }

// Full returns a tensor of dtype and shape filled with value (truncated
// toward zero for Int32).
func Full(dev *Device, dtype DType, value float64, shape ...int) *Tensor {
	return publicFull("Full", dev, dtype, value, shape)
}

// ZerosLike returns zeros with t's shape and dtype, on t's device.
func ZerosLike(t *Tensor) *Tensor { return fullLike("ZerosLike", t, 0) }

// OnesLike returns ones with t's shape and dtype, on t's device.
func OnesLike(t *Tensor) *Tensor { return fullLike("OnesLike", t, 1) }

// FullLike returns value with t's shape and dtype, on t's device.
func FullLike(t *Tensor, value float64) *Tensor { return fullLike("FullLike", t, value) }

func fullLike(op string, t *Tensor, value float64) *Tensor {
	t.checkLive(op)
	return publicFull(op, t.dev, t.dtype, value, t.shape)
}

// publicFull is the entry of the public creation ops that fill a value.
func publicFull(op string, dev *Device, dtype DType, value float64, shape []int) *Tensor {
	checkDevice(op, dev)
	if !dtype.Valid() {
		misuse(op, "invalid dtype %v", dtype)
	}
	checkShape(op, shape)
	checkOp(op, dev, dtype)
	return full(op, dev, dtype, value, shape)
}

// full fills a new contiguous tensor with one value on the device.
func full(op string, dev *Device, dtype DType, value float64, shape []int) *Tensor {
	checkDevice(op, dev)
	if !dtype.Valid() {
		misuse(op, "invalid dtype %v", dtype)
	}
	value = intValue(op, dtype, value)
	dev.requireKernel(op, dtype, hal.KernelFill, dtype)
	return compute(op, dev, dtype, shape, nil, func(dst hal.View) error {
		return dev.hal.Fill(dst, value, 0)
	})
}

// intValue is int32Value for Int32 and int64Value for Int64, and v
// itself for float dtypes.
func intValue(op string, dtype DType, v float64) float64 {
	switch dtype {
	case Int32:
		return int32Value(op, v)
	case Int64:
		return int64Value(op, v)
	}
	return v
}

// int64Value truncates v toward zero, panicking when it does not fit in
// int64 (2⁶³ itself, the float64 nearest MaxInt64, does not).
func int64Value(op string, v float64) float64 {
	v = math.Trunc(v)
	if !(v >= math.MinInt64 && v < 0x1p63) {
		misuse(op, "value %v does not fit in int64", v)
	}
	return v
}

// int32Value truncates v toward zero, panicking when it does not fit.
func int32Value(op string, v float64) float64 {
	v = math.Trunc(v)
	if !(v >= math.MinInt32 && v <= math.MaxInt32) {
		misuse(op, "value %v does not fit in int32", v)
	}
	return v
}

// Arange returns the 1-D tensor start, start+step, … up to but excluding
// end, as torch.arange: ⌈(end−start)/step⌉ elements, computed on the
// device as start + i·step.
func Arange(dev *Device, dtype DType, start, end, step float64) *Tensor {
	const op = "Arange"
	checkDevice(op, dev)
	if step == 0 || math.IsNaN(step) || math.IsInf(start, 0) || math.IsInf(end, 0) || math.IsNaN(start) || math.IsNaN(end) {
		misuse(op, "need finite start and end and a non-zero step, got start %v, end %v, step %v", start, end, step)
	}
	count := math.Ceil((end - start) / step)
	if count < 0 {
		misuse(op, "end %v is not reachable from start %v with step %v", end, start, step)
	}
	if count > float64(maxElements) {
		misuse(op, "%v elements are too many", count)
	}
	if dtype.IsInteger() {
		intValue(op, dtype, start)
		intValue(op, dtype, start+(count-1)*step)
	}
	checkOp(op, dev, dtype)
	return compute(op, dev, dtype, []int{int(count)}, nil, func(dst hal.View) error {
		return dev.hal.Fill(dst, start, step)
	})
}

// Linspace returns n evenly spaced Float32 values from start to end
// inclusive, as torch.linspace: the first half counts up from start and
// the second half down from end, so both ends are exact.
func Linspace(dev *Device, start, end float64, n int) *Tensor {
	const op = "Linspace"
	checkDevice(op, dev)
	if n < 0 {
		misuse(op, "negative count %d", n)
	}
	checkOp(op, dev, Float32)
	out := empty(op, dev, Float32, []int{n})
	out.exec(op, nil, func() error {
		if n == 1 {
			return dev.hal.Fill(out.view(), start, 0)
		}
		step := (end - start) / float64(n-1)
		half := n / 2
		lo, hi := out.view(), out.view()
		lo.Shape = []int{half}
		hi.Shape, hi.Offset = []int{n - half}, half
		if err := dev.hal.Fill(lo, start, step); err != nil {
			return err
		}
		// Element i ≥ half is end − (n−1−i)·step; Fill counts upward from
		// the first of them.
		return dev.hal.Fill(hi, end-float64(n-1-half)*step, step)
	})
	return out
}

// Eye returns the n×m Float32 matrix with ones on the diagonal.
func Eye(dev *Device, n, m int) *Tensor {
	const op = "Eye"
	checkDevice(op, dev)
	checkShape(op, []int{n, m})
	checkOp(op, dev, Float32)
	out := empty(op, dev, Float32, []int{n, m})
	out.exec(op, nil, func() error {
		if err := dev.hal.Fill(out.view(), 0, 0); err != nil {
			return err
		}
		// The diagonal is every (m+1)th element.
		diag := hal.View{Buf: out.st.buf, DType: Float32, Shape: []int{min(n, m)}, Strides: []int{m + 1}}
		return dev.hal.Fill(diag, 1, 0)
	})
	return out
}

// sliceBytes views data as its raw bytes, so transfers need no copy.
func sliceBytes[T any](data []T) []byte {
	if len(data) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(data[0])))
}

var _ = registerOps(
	Op{Name: "FromFloat32", Family: FamilyCreation, DTypes: []DType{Float32}, Kernels: none},
	Op{Name: "FromFloat64", Family: FamilyCreation, DTypes: []DType{Float64}, Kernels: none},
	Op{Name: "FromInt32", Family: FamilyCreation, DTypes: []DType{Int32}, Kernels: none},
	Op{Name: "Zeros", Family: FamilyCreation, DTypes: onlyF32, Kernels: one(hal.KernelFill)},
	Op{Name: "Ones", Family: FamilyCreation, DTypes: onlyF32, Kernels: one(hal.KernelFill)},
	Op{Name: "Full", Family: FamilyCreation, DTypes: allTypes, Kernels: one(hal.KernelFill)},
	Op{Name: "ZerosLike", Family: FamilyCreation, DTypes: allTypes, Kernels: one(hal.KernelFill)},
	Op{Name: "OnesLike", Family: FamilyCreation, DTypes: allTypes, Kernels: one(hal.KernelFill)},
	Op{Name: "FullLike", Family: FamilyCreation, DTypes: allTypes, Kernels: one(hal.KernelFill)},
	Op{Name: "Arange", Family: FamilyCreation, DTypes: allTypes, Kernels: one(hal.KernelFill)},
	Op{Name: "Linspace", Family: FamilyCreation, DTypes: onlyF32, Kernels: one(hal.KernelFill)},
	Op{Name: "Eye", Family: FamilyCreation, DTypes: onlyF32, Kernels: one(hal.KernelFill)},
)
