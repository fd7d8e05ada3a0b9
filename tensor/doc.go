// Package tensor provides n-dimensional arrays that live on a device — a
// GPU through WebGPU, or the CPU through a pure-Go backend — and the
// operations of a deep-learning framework on them, with PyTorch's
// semantics. Importing the package registers both backends.
//
// # Devices
//
// A [Device] is opened by name with [Open]: "cpu", "webgpu" (the same as
// "webgpu:0") or "webgpu:N". [Adapters] lists what can be opened, and
// [BackendErrors] says why a backend listed nothing (for WebGPU, usually a
// missing native library; `make deps` installs one). Devices are
// process-wide: opening a name twice returns the same *Device.
//
// [Default] picks a device once per process:
//
//  1. the device named by the environment variable WEBTENSOR_DEVICE, if set;
//  2. else the first discrete GPU, then the first integrated GPU;
//  3. else "cpu".
//
// Software GPU adapters (hal.AdapterCPU, such as llvmpipe) and adapters of
// unknown type are used only when named explicitly, because the CPU backend
// is faster than a software rasterizer. [DefaultName] reports the choice
// without opening anything.
//
// # Placement
//
// By default ([Explicit]) placement is PyTorch's: an op runs on the device
// that holds its operands, creation functions put data on the device asked
// for, and operands on different devices are misuse: a panic with an
// *[Error] naming the op and each side's shape, dtype and device.
// [Tensor.To] moves a tensor.
//
// The process-wide [Placement] policy ([SetPlacement], or the environment
// variable WEBTENSOR_PLACEMENT=explicit|auto|force-gpu|force-cpu|
// minimize-transfers at start-up) can route ops instead. Every public op
// that computes from tensors places its operands once, at its entry, and
// then runs whole on the chosen device (a composite such as Conv2d or
// LayerNorm never splits across devices). [Auto] routes by size: small work
// stays on the CPU, work from its family's threshold up goes to the
// accelerator ([PlacementGPU]: the GPU Default picks, or one set with
// [SetPlacementGPU]), ops whose operands share a GPU stay there, mixed
// operands meet on the accelerator above the threshold and else where most
// of their bytes are, and host data (FromFloat32, …) for the accelerator
// below the creation threshold stays on the CPU until an op needs it
// elsewhere. [ForceGPU] and [ForceCPU] run every placed op, and put new
// host data, on one device; [MinimizeTransfers] moves only mixed operands,
// to where most bytes are. Ops that write their operands (Step, BatchNorm's
// running statistics in training) run where those are under every policy.
// Per-family [Thresholds] come from cmd/calibrate's thresholds.json,
// [SetThresholds], or defaults by adapter type (a software adapter never
// wins); [PlacementStats] reports what ran where and what moved.
//
// The policy is not implemented here but in package internal/placement,
// which this package imports (so the policy, WEBTENSOR_PLACEMENT included,
// is in force in every program without an import of its own); the API
// above is its public face. Each op's public entry makes one call to it
// (routed), and no other code of this package reaches it.
//
// Out of GPU memory: the backend trims its buffer pool and retries the
// allocation once. If that fails too, under [Auto] and [MinimizeTransfers]
// a placed op (every op listed under [Placement], composites included;
// not Step or BatchNorm's in-place training update) copies its operands to
// the CPU and runs again there, whole: its result is on the CPU, the GPU's
// failures that it recorded are retracted (Device.Sync does not report
// them), and PlacementCounters.OOMFallbacks counts it. Under [Explicit],
// [ForceGPU] and [ForceCPU], and for ops that are not placed (views, Cast,
// Contiguous, Pad, OneHot, creation, To), the result carries an *Error
// wrapping hal.ErrOutOfMemory, naming the op, the shape and dtype
// allocated, the device and its pool, and Device.Sync reports it.
// A tensor beyond the device's maxBufferSize is hal.ErrTooLarge instead:
// no amount of freeing makes it fit. WEBTENSOR_WEBGPU_MEMORY_LIMIT (bytes,
// read when a device opens) caps a WebGPU device's memory, to share a GPU
// or to test the path.
//
// # Device loss
//
// A GPU device can be lost (a driver reset, a GPU removed). The first
// operation, read or Sync that sees it recovers the [Device]: the same
// *Device then runs on a new backend device on the same adapter, else the
// best other adapter, else the CPU. Tensors of the lost backend device
// fail every use with an *Error wrapping hal.ErrDeviceLost; new ones work.
// [Device.Lost], [Device.LostErr], [Device.Generation] and [OnDeviceLost]
// let a training loop restore its last checkpoint; [Device.ForceLoss]
// simulates a loss for tests. The mechanism is package internal/recovery,
// a decorator around the backend's hal.Device that every Device is wrapped
// in; the rest of this package sees it only through the narrow interface
// its Device holds (backend, in device.go).
//
// # Profiling
//
// [Device.StartProfile] and [Device.StopProfile] record the ops issued on
// a device, each timed on the host around its call, and the kernels the
// backend timed where it implements hal.Profiler; package profile turns
// the [Recording] into a table and a trace, and is what users call.
//
// # Dtypes
//
// [Float32] runs everywhere; [Int32] holds indices, labels, argmax results
// and the masks that comparisons produce; [Float64] runs on the CPU
// backend; [Float16] runs on the CPU backend (stored as binary16, computed
// in float32) and on WebGPU adapters with the shader-f16 feature. Binary
// ops need operands of one dtype, except that Int32 division promotes to
// Float32 as torch.div does; Sqrt, Exp and the other float functions
// compute Int32 inputs in Float32. [Tensor.Cast] converts. [Ops] and
// [Supports] say which op runs for which dtype on which device; the README
// has the table (cmd/optable).
//
// [Int64] is PyTorch's long: it runs on the CPU backend wherever Int32
// runs (creation, copies and casts, comparisons, Neg, Abs, Sign, Add, Sub,
// Mul, Maximum, Minimum, Clamp, Where, Sum, Prod, Max, Min, ArgMax, ArgMin,
// and as the index of Gather, IndexSelect, ScatterAdd and embeddings),
// wrapping on overflow as Go's int64 does. Division and the float
// functions compute it in Float32, as Int32. [FromInt64] and
// [Tensor.Int64s] move it exactly; a cast between Int64 and a float, and
// the values Full and Arange fill, pass through float64, exact while
// |v| ≤ 2⁵³; between Int32 and Int64 casts are exact (saturating into
// Int32). Reductions of Int64 are exact in int64 (Sum and Prod wrap).
// ArgMax and ArgMin give Int32 (PyTorch gives int64: Cast when it
// matters), as do the indices of Sort, Argsort, TopK and KthValue.
//
// # Int64 on WebGPU
//
// WGSL has no 64-bit integers, so a WebGPU device does not hold Int64: its
// Capabilities leave Int64 out of every kernel, and [HoldsInt64] reports
// false. The rule is narrowing: Int64 data moved onto such a device —
// [FromInt64], [Tensor.To], a checkpoint load — becomes an Int32 tensor
// with the same values, and a value outside the int32 range is an error
// wrapping [ErrInt64Overflow] that names the op, the value, its position
// and the device (a panic from FromInt64, as for other bad input; a
// failed tensor from To, returned by its reads). [Tensor.Int64s] reads
// such a tensor back as int64. Ops that would make an Int64 tensor on the
// device itself (Cast(Int64), Full with Int64) are unsupported there and
// panic with hal.ErrUnsupported naming the op, as for any dtype a device
// lacks. Moved back to the CPU, a narrowed tensor stays Int32.
//
// # Masks
//
// Masks are Int32 tensors of 0 and 1: the comparisons (Eq, Lt, …) write
// them, and [Where] and the masked ops take any Int32 (nonzero is true),
// where PyTorch uses bool tensors. There is no Bool dtype: an Int32 mask
// runs on every device, WebGPU included, and a PyTorch bool mask converts
// with FromInt32.
//
// The activations built from others (Sigmoid, SiLU, GELU, GELUTanh, ELU,
// LeakyReLU, Softplus), Softmax, LogSoftmax, Conv2d and [Step] run a
// device's fused kernel where it declares one for the dtype, and
// otherwise a composition of the kernels every device has (hal.Optional
// lists them), to the same tolerance, so a backend without the fused
// kernels runs them all.
//
// [Conv3d] has no kernel of its own on any device: it is composed of
// Conv2d. By default it runs one Conv2d per depth tap and sums them; the
// environment variable WEBTENSOR_CONV3D=stack ([EnvConv3d], read at each
// call) gathers the depth slices each output slice reads into the
// channels and runs one Conv2d for them all instead, which holds more
// memory and ran slower on an H200 (the bench's conv3d, stack, and
// conv3d-taps rows compare the two).
//
// # Functions and methods
//
// One rule decides whether an op is a package function or a method, as
// gonum's mat states its own:
//
//   - An op whose operands take part on equal terms, or that makes a tensor
//     from several or from none, is a package function: creation (Zeros,
//     FromFloat32 …), the elementwise ops (Add, Exp, Clamp …, Where),
//     joins (Concat, Stack), linear algebra (MatMul, MatVec, Outer, Gemm,
//     and torch.linalg's Solve, Inv, Cholesky, QR, SVD, Eigh …),
//     the neural-network ops (Conv2d, Softmax, LayerNorm, Dropout …) and
//     Step.
//   - An op that works on one tensor along its own axes, storage or dtype is
//     a method of it: reductions (Sum, Mean, ArgMax, LogSumExp …), sorting
//     and scans (Sort, TopK, KthValue, Cumsum …), shape
//     and views (Reshape, Transpose, Slice, Pad …), indexing (Gather,
//     IndexSelect, ScatterAdd), Cast, Contiguous, To, the readers, and the
//     Scalar forms of the binary ops (AddScalar …), whose scalar is not a
//     tensor.
//   - So that expressions chain (x.Mul(w).Add(b).Exp()), every elementwise
//     op of hal's op table also has a method on its first operand that
//     calls the function, as do MatMul, Concat, Softmax and LogSoftmax. No
//     other op has both forms.
//
// The elementwise functions without parameters and every elementwise
// method are generated from hal's op table (zz_generated_ops.go, written by
// cmd/opgen through go generate); docs/adding-an-op.md in the repository
// says how an op is added.
//
// # Semantics
//
// Binary ops and [Where] broadcast as NumPy: shapes align at the last axis
// and size-1 axes stretch (to 0 as well). Dims may be negative, counting
// from the end. Reductions take a list of dims (nil for all) and keepDim
// (SumAll, MeanAll, MaxAll and MinAll are the nil, false forms, PyTorch's
// x.sum() and friends);
// the sum of nothing is 0, the product 1, the maximum of nothing is
// misuse. [MatMul] follows torch.matmul: vectors are promoted and batch
// axes broadcast. [Tensor.Slice] clamps its bounds as Python does.
//
// # Views
//
// Reshape (when the strides allow), Flatten, Transpose, Permute, T, Expand,
// BroadcastTo, Slice, Squeeze, Unsqueeze, Split and Chunk return views: new
// tensors over the same device memory with other strides, made without
// running anything. The kernels read strides directly, so ops on views
// never copy their operands; [Tensor.Contiguous] packs a view with one copy
// kernel when a caller wants dense memory (BenchmarkStridedRead measures
// the two strategies).
//
// # Errors
//
// Misuse is a bug in the calling program, so it panics with an *[Error]
// whose message names the operation, the shapes, dtypes and devices:
// mismatched shapes or dtypes, a bad axis, tensors on different devices
// (under [Explicit], the default; other policies move them), use of a
// released tensor. An op or dtype the device cannot run panics
// the same way with an *Error wrapping hal.ErrUnsupported, naming op,
// dtype and device; nothing ever falls back to the host. [Catch] turns such
// a panic back into an error where that is more convenient, for example in
// a REPL or a server handler.
//
// Failures of the device itself (out of memory, device lost) are not the
// caller's fault and do not panic. Operations do not wait for the device,
// so they cannot return them either: the failure is recorded on the result
// tensor, propagates to every tensor computed from it, and surfaces as an
// error from [Tensor.Float32s] (and the other readers) and [Device.Sync].
// These errors wrap the hal sentinels, so errors.Is(err, hal.ErrOutOfMemory)
// works. An index out of range in Gather, IndexSelect, ScatterAdd or
// OneHot is such a failure (hal.ErrIndexOutOfRange, naming the index and
// the axis size): checking indices on the host would mean reading them
// back, so the kernel gives a defined result (0, or the addition skipped)
// and reports the index.
// Every backend reports it as a *hal.IndexError, one wording on every
// device.
//
// The methods that have an error result return their misuse instead of
// panicking: [Tensor.Item] of a tensor that is not one element (an *Error
// wrapping [ErrNotScalar]), and the readers and [Tensor.Err] of a released
// or nil tensor.
//
// # Printing
//
// A tensor implements fmt.Formatter: %v and %s print it as PyTorch's repr
// (tensor([[1.0000, 2.5000], …]) with PyTorch's number formats, summary
// of tensors over 1000 elements with "...", and device and dtype appended
// when they are not the CPU and float32); %+v appends the shape and a
// precision (%.2v) sets the decimals ([Tensor.Repr] takes all of
// [PrintOptions]). Printing reads the tensor, so it waits for the device;
// a failed tensor prints <error: …> and a released one <released>.
// [Tensor.String] stays a short description ("tensor [2 2] float32 on
// cpu") that reads nothing: it is what error messages use.
//
// # Randomness
//
// A [Generator] draws from the counter-based Philox4x32-10 stream on the
// device: the values depend only on the seed and the order of draws, so
// every device produces the same stream.
//
// # Concurrency
//
// Devices and tensors may be used by many goroutines at once: ops, reads
// (Float32s …), To, Release and Device.Sync from any goroutine on one
// shared device, and one tensor read by any number of goroutines at once
// as the input of their ops (TestStress runs 128 goroutines so, under
// -race, on both backends). Each goroutine sees its own results in order;
// the order between goroutines is whatever their calls make it. Kernel
// caches, buffer pools and the WebGPU fusion engine are shared and
// locked.
//
// What needs the caller's own synchronization:
//   - writing a tensor that other goroutines use: [Step] (and optimizers
//     built on it) and BatchNorm's running statistics write into their
//     operands; a goroutine reading one while another updates it sees the
//     value before or after the update, or a mix;
//   - releasing a tensor that another goroutine still uses: any use after
//     Release panics, whichever goroutine released it;
//   - the process-wide settings: [SetPlacement], [SetPlacementGPU],
//     [SetThresholds] are safe to call at any time, but change the routing
//     of every goroutine's next ops, and [PlacementStats] counts them all;
//     a [Generator] is one stream, so goroutines drawing from one get
//     values in an order they do not control (give each its own).
//
// The graph package records per value, so independent graphs can be built
// and differentiated in parallel; its no-grad mode belongs to a scope, not
// to the process (see graph.NoGrad).
// An optimizer of package nn/optim must not Step from two goroutines at
// once, nor while another goroutine runs Backward into its parameters.
//
// # Lifetimes
//
// A tensor holds a reference to device memory until [Tensor.Release];
// views share memory, which goes back to the device when its last tensor
// is released. Release is idempotent; any other use of a released tensor
// panics. Tensors that are garbage collected without Release are released
// by a cleanup, but only as a safety net: the collector does not see device
// memory and may run long after the device is full.
//
// A [Scope] releases many tensors at once, as TensorFlow's tf.tidy: Use
// puts a tensor in, every tensor an operation computes from a member (a
// view included) joins, Keep takes one out, and Close releases the
// members. [Tidy] runs a function in a scope and keeps its result. A loop
// whose body runs in a scope stays at its working set without a single
// Release (TestScopeChainStaysNearWorkingSet). Membership follows the
// data, not the goroutine: a scope never frees another goroutine's
// tensors unless they were computed from its own members, and tensors made
// from host data or by creation functions join only through Use. Package
// graph has the same for values (graph.Scope), with a no-grad option.
//
// On a WebGPU device a result released before its work ran may never be
// computed: the engine skips the stores nobody can read. That is what a
// program wants, but not a benchmark, which must run what it times:
// [Device.Flush] submits the work issued so far without waiting for it,
// so that results released afterwards are still computed (bench keeps a
// few results alive and flushes before releasing older ones).
//
// Operations never copy data back to the host; only the readers
// (Float32s, Float64s, Int32s, Item) and To do. A chain of operations runs
// on the device and is read back once.
package tensor

//go:generate go run ../cmd/opgen tensor
