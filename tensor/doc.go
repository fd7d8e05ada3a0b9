// Package tensor provides float32 tensors that live on a device: a GPU
// through WebGPU, or the CPU through a pure-Go backend. Importing the
// package registers both backends.
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
// # Errors
//
// Misuse is a bug in the calling program, so it panics with an *[Error]
// whose message names the operation, the shapes and the devices:
// mismatched shapes, tensors on different devices, use of a released
// tensor. [Catch] turns such a panic back into an error where that is more
// convenient, for example in a REPL or a server handler.
//
// Failures of the device itself (out of memory, device lost) are not the
// caller's fault and do not panic. Operations do not wait for the device,
// so they cannot return them either: the failure is recorded on the result
// tensor, propagates to every tensor computed from it, and surfaces as an
// error from [Tensor.Float32s] and [Device.Sync]. These errors wrap the
// hal sentinels, so errors.Is(err, hal.ErrOutOfMemory) works.
//
// # Lifetimes
//
// A tensor holds device memory until [Tensor.Release]. Release is
// idempotent; any other use of a released tensor panics. Tensors that are
// garbage collected without Release are freed by a cleanup, but only as a
// safety net: the collector does not see device memory and may run long
// after the device is full.
//
// Operations never copy data back to the host; only Float32s and To do.
// A chain of operations runs on the device and is read back once.
package tensor
