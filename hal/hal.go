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
// Every kernel is declared once, in the kernel table ([KernelTable],
// kerneltable.go; the elementwise ones in the op table, optable.go): its
// key, the dtypes it is defined for, its tier, whether it is
// differentiable and how it fuses. Backends declare their Capabilities
// from it, and the conformance suite tests each of its kernels.
//
// The kernels come in two tiers (tiers.go): a required tier, from which
// package tensor builds every operation, and an optional tier of fused
// kernels (activations such as GELU, Softmax, Conv2D, the optimizer
// Steps) that tensor composes from required kernels where a device does
// not declare them in its Capabilities. [Optional] says which tier a
// kernel is in; a backend may implement the optional tier for speed, and
// the conformance suite (package haltest) accepts one without it.
//
// Besides Device, a backend may implement optional capabilities that
// callers find by type assertion: [Profiler] (profile.go) times its
// kernels for package profile; without it, ops are timed on the host.
// [Flusher] (flush.go) submits recorded work without waiting for it.
//
// Error policy: every method returns an error for environmental failures
// (library missing, no adapter, out of memory, device lost, shader
// rejected). Callers test them with errors.Is against the sentinels below.
// Backends may defer asynchronous failures (a GPU validation error, a lost
// device) to the next Sync or Read.
package hal

import (
	"errors"
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
	// ErrTooLarge means a tensor or operand is larger than the device
	// allows (maxBufferSize, maxStorageBufferBindingSize, workgroup grid
	// limits) and the kernel cannot split it into pieces that fit.
	ErrTooLarge = errors.New("too large for the device")
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
	// ErrIndexOutOfRange means a gather or scatter kernel met an index
	// outside its axis. The kernel still completes with defined results
	// (see Device.Gather); backends that run asynchronously report it at
	// the next Sync or Read.
	ErrIndexOutOfRange = errors.New("index out of range")
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

// Buffer is an opaque allocation owned by the Device that made it. It holds
// raw bytes; the kernels read them through a [View], which gives them a
// dtype, shape and strides.
type Buffer interface {
	// Size is the usable size in bytes, as requested from Alloc.
	Size() int64
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
	// Kernels is the number of kernels compiled for the device so far
	// (WebGPU compute pipelines; 0 on a backend that compiles none). It
	// levels off once a program has run each of its ops: kernels take
	// sizes, offsets and constants as parameters (a GEMM compiles a
	// variant per size class).
	Kernels int64
	// PeakLiveBytes is the highest LiveBytes has been since the device
	// was opened or since the last ResetPeakLiveBytes: what a pass needed
	// at its worst (gradient checkpointing is measured by it).
	PeakLiveBytes int64
}

// Device is an opened adapter. Methods may be called from any goroutine.
//
// Kernels read and write [View]s: a dtype, a shape and element strides over
// a buffer. Unless a method says otherwise:
//
//   - dst must be contiguous (View.Contiguous) and its dtype is the result
//     dtype; inputs may have any strides, including 0 for broadcast axes,
//     and their shapes must equal the shape the method names;
//   - every view must lie inside its buffer and have rank ≤ MaxRank;
//   - the elementwise kernels (Copy, Unary, Binary, Where) may write in
//     place: dst may share a buffer with an input only if both views are
//     identical. Every other kernel's dst must not share a buffer with an
//     input. Breaking this is ErrInvalid;
//   - an op or dtype the backend cannot run is ErrUnsupported, and
//     Capabilities says so beforehand;
//   - empty views (a zero in the shape) are valid and do nothing.
//
// A kernel may run asynchronously: it is ordered with respect to every
// other call on the same device, and its result is visible to a later Read.
type Device interface {
	Info() Info
	// Capabilities lists the kernels and dtypes this device runs.
	Capabilities() Capabilities

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

	// Fill sets dst's elements, in row-major order i = 0, 1, …, to
	// start + i·step, rounded to nearest for float dtypes and truncated
	// toward zero for Int32 and Int64 (step 0 fills a constant). dst may have any
	// non-overlapping strides.
	Fill(dst View, start, step float64) error
	// Random fills dst's elements, in row-major order i, from the
	// Philox4x32-10 block at counter offset+i under key seed (see the
	// Distribution constants for how a block becomes a value). dst is
	// contiguous, float.
	Random(dst View, dist Distribution, p float64, seed, offset uint64) error
	// Copy writes src's elements into dst, converting the dtype (floats to
	// integers truncate toward zero and saturate; NaN becomes 0; between
	// integers exactly, saturating into Int32). Shapes must
	// be equal; dst may have any non-overlapping strides.
	Copy(dst, src View) error
	// Unary computes dst = op(src, args) elementwise; shapes equal.
	Unary(op UnaryOp, dst, src View, args Args) error
	// Binary computes dst = a op b elementwise; a, b and dst have dst's
	// shape (broadcast with stride 0) and a and b one dtype. Comparisons
	// write an Int32 mask of 0 and 1.
	Binary(op BinaryOp, dst, a, b View) error
	// Where computes dst = cond ≠ 0 ? a : b elementwise; cond is Int32; a,
	// b and dst share a dtype; all have dst's shape.
	Where(dst, cond, a, b View) error
	// Reduce reduces the last `reduced` axes of src: dst's shape is
	// src.Shape[:len(src.Shape)-reduced]. Reducing zero elements gives the
	// op's identity (0 for sum, 1 for prod, −Inf for logsumexp); max, min,
	// argmax and argmin of zero elements are ErrInvalid. ArgMax and ArgMin
	// write Int32 row-major indices into the flattened reduced axes, the
	// first one on ties; NaN wins both.
	Reduce(op ReduceOp, dst, src View, reduced int) error
	// MatMul computes dst = alpha·a·b + beta·dst over matrices in the last
	// two axes: a is [batch…, M, K], b is [batch…, K, N] and dst
	// [batch…, M, N], batch axes equal (broadcast with stride 0). Transposes
	// are strides. With beta = 0, dst's old contents are ignored, NaN
	// included. K = 0 is not an empty call: it sets dst = beta·dst.
	MatMul(dst, a, b View, alpha, beta float64) error
	// Gather computes dst[i] = src[i with axis coordinate index[i]], as
	// torch.gather: index is Int32 (or Int64, on a backend that holds
	// Int64) and has dst's shape; src has dst's rank
	// and any size along axis. An index outside [0, src.Shape[axis]) makes
	// that element 0 and the kernel fail with ErrIndexOutOfRange (possibly
	// at the next Sync or Read).
	Gather(dst, src, index View, axis int) error
	// ScatterAdd adds src[i] into dst[i with axis coordinate index[i]], as
	// torch.Tensor.scatter_add_: index and src share a shape of dst's rank.
	// dst is read and written. Out-of-range indices are skipped and fail
	// as in Gather. The order of float additions is unspecified.
	ScatterAdd(dst, index, src View, axis int) error
	// Im2Col unfolds NCHW images src [N, C, H, W] into columns dst
	// [N, C·KH·KW, OH·OW] (row c·KH·KW + kh·KW + kw, column oh·OW + ow),
	// as torch.nn.functional.unfold; padding reads as 0. The column grid
	// OH×OW is w.OutH×w.OutW.
	Im2Col(dst, src View, w Window) error
	// Col2Im folds columns src [N, C·KH·KW, w.OutH·w.OutW] back into images
	// dst [N, C, H, W], summing overlaps, as torch.nn.functional.fold: it is
	// the adjoint of Im2Col, it overwrites dst, and H, W come from dst (so
	// that a transposed convolution's output padding fits).
	Col2Im(dst, src View, w Window) error
	// Pool2D pools NCHW src into dst [N, C, OH, OW]. PoolMax also writes
	// Int32 indices (h·W + w in the input plane, as PyTorch) into indices,
	// which must otherwise be the zero View; padding never wins a max, a
	// NaN does, and which of several equal maxima gives the index is
	// unspecified. PoolAvg with dilation averages the taps that land in
	// the clipped window.
	// PoolAvg divides by the window clipped to the padded input when
	// countIncludePad, else to the input.
	Pool2D(op PoolOp, dst, indices, src View, w Window, countIncludePad bool) error
	// GridSample samples NCHW src at grid [N, OH, OW, 2] (x, y in [−1, 1],
	// src's dtype) bilinearly into dst [N, C, OH, OW], as
	// torch.nn.functional.grid_sample.
	GridSample(dst, src, grid View, padding GridPadding, alignCorners bool) error
	// Conv2D convolves NCHW src [N, C, H, W] with weight
	// [Cout, C/groups, w.KH, w.KW] into dst [N, Cout, w.OutH, w.OutW], as
	// torch.nn.functional.conv2d without bias (cross-correlation; padding
	// reads as 0). It is one kernel: no unfolded copy of the input needs
	// to exist.
	Conv2D(dst, src, weight View, w Window, groups int) error
	// Softmax writes softmax(src) (log_softmax when log) along the last
	// axis into dst, of src's shape and float dtype, as torch.softmax: a
	// row of zero length is empty, a row of −Inf only gives NaN.
	Softmax(dst, src View, log bool) error
	// LayerNorm writes (x − mean)/√(var + eps) of each row of src along
	// its last axis into dst, of src's shape and float dtype: the mean and
	// the biased variance of the row, as torch.nn.functional.layer_norm
	// without weight and bias. The variance is computed from the centered
	// values (two passes), in float32 for Float16 (rounded once) and
	// Float32, in float64 for Float64. eps is finite and not negative; a
	// row of zero length is empty, a row holding a NaN or an infinity
	// gives NaN.
	LayerNorm(dst, src View, eps float64) error

	// Step updates param in place by one step of the fused update op,
	// reading grad (multiplied by scale's single element when scale is not
	// the zero View: gradient clipping without a read-back) and reading
	// and writing state, whose length and order op documents. param, grad
	// and every state view are contiguous, of one shape and one float
	// dtype; none shares a buffer with another. scale has that dtype.
	Step(op Optimizer, param, grad View, state []View, scale View, a StepArgs) error

	// Linalg runs a solve, inverse or decomposition (see LinalgOp) on the
	// matrices in the last two axes of a (and b, for LinalgSolve; else the
	// zero View), writing the op's outputs into dst, which must not share
	// a buffer with a or b. A matrix on which the op fails (singular, not
	// positive-definite, no convergence) fails the call with a
	// *LinalgError after every output is written. The family is optional
	// and has no composition: see LinalgOp.
	Linalg(op LinalgOp, dst []View, a, b View, args LinalgArgs) error
	// Sort sorts each row of src along its last axis, as torch.sort: values
	// (src's dtype) and indices (Int32, each value's position in its row)
	// both have src's shape. Ascending order puts NaN after +Inf, so NaN
	// comes first when descending; −0 and +0 are equal. With stable, equal
	// keys (NaNs included) keep their input order; without it their order
	// is unspecified. values and indices are contiguous and share no buffer
	// with src or each other.
	Sort(values, indices, src View, descending, stable bool) error
	// Scan writes the inclusive scan op of each row of src along its last
	// axis into dst, of src's shape and dtype, as torch.cumsum, cumprod and
	// logcumsumexp. The order of float operations is unspecified (a
	// float sum's rounding depends on it).
	Scan(op ScanOp, dst, src View) error
	// Resample applies the sparse matrix taps along axis of src into dst:
	// dst has src's shape but taps.Rows() along axis, and for each output
	// position j there, dst[…, j, …] = Σₑ taps.Weight[e]·src[…, taps.Index[e], …]
	// over e in [taps.Offsets[j], taps.Offsets[j+1]), in that order (a
	// row without entries is 0). It is torch.nn.functional.interpolate
	// along one axis, and with the transposed taps its gradient (no
	// atomics: every output gathers). Float16 and float32 compute in
	// float32. dst is contiguous and shares no buffer with src. A row
	// holds at most MaxResampleRow entries.
	Resample(dst, src View, axis int, taps ResampleTaps) error

	// Sync waits for every kernel issued so far and reports any failure
	// that happened asynchronously since the last Sync or Read.
	Sync() error
	// Stats returns a snapshot of the device counters.
	Stats() Stats
	// Close releases the device and every buffer. Closing twice is a no-op.
	Close() error
	// ResetPeakLiveBytes sets Stats' PeakLiveBytes to the current
	// LiveBytes, to measure the peak of what follows.
	ResetPeakLiveBytes()
}
