package tensor

import "github.com/webtensor/webtensor/hal"

// DType is the element type of a tensor.
type DType = hal.DType

// Element types. Float32 runs everywhere; Int32 holds indices, labels and
// masks; Float64 runs on the CPU backend; Float16 runs on the CPU backend
// (by conversion) and on WebGPU adapters with the shader-f16 feature.
// Int64 (PyTorch's long) runs on the CPU backend; data moved onto a device
// that cannot hold it is narrowed to Int32 (see "Int64 on WebGPU" in the
// package doc).
const (
	Float32 = hal.Float32
	Float64 = hal.Float64
	Int32   = hal.Int32
	Float16 = hal.Float16
	Int64   = hal.Int64
)
