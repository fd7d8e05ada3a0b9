package cpu

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// Device is an opened CPU adapter. The zero value is not usable; call New
// or open it through hal.
type Device struct {
	info hal.Info

	mu      sync.Mutex
	closed  bool
	buffers map[*buffer]struct{} // live buffers, released by Close

	liveBytes, allocs, hostReads, dispatches atomic.Int64
}

var _ hal.Device = (*Device)(nil)

// New returns a new CPU device.
func New() *Device {
	return &Device{info: adapterInfo(), buffers: make(map[*buffer]struct{})}
}

// Info describes the adapter.
func (d *Device) Info() hal.Info { return d.info }

// Alloc returns a zeroed buffer of size bytes, rounded up internally to a
// whole number of float32s.
func (d *Device) Alloc(size int64) (hal.Buffer, error) {
	if size < 0 || size > maxBufferSize {
		return nil, fmt.Errorf("cpu: alloc %d bytes: %w", size, hal.ErrInvalid)
	}
	data, err := makeFloats((size + 3) / 4)
	if err != nil {
		return nil, err
	}
	b := &buffer{dev: d, size: size, data: data}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("cpu: alloc: %w", hal.ErrClosed)
	}
	d.buffers[b] = struct{}{}
	d.liveBytes.Add(int64(len(data)) * 4)
	d.allocs.Add(1)
	return b, nil
}

// makeFloats turns the runtime's panic for a length it cannot represent
// into an error. An allocation that merely exceeds free memory still
// aborts the process, as every Go allocation does.
func makeFloats(n int64) (s []float32, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("cpu: alloc %d floats: %w", n, hal.ErrOutOfMemory)
		}
	}()
	return make([]float32, n), nil
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

// release drops buf's memory; d.mu must be held.
func (d *Device) release(buf *buffer) {
	if buf.data == nil {
		return
	}
	d.liveBytes.Add(-int64(len(buf.data)) * 4)
	buf.data = nil
	delete(d.buffers, buf)
}

// Write copies src into the start of dst.
func (d *Device) Write(dst hal.Buffer, src []byte) error {
	s, err := d.resolve("write", operand{dst, int64(len(src))})
	if err != nil {
		return err
	}
	copy(bytesOf(s[0]), src)
	return nil
}

// Read copies the start of src into dst. Kernels finish before they
// return, so there is nothing to wait for.
func (d *Device) Read(src hal.Buffer, dst []byte) error {
	s, err := d.resolve("read", operand{src, int64(len(dst))})
	if err != nil {
		return err
	}
	copy(dst, bytesOf(s[0]))
	d.hostReads.Add(1)
	return nil
}

// Sync reports whether the device is still open; CPU kernels complete
// synchronously, so no failure can be pending.
func (d *Device) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("cpu: sync: %w", hal.ErrClosed)
	}
	return nil
}

// Stats returns a snapshot of the counters. Nothing is pooled or submitted,
// so PooledBytes, Reuses and Submits stay zero.
func (d *Device) Stats() hal.Stats {
	return hal.Stats{
		LiveBytes:  d.liveBytes.Load(),
		Allocs:     d.allocs.Load(),
		HostReads:  d.hostReads.Load(),
		Dispatches: d.dispatches.Load(),
	}
}

// Close frees every buffer; later calls fail with hal.ErrClosed.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for b := range d.buffers {
		d.release(b)
	}
	return nil
}

// operand is a buffer argument and the number of bytes the call touches.
type operand struct {
	buf   hal.Buffer
	bytes int64
}

// resolve checks that the device is open and that each operand's buffer
// belongs to it, is live and holds the bytes the call touches, and returns
// the buffers' data in order. The data stays valid after the lock is
// dropped even if another goroutine frees the buffer meanwhile, because the
// garbage collector keeps the slice alive.
func (d *Device) resolve(what string, ops ...operand) ([3][]float32, error) {
	var out [3][]float32
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return out, fmt.Errorf("cpu: %s: %w", what, hal.ErrClosed)
	}
	for i, op := range ops {
		buf, ok := op.buf.(*buffer)
		switch {
		case !ok || buf == nil || buf.dev != d:
			return out, fmt.Errorf("cpu: %s: operand %d is not a buffer of this device: %w", what, i, hal.ErrInvalid)
		case buf.data == nil:
			return out, fmt.Errorf("cpu: %s: operand %d was freed: %w", what, i, hal.ErrClosed)
		case op.bytes > buf.size:
			return out, fmt.Errorf("cpu: %s: operand %d needs %d bytes, has %d: %w", what, i, op.bytes, buf.size, hal.ErrInvalid)
		}
		out[i] = buf.data
	}
	return out, nil
}
