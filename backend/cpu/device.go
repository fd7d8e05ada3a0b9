package cpu

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// Device is an opened CPU adapter. The zero value is not usable; call New
// or open it through hal.
type Device struct {
	info hal.Info
	caps hal.Capabilities

	mu      sync.Mutex
	closed  bool
	buffers map[*buffer]struct{} // live buffers, released by Close
	pool    pool                 // freed memory kept for reuse

	liveBytes, allocs, reuses, hostReads, dispatches atomic.Int64
	peakBytes                                        atomic.Int64 // highest liveBytes since open or ResetPeakLiveBytes
}

var _ hal.Device = (*Device)(nil)

// New returns a new CPU device.
func New() *Device {
	return &Device{info: adapterInfo(), caps: capabilities(), buffers: make(map[*buffer]struct{}), pool: pool{limit: poolLimit}}
}

// Info describes the adapter.
func (d *Device) Info() hal.Info { return d.info }

// Capabilities lists the kernels and dtypes this device runs. The caller
// gets its own copy.
func (d *Device) Capabilities() hal.Capabilities {
	c := make(hal.Capabilities, len(d.caps))
	for k, v := range d.caps {
		c[k] = v
	}
	return c
}

// Alloc returns a buffer of size bytes with undefined contents. Its memory
// is a whole size class of 8-byte words (see wordClass), taken from the
// pool when a freed buffer of that class is there: a fresh Go slice of
// tens of megabytes costs a millisecond or more of page faults and zeroing,
// as much as the kernel that fills it.
func (d *Device) Alloc(size int64) (hal.Buffer, error) {
	if size < 0 || size > maxBufferSize {
		return nil, fmt.Errorf("cpu: alloc %d bytes: %w", size, hal.ErrInvalid)
	}
	n := (size + 7) / 8
	class := wordClass(n)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("cpu: alloc: %w", hal.ErrClosed)
	}
	data := d.pool.get(class)
	if data != nil {
		d.reuses.Add(1)
	} else {
		// Zeroing a large slice takes long: not under the lock.
		d.mu.Unlock()
		var err error
		if data, err = makeWords(class); err != nil {
			return nil, err
		}
		d.allocs.Add(1)
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return nil, fmt.Errorf("cpu: alloc: %w", hal.ErrClosed)
		}
	}
	defer d.mu.Unlock()
	b := &buffer{dev: d, size: size, data: data[:n]}
	d.buffers[b] = struct{}{}
	d.notePeak(d.liveBytes.Add(class * 8))
	return b, nil
}

// makeWords turns the runtime's panic for a length it cannot represent
// into an error. An allocation that merely exceeds free memory still
// aborts the process, as every Go allocation does.
func makeWords(n int64) (s []uint64, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("cpu: alloc %d bytes: %w", n*8, hal.ErrOutOfMemory)
		}
	}()
	return make([]uint64, n), nil
}

// Free releases b. Freeing twice, or freeing a buffer of another device,
// does nothing.
func (d *Device) Free(b hal.Buffer) {
	buf, ok := b.(*buffer)
	if !ok || buf == nil || buf.dev != d {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.release(buf)
}

// release returns buf's memory to the pool; d.mu must be held.
func (d *Device) release(buf *buffer) {
	if buf.data == nil {
		return
	}
	words := buf.data[:cap(buf.data)]
	d.liveBytes.Add(-int64(len(words)) * 8)
	buf.data = nil
	delete(d.buffers, buf)
	if !d.closed {
		d.pool.put(words)
	}
}

// Write copies src into the start of dst.
func (d *Device) Write(dst hal.Buffer, src []byte) error {
	words, err := d.buffer("write", dst, int64(len(src)))
	if err != nil {
		return err
	}
	copy(bytesOf(words), src)
	return nil
}

// Read copies the start of src into dst. Kernels finish before they
// return, so there is nothing to wait for.
func (d *Device) Read(src hal.Buffer, dst []byte) error {
	words, err := d.buffer("read", src, int64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, bytesOf(words))
	d.hostReads.Add(1)
	return nil
}

// buffer checks that the device is open and that b is a live buffer of it
// holding at least n bytes, and returns its words.
func (d *Device) buffer(what string, b hal.Buffer, n int64) ([]uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf, err := d.own(b)
	if err != nil {
		return nil, fmt.Errorf("cpu: %s: %w", what, err)
	}
	if n > buf.size {
		return nil, fmt.Errorf("cpu: %s: %d bytes do not fit a buffer of %d: %w", what, n, buf.size, hal.ErrInvalid)
	}
	return buf.data, nil
}

// own returns b as a live buffer of this open device; d.mu must be held.
func (d *Device) own(b hal.Buffer) (*buffer, error) {
	if d.closed {
		return nil, hal.ErrClosed
	}
	buf, ok := b.(*buffer)
	switch {
	case !ok || buf == nil || buf.dev != d:
		return nil, fmt.Errorf("not a buffer of this device: %w", hal.ErrInvalid)
	case buf.data == nil:
		return nil, fmt.Errorf("buffer was freed: %w", hal.ErrClosed)
	}
	return buf, nil
}

// operand is a validated view together with its buffer's words. The words
// stay addressable after the lock is dropped even if another goroutine
// frees the buffer meanwhile, because the garbage collector keeps them
// alive, though a later Alloc may then reuse them: freeing a buffer that a
// kernel still uses is the caller's race, as on every backend.
type operand struct {
	hal.View
	words []uint64
}

// operands validates the views of one kernel call: each must pass
// View.Check and live in an open buffer of this device. names lists the
// operands' names for error messages, separated by spaces; the zero View
// is accepted only where its name ends in "?".
func (d *Device) operands(op, names string, views ...hal.View) ([]operand, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("cpu: %s: %w", op, hal.ErrClosed)
	}
	out := make([]operand, len(views))
	i := -1
	for name := range strings.FieldsSeq(names) {
		i++
		v := views[i]
		if strings.HasSuffix(name, "?") {
			if v.Buf == nil {
				continue
			}
			name = name[:len(name)-1]
		}
		if err := v.Check(); err != nil {
			return nil, fmt.Errorf("cpu: %s: %s: %w", op, name, err)
		}
		buf, err := d.own(v.Buf)
		if err != nil {
			return nil, fmt.Errorf("cpu: %s: %s: %w", op, name, err)
		}
		out[i] = operand{View: v, words: buf.data}
	}
	return out, nil
}

// dispatch counts one kernel launch.
func (d *Device) dispatch() { d.dispatches.Add(1) }

// Sync reports whether the device is still open; CPU kernels complete
// synchronously and report their failures at the call, so none can be
// pending.
func (d *Device) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("cpu: sync: %w", hal.ErrClosed)
	}
	return nil
}

// Stats returns a snapshot of the counters. Kernels run at the call, so
// Submits stays zero.
func (d *Device) Stats() hal.Stats {
	d.mu.Lock()
	pooled := d.pool.bytes
	d.mu.Unlock()
	return hal.Stats{
		LiveBytes:   d.liveBytes.Load(),
		PooledBytes: pooled,
		Allocs:      d.allocs.Load(),
		Reuses:      d.reuses.Load(),
		HostReads:   d.hostReads.Load(),
		Dispatches:  d.dispatches.Load(),

		PeakLiveBytes: d.peakBytes.Load(),
	}
}

// ResetPeakLiveBytes restarts Stats' PeakLiveBytes from the bytes live now.
func (d *Device) ResetPeakLiveBytes() { d.peakBytes.Store(d.liveBytes.Load()) }

// notePeak raises the peak to live if it is higher.
func (d *Device) notePeak(live int64) {
	for {
		peak := d.peakBytes.Load()
		if live <= peak || d.peakBytes.CompareAndSwap(peak, live) {
			return
		}
	}
}

// Close frees every buffer and empties the pool; later calls fail with
// hal.ErrClosed.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for b := range d.buffers {
		d.release(b)
	}
	d.pool.drain()
	return nil
}
