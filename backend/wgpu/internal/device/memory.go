//go:build cgo || (js && wasm)

package device

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// MemoryLimitEnv names the environment variable that caps, in bytes, the
// memory a device's Alloc may hold (live plus pooled buffers). It is read
// when a device opens. A GPU rarely runs out of memory on demand, so the
// cap is how tests (and users who share a GPU) exercise the out-of-memory
// path: an Alloc over the cap fails exactly as a refused allocation does,
// after the same trim and retry. Unset or 0 means no cap.
const MemoryLimitEnv = "WEBTENSOR_WEBGPU_MEMORY_LIMIT"

// MemoryLimitFromEnv parses MemoryLimitEnv.
func MemoryLimitFromEnv() (int64, error) {
	s := strings.TrimSpace(os.Getenv(MemoryLimitEnv))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("webgpu: %s=%q: want a byte count ≥ 0: %w", MemoryLimitEnv, s, hal.ErrInvalid)
	}
	return n, nil
}

// SetMemoryLimit caps the bytes of live plus pooled buffers at bytes (0:
// no cap) and returns the previous cap. Buffers already held stay; the cap
// applies to the next allocation that needs a new buffer.
func (d *Device) SetMemoryLimit(bytes int64) (previous int64) {
	if bytes < 0 {
		bytes = 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	previous, d.memLimit = d.memLimit, bytes
	return previous
}

// newAllocation creates a native buffer of class bytes, counting it as
// live. A refusal, by the cap or the driver, wraps hal.ErrOutOfMemory.
func (d *Device) newAllocation(class int64) (*Allocation, error) {
	// Reserve under the lock, so that concurrent Allocs cannot together
	// pass the cap.
	d.mu.Lock()
	if d.memLimit > 0 && d.live+d.pool.bytes+class > d.memLimit {
		live, pooled, limit := d.live, d.pool.bytes, d.memLimit
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: memory limit %d bytes (%s) reached: %d live + %d pooled + %d requested",
			hal.ErrOutOfMemory, limit, MemoryLimitEnv, live, pooled, class)
	}
	d.live += class
	d.peak = max(d.peak, d.live)
	d.mu.Unlock()

	var handle webgpu.Buffer
	var err error
	gpu.Run(func() {
		handle, err = d.native.CreateBuffer(uint64(class), webgpu.UsageStorage|webgpu.UsageCopySrc|webgpu.UsageCopyDst)
	})
	if err != nil {
		d.mu.Lock()
		d.live -= class
		d.mu.Unlock()
		return nil, classify(err)
	}
	d.allocs.Add(1)
	return &Allocation{handle: handle, capacity: class}, nil
}

// ReleaseCached gives every pooled buffer back to the driver, as
// torch.cuda.empty_cache does, and returns the bytes released. Live
// buffers are untouched.
func (d *Device) ReleaseCached() int64 { return d.trim(true) }

// trim gives every pooled buffer, and the big read-back buffer, back to
// the driver, and returns the bytes released. It is the out-of-memory
// path's one attempt at making room, so it may wait for the GPU. mayTrim
// false means the caller is a producer inside a fused emission
// (AllocScratch): it holds the fusion engine's lock, which is not
// reentrant, and the group being emitted may still name pooled buffers, so
// nothing is trimmed.
func (d *Device) trim(mayTrim bool) int64 {
	if !mayTrim {
		return 0
	}
	// A pending fused group may still read buffers that were freed into
	// the pool; emit it first, holding the fusion lock until the pool is
	// drained so that no new group can name a drained buffer.
	var free []*Allocation
	closed := false
	drain := func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if closed = d.closed; !closed {
			free = d.pool.drain()
		}
	}
	if d.quiesce != nil {
		d.quiesce(drain)
	} else {
		drain()
	}
	if closed {
		return 0
	}

	var released int64
	for _, a := range free {
		released += a.capacity
	}
	gpu.Run(func() {
		// Recorded commands may name drained buffers: submit them, and
		// wait so that the driver really has the memory back.
		d.rec.flush()
		_ = d.waitIdle() // a failure here surfaces at the next Read or Sync
		for _, a := range free {
			a.handle.Release()
		}
		if d.bigStagingClass != 0 {
			d.bigStaging.Release()
			d.bigStaging, d.bigStagingClass = webgpu.Buffer{}, 0
		}
	})
	return released
}

// allocFailure describes a failed Alloc: the size, the device, and the
// pool's state after trimming.
func (d *Device) allocFailure(size, class, trimmed int64, err error) error {
	d.mu.Lock()
	live, pooled, limit := d.live, d.pool.bytes, d.memLimit
	d.mu.Unlock()
	state := fmt.Sprintf("%d bytes live, %d pooled, %d released by trimming the pool", live, pooled, trimmed)
	if limit > 0 {
		state += fmt.Sprintf(", limit %d", limit)
	}
	return fmt.Errorf("webgpu: Alloc(%d bytes, size class %d) on %s: %w (%s)", size, class, d, err, state)
}
