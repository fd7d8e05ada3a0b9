// Package hal is the hardware-abstraction layer between the user-facing
// tensor package and the compute backends.
//
// A backend (package backend/cpu, backend/wgpu, …) registers itself by name
// with [Register]. Callers list its adapters, open one as a [Device], and
// drive it through a deliberately narrow interface: allocate and free
// buffers, copy bytes in and out, run a handful of kernels, synchronize.
// Everything richer (shapes, broadcasting, autodiff) lives above this layer,
// so a new backend only has to implement what is here.
//
// Error policy: every method returns an error for environmental failures
// (library missing, no adapter, out of memory, device lost, shader
// rejected). Callers test them with errors.Is against the sentinels below.
// Backends may defer asynchronous failures (a GPU validation error, a lost
// device) to the next Sync or Read.
package hal

import (
	"errors"
	"fmt"
)

// Sentinel errors. Backends wrap them with detail, so test with errors.Is.
var (
	// ErrUnavailable means the backend cannot run in this build or on this
	// machine (for example a !cgo build of the WebGPU backend).
	ErrUnavailable = errors.New("backend unavailable")
	// ErrLibraryNotFound means the native library a backend loads at run
	// time (libwebgpu_dawn, libwgpu_native, …) could not be found or lacks
	// a required symbol.
	ErrLibraryNotFound = errors.New("native library not found")
	// ErrNoAdapter means the library loaded but found no usable adapter,
	// or the adapter index is out of range.
	ErrNoAdapter = errors.New("no adapter")
	// ErrOutOfMemory means an allocation failed on the device.
	ErrOutOfMemory = errors.New("out of device memory")
	// ErrDeviceLost means the device was lost (driver reset, removal,
	// explicit destruction); its buffers are gone.
	ErrDeviceLost = errors.New("device lost")
	// ErrShaderRejected means the device refused to compile a kernel.
	ErrShaderRejected = errors.New("shader rejected")
	// ErrUnsupported means the device cannot run the requested operation.
	ErrUnsupported = errors.New("unsupported operation")
	// ErrClosed means the device was closed or the buffer already freed.
	ErrClosed = errors.New("device or buffer closed")
	// ErrInvalid means the arguments broke the kernel's contract (sizes that
	// do not fit the buffers, a buffer from another device).
	ErrInvalid = errors.New("invalid argument")
)

// AdapterType says what kind of processor an adapter is.
type AdapterType int

// Adapter types, from least to most preferred for compute.
const (
	AdapterUnknown AdapterType = iota
	AdapterCPU
	AdapterIntegrated
	AdapterDiscrete
)

func (t AdapterType) String() string {
	switch t {
	case AdapterCPU:
		return "cpu"
	case AdapterIntegrated:
		return "integrated"
	case AdapterDiscrete:
		return "discrete"
	}
	return "unknown"
}

// Limits are the adapter limits that shape how kernels are dispatched.
type Limits struct {
	MaxBufferSize                     uint64 `json:"maxBufferSize"`
	MaxStorageBufferBindingSize       uint64 `json:"maxStorageBufferBindingSize"`
	MaxStorageBuffersPerShaderStage   uint32 `json:"maxStorageBuffersPerShaderStage"`
	MaxComputeWorkgroupStorageSize    uint32 `json:"maxComputeWorkgroupStorageSize"`
	MaxComputeInvocationsPerWorkgroup uint32 `json:"maxComputeInvocationsPerWorkgroup"`
	MaxComputeWorkgroupSizeX          uint32 `json:"maxComputeWorkgroupSizeX"`
	MaxComputeWorkgroupSizeY          uint32 `json:"maxComputeWorkgroupSizeY"`
	MaxComputeWorkgroupSizeZ          uint32 `json:"maxComputeWorkgroupSizeZ"`
	MaxComputeWorkgroupsPerDimension  uint32 `json:"maxComputeWorkgroupsPerDimension"`
}

// Info describes an adapter (a physical or software processor).
type Info struct {
	Name         string      // e.g. "NVIDIA H100", "llvmpipe (LLVM 15.0.6, 256 bits)"
	Vendor       string      // e.g. "nvidia", "mesa"
	Architecture string      // e.g. "hopper"; may be empty
	Driver       string      // driver description; may be empty
	Backend      string      // graphics API or "cpu": "vulkan", "metal", "d3d12", "opengles", …
	Type         AdapterType // discrete, integrated, CPU or unknown
	Limits       Limits
	Features     []string // optional features, e.g. "shader-f16"
}

// Buffer is an opaque allocation owned by the Device that made it. Its
// contents are float32 values in the kernels of this version.
type Buffer interface {
	// Size is the usable size in bytes, as requested from Alloc.
	Size() int64
}

// BinaryOp names an elementwise kernel of two inputs.
type BinaryOp int

// Binary kernels.
const (
	Add BinaryOp = iota // dst = a + b
	Mul                 // dst = a · b
)

func (op BinaryOp) String() string {
	switch op {
	case Add:
		return "add"
	case Mul:
		return "mul"
	}
	return fmt.Sprintf("BinaryOp(%d)", int(op))
}

// UnaryOp names an elementwise kernel of one input.
type UnaryOp int

// Unary kernels.
const (
	ReLU    UnaryOp = iota // dst = max(x, 0)
	Sigmoid                // dst = 1 / (1 + e^(−x))
)

func (op UnaryOp) String() string {
	switch op {
	case ReLU:
		return "relu"
	case Sigmoid:
		return "sigmoid"
	}
	return fmt.Sprintf("UnaryOp(%d)", int(op))
}

// Stats are counters a device keeps for tests and diagnostics.
type Stats struct {
	LiveBytes   int64 // bytes in buffers handed out and not yet freed
	PooledBytes int64 // bytes held in free lists for reuse
	Allocs      int64 // Alloc calls that created a new native allocation
	Reuses      int64 // Alloc calls served from the pool
	HostReads   int64 // device→host copies (Read calls)
	Submits     int64 // command batches handed to the device queue
	Dispatches  int64 // kernel launches
}

// Device is an opened adapter. Methods may be called from any goroutine.
//
// Kernels operate on float32 elements; n, m, k are element counts. A kernel
// may run asynchronously: it is ordered with respect to every other call on
// the same device, and its result is visible to a later Read.
type Device interface {
	Info() Info

	// Alloc returns a buffer holding size bytes, contents undefined. Size 0
	// is valid. The buffer's Size is exactly size, whatever the backend
	// rounds its allocation up to.
	Alloc(size int64) (Buffer, error)
	// Free returns b to the device. Freeing twice is a no-op.
	Free(b Buffer)
	// Write copies src into the start of dst. The caller may reuse src as
	// soon as Write returns.
	Write(dst Buffer, src []byte) error
	// Read copies the start of src into dst, waiting for pending kernels.
	Read(src Buffer, dst []byte) error

	// Binary computes dst[i] = a[i] op b[i] for i < n.
	Binary(op BinaryOp, dst, a, b Buffer, n int) error
	// Unary computes dst[i] = op(src[i]) for i < n.
	Unary(op UnaryOp, dst, src Buffer, n int) error
	// MatMul computes the row-major product dst[m×n] = a[m×k] · b[k×n].
	// dst must not alias a or b (ErrInvalid); elementwise kernels allow it.
	MatMul(dst, a, b Buffer, m, k, n int) error

	// Sync waits for every kernel issued so far and reports any failure
	// that happened asynchronously since the last Sync or Read.
	Sync() error
	// Stats returns a snapshot of the device counters.
	Stats() Stats
	// Close releases the device and every buffer. Closing twice is a no-op.
	Close() error
}
