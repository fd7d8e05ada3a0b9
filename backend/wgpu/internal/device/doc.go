// Package device is the runtime of one WebGPU device, under package wgpu's
// kernel families: it owns the native device and everything that is not a
// kernel.
//
//   - Memory (device.go, memory.go, pool.go): Alloc and Free over a pool of
//     native buffers by size class, the memory cap, trimming on out of
//     memory; an Allocation is a native buffer, or a window of one that a
//     kernel binds in place of it.
//   - The recorder (recorder.go): Post hands a dispatch (a Kernel, the
//     allocations it binds, its uniform block, its grid) to the worker
//     thread, which batches dispatches into command buffers and isolates
//     the one the device refuses.
//   - The kernel cache (kernels.go): Kernel compiles a WGSL source once per
//     name and remembers the sources the device cannot run.
//   - Profiling (profile.go): StartProfile and StopProfile time every
//     dispatch, with timestamp queries in a pass per dispatch where the
//     device has timestamp-query, else on the host with a wait per
//     dispatch; off, the recorder pays one nil check per dispatch.
//   - Failures: the fault word a kernel reports bad data through
//     (fault.go), the failures of posted commands, reported once by the
//     next Read or Sync, and device loss (lost.go).
//
// The package holds no kernel source and no fusion state. The one
// thing it asks of the layer above is SetQuiesce: the way to hold the
// fusion engine still while the pool is trimmed. Package wgpu flushes the
// pending fused group itself before Write, Read, Sync and Close, and hears
// of freed buffers through Retire before they go back to the pool
// (Recycle).
//
// Every native call runs on the process's WebGPU worker thread
// (internal/gpu); methods are safe for concurrent use, except those
// documented as worker only.
package device
