//go:build cgo

package wgpu

import (
	"errors"
	"fmt"
	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// Device is a WebGPU device. Its methods are safe for concurrent use; the
// native calls all happen on the process's WebGPU worker thread.
//
// Kernels are recorded, not run: they are posted to the worker, which
// encodes them into one compute pass of a pending command encoder, and the
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
	closed bool
	// memLimit caps live plus pooled bytes (0: none); see memory.go.
	memLimit int64

	allocs, reuses, hostReads atomic.Int64

	kernels kernelCache
	ewCache sync.Map      // ewKey → *kernel, skipping ewKernelName per launch
	fuse    fusionPlanner // the pending fused chain; see fusion.go

	// Worker-only state: touched only by functions running on the WebGPU
	// worker (gpu.Run).
	rec     *recorder
	staging map[int64]webgpu.Buffer
	// bigStaging is the one cached staging buffer above maxStagingCached,
	// of size class bigStagingClass (0: none).
	bigStaging      webgpu.Buffer
	bigStagingClass int64

	fence webgpu.Buffer // a word copied out to wait for the queue
	fault *allocation   // the fault word; see fault.go
	// faultArmed is set when a recorded kernel binds the fault word, so
	// that only then does Read or Sync pay for reading it back.
	faultArmed bool
	// The optional features the device was created with (gpu.WantedFeatures).
	hasF16, hasSubgroups, hasTimestamps bool
	caps                                hal.Capabilities
	// deferred is the first failure of a posted command since the last
	// Read or Sync, which reports it once; moreDeferred counts the ones
	// after it, which that report mentions.
	deferred     error
	moreDeferred int
}

var _ hal.Device = (*Device)(nil)

// buffer is a hal.Buffer of a Device.
type buffer struct {
	dev   *Device
	alloc *allocation
	size  int64
	freed atomic.Bool
}

func (b *buffer) Size() int64 { return b.size }

// Open opens the adapter at index ("webgpu:index").
func Open(index int) (hal.Device, error) {
	s, err := gpu.Start()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(s.Adapters) {
		return nil, fmt.Errorf("webgpu: adapter %d does not exist (%d found): %w", index, len(s.Adapters), hal.ErrNoAdapter)
	}
	limit, err := memoryLimitFromEnv()
	if err != nil {
		return nil, err
	}
	a := s.Adapters[index]
	d := &Device{info: a.Info, limits: a.Raw.Limits, session: s, staging: map[int64]webgpu.Buffer{}, memLimit: limit}
	d.fuse = &fuser{d: d}
	if err := applyLimitEnv(&d.limits, &d.info.Limits); err != nil {
		return nil, err // artificial binding and buffer limits: chunk.go
	}
	gpu.Run(func() {
		var features []uint32
		for _, f := range gpu.WantedFeatures {
			if slices.Contains(a.Raw.Features, f) {
				features = append(features, f)
			}
		}
		gpu.Quietly(func() { d.native, err = s.Instance.RequestDevice(a.Handle, features) })
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
			d.fault = &allocation{handle: h, capacity: faultBytes}
			d.native.WriteBuffer(h, 0, make([]byte, faultBytes))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("webgpu: opening %s: %v: %w", a.Info.Name, err, hal.ErrNoAdapter)
	}
	d.caps = d.declareCapabilities()
	return d, nil
}

// Info describes the adapter the device runs on.
func (d *Device) Info() hal.Info { return d.info }

func (d *Device) String() string { return fmt.Sprintf("webgpu(%s, %s)", d.info.Name, d.info.Backend) }

// Alloc returns a buffer of at least size bytes, from the pool if possible.
func (d *Device) Alloc(size int64) (hal.Buffer, error) { return d.alloc(size, true) }

// alloc is Alloc; fused false is a producer allocating scratch during an
// emission (see sink), which must not trim the pool (see trim).
func (d *Device) alloc(size int64, fused bool) (hal.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("webgpu: Alloc(%d): negative size: %w", size, hal.ErrInvalid)
	}
	if uint64(size) > d.limits.MaxBufferSize {
		// No amount of freeing makes this fit: it is not out of memory.
		return nil, fmt.Errorf("webgpu: Alloc(%d bytes) on %s: larger than the device's maxBufferSize %d: %w", size, d, d.limits.MaxBufferSize, hal.ErrTooLarge)
	}
	if err := d.lostErr("Alloc"); err != nil {
		return nil, err // the pool's buffers died with the device
	}
	class := sizeClass(size)
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
		d.mu.Unlock()
		d.reuses.Add(1)
		return &buffer{dev: d, alloc: a, size: size}, nil
	}
	d.mu.Unlock()

	// Out of memory: give the pool's buffers back to the driver and try
	// once more before failing (memory.go).
	a, err := d.newAllocation(class)
	var trimmed int64
	if errors.Is(err, hal.ErrOutOfMemory) {
		trimmed = d.trim(fused)
		a, err = d.newAllocation(class)
	}
	if err != nil {
		return nil, d.allocFailure(size, class, trimmed, err)
	}
	return &buffer{dev: d, alloc: a, size: size}, nil
}

// Free returns b's memory to the pool. Commands already recorded that use
// it still see its old contents: every later use is ordered after them.
func (d *Device) Free(hb hal.Buffer) { d.free(hb, true) }

// free is Free; fused false skips telling the fusion engine, for a
// producer freeing its scratch during an emission (see sink).
func (d *Device) free(hb hal.Buffer, fused bool) {
	b, ok := hb.(*buffer)
	if !ok || b.dev != d || b.freed.Swap(true) {
		return
	}
	if fused {
		d.fuse.freed(b.alloc) // before the pool may hand it out again
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // Close already released it and zeroed the count
	}
	d.live -= b.alloc.capacity
	d.pool.put(b.alloc)
}

// own checks that hb is a live buffer of this device holding at least
// bytes bytes.
func (d *Device) own(op string, hb hal.Buffer, bytes int64) (*buffer, error) {
	b, ok := hb.(*buffer)
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

func (d *Device) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// Write copies src into the start of dst.
func (d *Device) Write(dst hal.Buffer, src []byte) error {
	b, err := d.own("Write", dst, int64(len(src)))
	if err != nil {
		return err
	}
	if d.isClosed() {
		return fmt.Errorf("webgpu: Write on closed device: %w", hal.ErrClosed)
	}
	if err := d.lostErr("Write"); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	d.fuse.flush()
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
	b, err := d.own("Read", src, int64(len(dst)))
	if err != nil {
		return err
	}
	if d.isClosed() {
		return fmt.Errorf("webgpu: Read on closed device: %w", hal.ErrClosed)
	}
	if err := d.lostErr("Read"); err != nil {
		return err
	}
	d.hostReads.Add(1)
	d.fuse.flush()
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
		return d.lostErr("Read") // lost while reading: the map failed
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
	class := sizeClass(size)
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

// fail records the failure of a posted command, for the next Read or Sync
// to report. Worker only.
func (d *Device) fail(err error) {
	if d.deferred == nil {
		d.deferred = err
	} else {
		d.moreDeferred++
	}
}

// Sync waits for all recorded work and reports failures since the last
// Sync or Read.
func (d *Device) Sync() error {
	if d.isClosed() {
		return fmt.Errorf("webgpu: Sync on closed device: %w", hal.ErrClosed)
	}
	if err := d.lostErr("Sync"); err != nil {
		return err
	}
	d.fuse.flush()
	var err error
	gpu.Run(func() {
		d.rec.flush()
		if err = d.waitIdle(); err != nil {
			return
		}
		err = d.takeFailure()
	})
	if err != nil && d.Lost() {
		return d.lostErr("Sync")
	}
	if err != nil {
		return fmt.Errorf("webgpu: Sync on %s: %w", d.info.Name, err)
	}
	return nil
}

// Stats returns the device counters.
func (d *Device) Stats() hal.Stats {
	d.mu.Lock()
	live, pooled := d.live, d.pool.bytes
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
	}
}

// Close waits for recorded work, then releases every pooled buffer, cached
// object and the device. Buffers still held by callers become invalid.
func (d *Device) Close() error {
	d.fuse.flush()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	free := d.pool.drain()
	// Buffers still held by callers die with the device.
	d.live = 0
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
