//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// Device is a WebGPU device. Its methods are safe for concurrent use; the
// native calls all happen on the process's WebGPU worker thread.
//
// A Device is the kernel families and fusion over the device runtime
// (internal/device), which owns the native device, memory, the recorder,
// the kernel cache, the fault word and loss. Kernels are recorded, not
// run: the batch is submitted when it fills, before a host write, and on
// Read or Sync. Nothing waits for the GPU except Read and Sync.
type Device struct {
	rt   *device.Device
	info hal.Info
	// limits are the runtime's own, which the kernel families read to size
	// their launches: one copy, so that what a kernel is sized for and what
	// the runtime binds agree.
	limits *webgpu.Limits
	caps   hal.Capabilities

	ewCache sync.Map   // ewKey → *device.Kernel, skipping ewKernelName per launch
	reduce  reduceMode // how reductions plan and combine (reduce.go)
	// ewLanes is the elements one invocation of the contiguous
	// elementwise and fused paths computes: 4 or 8 (EWLanesEnv).
	ewLanes int
	fuse    fusionPlanner // the pending fused chain; see fusion.go
	// posted, when set (by tests), sees the name of every kernel
	// dispatched: which variant a launch took.
	posted atomic.Pointer[func(kernel string)]
	// subgroupRuns caches the subgroup probe at workgroup sizes other
	// than workgroupSize (int → bool; subgroups.go).
	subgroupRuns sync.Map
}

var _ hal.Device = (*Device)(nil)

// MemoryLimitEnv names the environment variable that caps, in bytes, the
// memory a device's Alloc may hold (live plus pooled buffers). It is read
// when a device opens. A GPU rarely runs out of memory on demand, so the
// cap is how tests (and users who share a GPU) exercise the out-of-memory
// path: an Alloc over the cap fails exactly as a refused allocation does,
// after the same trim and retry. Unset or 0 means no cap.
const MemoryLimitEnv = device.MemoryLimitEnv

// Open opens the adapter at index ("webgpu:index").
func Open(index int) (hal.Device, error) {
	s, err := gpu.Start()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(s.Adapters) {
		return nil, fmt.Errorf("webgpu: adapter %d does not exist (%d found): %w", index, len(s.Adapters), hal.ErrNoAdapter)
	}
	limit, err := device.MemoryLimitFromEnv()
	if err != nil {
		return nil, err
	}
	a := s.Adapters[index]
	info, limits := a.Info, a.Raw.Limits
	if err := applyLimitEnv(&limits, &info.Limits); err != nil {
		return nil, err // artificial binding and buffer limits: chunk.go
	}
	lanes, err := ewLanesFromEnv()
	if err != nil {
		return nil, err
	}
	rt, err := device.Open(s, a, info, limits, limit)
	if err != nil {
		return nil, err
	}
	d := &Device{rt: rt, info: info, limits: rt.Limits(), ewLanes: lanes}
	d.reduce = reduceMode{hardware: info.Type != hal.AdapterCPU, subgroups: rt.HasSubgroups() && d.subgroupsLaidOutInRuns()}
	f := &fuser{d: d}
	d.fuse = f
	d.rt.SetQuiesce(f.quiesce)
	d.caps = d.declareCapabilities()
	return d, nil
}

// Info describes the adapter the device runs on.
func (d *Device) Info() hal.Info { return d.info }

func (d *Device) String() string { return d.rt.String() }

// Alloc returns a buffer of at least size bytes, from the pool if possible.
func (d *Device) Alloc(size int64) (hal.Buffer, error) { return d.rt.Alloc(size) }

// alloc is Alloc; fused false is a producer allocating scratch during an
// emission (see sink), which must not trim the pool.
func (d *Device) alloc(size int64, fused bool) (hal.Buffer, error) {
	if fused {
		return d.rt.Alloc(size)
	}
	return d.rt.AllocScratch(size)
}

// Free returns b's memory to the pool. Commands already recorded that use
// it still see its old contents: every later use is ordered after them.
func (d *Device) Free(hb hal.Buffer) { d.free(hb, true) }

// free is Free; fused false skips telling the fusion engine, for a
// producer freeing its scratch during an emission (see sink).
func (d *Device) free(hb hal.Buffer, fused bool) {
	a := d.rt.Retire(hb)
	if a == nil {
		return
	}
	if fused {
		d.fuse.freed(a) // before the pool may hand it out again
	}
	d.rt.Recycle(a)
}

// Write copies src into the start of dst.
func (d *Device) Write(dst hal.Buffer, src []byte) error {
	d.fuse.flush()
	return d.rt.Write(dst, src)
}

// Read copies the start of src into dst after all recorded work.
func (d *Device) Read(src hal.Buffer, dst []byte) error {
	d.fuse.flush()
	return d.rt.Read(src, dst)
}

// Sync waits for all recorded work and reports failures since the last
// Sync or Read.
func (d *Device) Sync() error {
	d.fuse.flush()
	return d.rt.Sync()
}

// Flush records the pending fused group and submits everything recorded,
// without waiting for it (hal.Flusher): a buffer freed afterwards still
// receives the stores recorded before.
func (d *Device) Flush() error {
	d.fuse.flush()
	return d.rt.Flush()
}

var _ hal.Flusher = (*Device)(nil)

// Stats returns the device counters.
func (d *Device) Stats() hal.Stats { return d.rt.Stats() }

// ResetPeakLiveBytes restarts Stats' PeakLiveBytes from the bytes live now.
func (d *Device) ResetPeakLiveBytes() { d.rt.ResetPeakLiveBytes() }

// Close waits for recorded work, then releases every pooled buffer, cached
// object and the device. Buffers still held by callers become invalid.
func (d *Device) Close() error {
	d.fuse.flush()
	return d.rt.Close()
}

// SetMemoryLimit caps the bytes of live plus pooled buffers at bytes (0:
// no cap) and returns the previous cap. Buffers already held stay; the cap
// applies to the next allocation that needs a new buffer.
func (d *Device) SetMemoryLimit(bytes int64) (previous int64) { return d.rt.SetMemoryLimit(bytes) }

// ReleaseCached gives every pooled buffer back to the driver, as
// torch.cuda.empty_cache does, and returns the bytes released. Live
// buffers are untouched.
func (d *Device) ReleaseCached() int64 { return d.rt.ReleaseCached() }

// Lost reports whether the device has been lost. It is cheap enough to
// call before every operation.
func (d *Device) Lost() bool { return d.rt.Lost() }

// LostErr returns nil while the device lives, else an error wrapping
// hal.ErrDeviceLost with the library's reason and message.
func (d *Device) LostErr() error { return d.rt.LostErr("device") }

// ForceLoss loses the device on purpose, as a driver reset would, so that
// recovery code can be tested: Dawn's wgpuDeviceForceLoss fires the
// device-lost callback with message, and every later call fails with
// hal.ErrDeviceLost. It fails with hal.ErrUnsupported when the library
// has no force-loss call (wgpu-native), and with hal.ErrClosed after Close.
func (d *Device) ForceLoss(message string) error { return d.rt.ForceLoss(message) }
