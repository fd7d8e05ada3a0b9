//go:build cgo || (js && wasm)

package device

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// Device is the runtime of one WebGPU device. Its methods are safe for
// concurrent use; the native calls all happen on the process's WebGPU
// worker thread.
//
// Kernels are recorded, not run: Post hands a dispatch to the worker, which
// encodes it into one compute pass of a pending command encoder, and the
// batch is submitted when it fills, before a host write, and on Read or
// Sync. Nothing waits for the GPU except Read and Sync.
type Device struct {
	info    hal.Info
	limits  webgpu.Limits
	session *gpu.Session
	native  *webgpu.Device

	mu     sync.Mutex // guards pool, closed, memLimit and the live-bytes counter
	pool   pool
	live   int64
	peak   int64 // highest live since open or ResetPeakLiveBytes
	closed bool
	// memLimit caps live plus pooled bytes (0: none); see memory.go.
	memLimit int64
	// quiesce, when set, runs a function while no deferred work (fusion)
	// is pending or can start; see SetQuiesce.
	quiesce func(fn func())

	allocs, reuses, hostReads atomic.Int64

	kernels kernelCache

	// Worker-only state: touched only by functions running on the WebGPU
	// worker (gpu.Run).
	rec     *recorder
	staging map[int64]webgpu.Buffer
	// bigStaging is the one cached staging buffer above maxStagingCached,
	// of size class bigStagingClass (0: none).
	bigStaging      webgpu.Buffer
	bigStagingClass int64

	fence webgpu.Buffer // a word copied out to wait for the queue
	fault *Allocation   // the fault word; see fault.go
	// faultArmed is set when a recorded kernel binds the fault word, so
	// that only then does Read or Sync pay for reading it back.
	faultArmed bool
	// The optional features the device was created with (gpu.WantedFeatures).
	hasF16, hasSubgroups, hasTimestamps bool
	// deferred is the first failure of a posted command since the last
	// Read or Sync, which reports it once; moreDeferred counts the ones
	// after it, which that report mentions.
	deferred     error
	moreDeferred int
}

// Buffer is a hal.Buffer of a Device.
type Buffer struct {
	dev   *Device
	alloc *Allocation
	size  int64
	freed atomic.Bool
}

// Size is the byte count asked for; the allocation may hold more.
func (b *Buffer) Size() int64 { return b.size }

// Allocation is the native buffer that b binds.
func (b *Buffer) Allocation() *Allocation { return b.alloc }

// Open creates a device on adapter a of session s. info and limits are
// the adapter's, possibly lowered by the caller; the device keeps to them.
// memLimit caps live plus pooled bytes (0: none; see SetMemoryLimit).
func Open(s *gpu.Session, a *gpu.Adapter, info hal.Info, limits webgpu.Limits, memLimit int64) (*Device, error) {
	d := &Device{info: info, limits: limits, session: s, staging: map[int64]webgpu.Buffer{}, memLimit: memLimit}
	var err error
	gpu.Run(func() {
		var features []uint32
		for _, f := range gpu.WantedFeatures {
			if slices.Contains(a.Raw.Features, f) {
				features = append(features, f)
			}
		}
		enable, disable := gpu.Toggles()
		gpu.Quietly(func() { d.native, err = s.Instance.RequestDevice(a.Handle, features, enable, disable) })
		if err == nil {
			// What the device really has, not what was asked for.
			d.hasF16 = d.native.HasFeature(gpu.FeatureShaderF16)
			d.hasSubgroups = d.native.HasFeature(gpu.FeatureSubgroups)
			d.hasTimestamps = d.native.HasFeature(gpu.FeatureTimestampQuery)
		}
		if err == nil {
			d.rec, err = newRecorder(d)
		}
		if err == nil {
			d.fence, err = d.native.CreateBuffer(4, webgpu.UsageStorage|webgpu.UsageCopySrc)
		}
		if err == nil {
			var h webgpu.Buffer
			h, err = d.native.CreateBuffer(faultBytes, webgpu.UsageStorage|webgpu.UsageCopySrc|webgpu.UsageCopyDst)
			d.fault = &Allocation{handle: h, capacity: faultBytes}
			d.native.WriteBuffer(h, 0, make([]byte, faultBytes))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("webgpu: opening %s: %v: %w", info.Name, err, hal.ErrNoAdapter)
	}
	return d, nil
}

// Limits are the limits the device keeps to. The caller reads them; only
// a test lowers one, before the device is used.
func (d *Device) Limits() *webgpu.Limits { return &d.limits }

// SetQuiesce gives the device the way to hold deferred work still: the
// fusion engine's quiesce, which records its pending group and runs fn
// holding its lock. Trimming drains the pool inside it, so that no pending
// group reads, or can come to name, a drained buffer. Call it once, before
// the device is used.
func (d *Device) SetQuiesce(quiesce func(fn func())) { d.quiesce = quiesce }

// HasF16 reports whether the device was created with shader-f16.
func (d *Device) HasF16() bool { return d.hasF16 }

// HasSubgroups reports whether the device was created with subgroups.
func (d *Device) HasSubgroups() bool { return d.hasSubgroups }

func (d *Device) String() string { return fmt.Sprintf("webgpu(%s, %s)", d.info.Name, d.info.Backend) }

// Alloc returns a buffer of at least size bytes, from the pool if
// possible. Out of memory, it trims the pool and tries once more.
func (d *Device) Alloc(size int64) (hal.Buffer, error) { return d.alloc(size, true) }

// AllocScratch is Alloc for a producer allocating scratch during a fused
// emission, which must not trim the pool (see trim).
func (d *Device) AllocScratch(size int64) (hal.Buffer, error) { return d.alloc(size, false) }

func (d *Device) alloc(size int64, mayTrim bool) (hal.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("webgpu: Alloc(%d): negative size: %w", size, hal.ErrInvalid)
	}
	if uint64(size) > d.limits.MaxBufferSize {
		// No amount of freeing makes this fit: it is not out of memory.
		return nil, fmt.Errorf("webgpu: Alloc(%d bytes) on %s: larger than the device's maxBufferSize %d: %w", size, d, d.limits.MaxBufferSize, hal.ErrTooLarge)
	}
	if err := d.LostErr("Alloc"); err != nil {
		return nil, err // the pool's buffers died with the device
	}
	class := SizeClass(size)
	if uint64(class) > d.limits.MaxBufferSize {
		class = (size + 3) &^ 3 // the size class would not fit; the size does
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("webgpu: Alloc on closed device: %w", hal.ErrClosed)
	}
	a := d.pool.get(class)
	if a != nil {
		d.live += a.capacity
		d.peak = max(d.peak, d.live)
		d.mu.Unlock()
		d.reuses.Add(1)
		return &Buffer{dev: d, alloc: a, size: size}, nil
	}
	d.mu.Unlock()

	// Out of memory: give the pool's buffers back to the driver and try
	// once more before failing (memory.go).
	a, err := d.newAllocation(class)
	var trimmed int64
	if errors.Is(err, hal.ErrOutOfMemory) {
		trimmed = d.trim(mayTrim)
		a, err = d.newAllocation(class)
	}
	if err != nil {
		return nil, d.allocFailure(size, class, trimmed, err)
	}
	return &Buffer{dev: d, alloc: a, size: size}, nil
}

// Retire marks hb freed and returns its allocation, or nil when hb is not
// a live buffer of this device. The caller tells whoever may still name
// the allocation (fusion), then hands it to Recycle. Free is the two.
func (d *Device) Retire(hb hal.Buffer) *Allocation {
	b, ok := hb.(*Buffer)
	if !ok || b.dev != d || b.freed.Swap(true) {
		return nil
	}
	return b.alloc
}

// Recycle returns a retired allocation to the pool. Commands already
// recorded that use it still see its old contents: every later use is
// ordered after them.
func (d *Device) Recycle(a *Allocation) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // Close already released it and zeroed the count
	}
	d.live -= a.capacity
	d.pool.put(a)
}

// Free returns hb's memory to the pool: Retire, then Recycle.
func (d *Device) Free(hb hal.Buffer) {
	if a := d.Retire(hb); a != nil {
		d.Recycle(a)
	}
}

// Own checks that hb is a live buffer of this device holding at least
// bytes bytes; op names the operation in the error.
func (d *Device) Own(op string, hb hal.Buffer, bytes int64) (*Buffer, error) {
	b, ok := hb.(*Buffer)
	switch {
	case !ok || b == nil || b.dev != d:
		return nil, fmt.Errorf("webgpu: %s: buffer does not belong to %s: %w", op, d.info.Name, hal.ErrInvalid)
	case b.freed.Load():
		return nil, fmt.Errorf("webgpu: %s: buffer already freed: %w", op, hal.ErrClosed)
	case bytes > b.size:
		return nil, fmt.Errorf("webgpu: %s: needs %d bytes, buffer holds %d: %w", op, bytes, b.size, hal.ErrInvalid)
	}
	return b, nil
}

// Closed reports whether Close has run.
func (d *Device) Closed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// Write copies src into the start of dst, after every command recorded
// so far.
func (d *Device) Write(dst hal.Buffer, src []byte) error {
	b, err := d.Own("Write", dst, int64(len(src)))
	if err != nil {
		return err
	}
	if d.Closed() {
		return fmt.Errorf("webgpu: Write on closed device: %w", hal.ErrClosed)
	}
	if err := d.LostErr("Write"); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	gpu.Run(func() {
		// queue.WriteBuffer takes effect before any command not yet
		// submitted, so recorded commands go first.
		d.rec.flush()
		whole := len(src) &^ 3
		d.native.WriteBuffer(b.alloc.handle, 0, src[:whole])
		if tail := src[whole:]; len(tail) > 0 {
			// Writes must be whole 4-byte words; pad the last one.
			var word [4]byte
			copy(word[:], tail)
			d.native.WriteBuffer(b.alloc.handle, uint64(whole), word[:])
		}
	})
	return nil
}

// Read copies the start of src into dst after all recorded work.
func (d *Device) Read(src hal.Buffer, dst []byte) error {
	b, err := d.Own("Read", src, int64(len(dst)))
	if err != nil {
		return err
	}
	if d.Closed() {
		return fmt.Errorf("webgpu: Read on closed device: %w", hal.ErrClosed)
	}
	if err := d.LostErr("Read"); err != nil {
		return err
	}
	d.hostReads.Add(1)
	gpu.Run(func() {
		d.rec.flush()
		if err = d.takeFailure(); err != nil || len(dst) == 0 {
			return
		}
		var staging webgpu.Buffer
		if staging, err = d.stagingBuffer(int64(len(dst))); err != nil {
			return
		}
		if err = d.native.Read(b.alloc.handle, staging, dst); err != nil {
			err = classify(err)
			return
		}
		err = d.takeFailure()
	})
	if err != nil && d.Lost() {
		return d.LostErr("Read") // lost while reading: the map failed
	}
	if err != nil {
		return fmt.Errorf("webgpu: Read(%d bytes) on %s: %w", len(dst), d.info.Name, err)
	}
	return nil
}

// maxStagingCached bounds the read-back buffers the device keeps: one per
// size class up to this size (under 32 MiB in all), so that repeated reads
// map and unmap the same buffer, and one larger buffer, the last one a big
// read needed, which a big read of another size class replaces. Host-visible
// memory stays bounded by the largest recent read.
const maxStagingCached = 16 << 20

// stagingBuffer returns a map-readable buffer of at least size bytes,
// reused across reads. Worker only.
func (d *Device) stagingBuffer(size int64) (webgpu.Buffer, error) {
	class := SizeClass(size)
	if s, ok := d.staging[class]; ok {
		return s, nil
	}
	if class > maxStagingCached && class == d.bigStagingClass {
		return d.bigStaging, nil
	}
	s, err := d.native.CreateBuffer(uint64(class), webgpu.UsageMapRead|webgpu.UsageCopyDst)
	if err != nil {
		return s, classify(err)
	}
	if class <= maxStagingCached {
		d.staging[class] = s
		return s, nil
	}
	if d.bigStagingClass != 0 {
		d.bigStaging.Release()
	}
	d.bigStaging, d.bigStagingClass = s, class
	return s, nil
}

// waitIdle blocks until the queue has run everything submitted. Worker only.
func (d *Device) waitIdle() error {
	staging, err := d.stagingBuffer(4)
	if err != nil {
		return err
	}
	return classify(d.native.WaitIdle(d.fence, staging))
}

// takeFailure returns, and forgets, the asynchronous failures since the
// last call: a posted command that failed, an uncaptured device error, a
// fault a kernel recorded (fault.go). Each is reported once: the device
// keeps no failure past the Read or Sync that reports it, so one bad
// request does not fail the ones after it. A device loss is the exception,
// which TakeError reports every time. Worker only.
func (d *Device) takeFailure() error {
	var errs []error
	if err := d.deferred; err != nil {
		if d.moreDeferred > 0 {
			err = fmt.Errorf("%w (and %d more failures of posted commands)", err, d.moreDeferred)
		}
		errs = append(errs, err)
		d.deferred, d.moreDeferred = nil, 0
	}
	if err := d.native.TakeError(); err != nil {
		errs = append(errs, classify(err))
	}
	if err := d.checkFault(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...) // nil for none
}

// Fail records the failure of a posted command, for the next Read or Sync
// to report. Worker only: call it from a function given to gpu.Post.
func (d *Device) Fail(err error) {
	if d.deferred == nil {
		d.deferred = err
	} else {
		d.moreDeferred++
	}
}

// Sync waits for all recorded work and reports failures since the last
// Sync or Read.
func (d *Device) Sync() error {
	if d.Closed() {
		return fmt.Errorf("webgpu: Sync on closed device: %w", hal.ErrClosed)
	}
	if err := d.LostErr("Sync"); err != nil {
		return err
	}
	var err error
	gpu.Run(func() {
		d.rec.flush()
		if err = d.waitIdle(); err != nil {
			return
		}
		err = d.takeFailure()
	})
	if err != nil && d.Lost() {
		return d.LostErr("Sync")
	}
	if err != nil {
		return fmt.Errorf("webgpu: Sync on %s: %w", d.info.Name, err)
	}
	return nil
}

// Flush submits the recorded batch, if any, and returns without waiting
// for it (hal.Flusher).
func (d *Device) Flush() error {
	if d.Closed() {
		return fmt.Errorf("webgpu: Flush on closed device: %w", hal.ErrClosed)
	}
	if err := d.LostErr("Flush"); err != nil {
		return err
	}
	gpu.Run(d.rec.flush)
	return nil
}

// Stats returns the device counters.
func (d *Device) Stats() hal.Stats {
	d.mu.Lock()
	live, pooled, peak := d.live, d.pool.bytes, d.peak
	d.mu.Unlock()
	submits, dispatches := d.rec.counts()
	d.kernels.mu.Lock()
	kernels := len(d.kernels.m)
	d.kernels.mu.Unlock()
	return hal.Stats{
		Kernels:     int64(kernels),
		LiveBytes:   live,
		PooledBytes: pooled,
		Allocs:      d.allocs.Load(),
		Reuses:      d.reuses.Load(),
		HostReads:   d.hostReads.Load(),
		Submits:     submits,
		Dispatches:  dispatches,

		PeakLiveBytes: peak,
	}
}

// ResetPeakLiveBytes restarts the peak from the bytes live now.
func (d *Device) ResetPeakLiveBytes() {
	d.mu.Lock()
	d.peak = d.live
	d.mu.Unlock()
}

// Close waits for recorded work, then releases every pooled buffer, cached
// object and the device. Buffers still held by callers become invalid.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	free := d.pool.drain()
	// Buffers still held by callers die with the device.
	d.live, d.peak = 0, 0
	d.mu.Unlock()
	var err error
	gpu.Run(func() {
		d.rec.flush()
		err = d.waitIdle()
		for _, a := range free {
			a.handle.Release()
		}
		for _, s := range d.staging {
			s.Release()
		}
		if d.bigStagingClass != 0 {
			d.bigStaging.Release()
		}
		d.rec.release()
		d.fence.Release()
		d.fault.handle.Release()
		d.native.Destroy()
	})
	if err != nil && !errors.Is(classify(err), hal.ErrDeviceLost) && !d.Lost() {
		return fmt.Errorf("webgpu: Close %s: %w", d.info.Name, classify(err))
	}
	return nil
}

// classify maps a binding failure onto the hal sentinels.
func classify(err error) error {
	var e *webgpu.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case webgpu.OutOfMemory:
		return fmt.Errorf("%w: %s", hal.ErrOutOfMemory, e.Message)
	case webgpu.Lost:
		return fmt.Errorf("%w: %s", hal.ErrDeviceLost, e.Message)
	case webgpu.Validation:
		// The library refused a command as the backend issued it.
		return fmt.Errorf("%w: %v", hal.ErrInvalid, err)
	}
	return err
}

// Unpooled returns a storage buffer of size bytes outside the pool, the
// memory cap and the memory counters, for a probe the device runs once
// when it opens (a fresh device's memory state stays what its user
// predicts); Discard releases it once the probe has been read.
func (d *Device) Unpooled(size int64) (*Buffer, error) {
	var h webgpu.Buffer
	var err error
	gpu.Run(func() {
		h, err = d.native.CreateBuffer(uint64(size), webgpu.UsageStorage|webgpu.UsageCopySrc|webgpu.UsageCopyDst)
	})
	if err != nil {
		return nil, classify(err)
	}
	return &Buffer{dev: d, alloc: &Allocation{handle: h, capacity: size}, size: size}, nil
}

// Discard releases a buffer of Unpooled, after the work that binds it has
// run (a Read of it waits for that).
func (d *Device) Discard(b *Buffer) {
	gpu.Run(func() { b.alloc.handle.Release() })
}
