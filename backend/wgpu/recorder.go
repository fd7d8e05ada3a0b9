//go:build cgo

package wgpu

import (
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
)

// recorder batches dispatches into one compute pass of a pending command
// encoder. It runs on the worker only.
//
// Kernel parameters travel in one uniform "ring" buffer bound with a
// dynamic offset: dispatch i of a batch reads slot i. At flush the slots
// are uploaded with queue.WriteBuffer, which lands after every earlier
// submission and before this one, so a single ring serves every batch.
type recorder struct {
	dev *Device

	open    bool
	encoder webgpu.Encoder
	pass    webgpu.Pass
	current *kernel // pipeline set in the open pass

	ring     webgpu.Buffer
	ringData []byte
	slotSize int
	slot     int

	groups map[groupKey]webgpu.BindGroup
	closed bool

	submits, dispatches atomic.Int64
}

const (
	ringSlots   = 256  // dispatches per batch
	paramsBytes = 256  // the largest uniform block a kernel may declare
	maxGroups   = 4096 // bind groups cached before the cache is reset
	maxBindings = 10   // storage buffers a kernel may bind
)

// groupKey identifies a bind group: a kernel and the buffer ranges bound.
type groupKey struct {
	kernel  *kernel
	bufs    [maxBindings]webgpu.Buffer
	offsets [maxBindings]uint64
	sizes   [maxBindings]uint64
}

func newRecorder(d *Device) (*recorder, error) {
	slot := int(d.limits.MinUniformBufferOffsetAlignment)
	if slot < paramsBytes {
		slot = paramsBytes
	}
	ring, err := d.native.CreateBuffer(uint64(slot*ringSlots), webgpu.UsageUniform|webgpu.UsageCopyDst)
	if err != nil {
		return nil, err
	}
	return &recorder{
		dev:      d,
		ring:     ring,
		ringData: make([]byte, slot*ringSlots),
		slotSize: slot,
		groups:   map[groupKey]webgpu.BindGroup{},
	}, nil
}

// dispatch records one kernel launch over the given buffers.
func (r *recorder) dispatch(k *kernel, bufs []*allocation, offsets, sizes []uint64, p params, x, y, z uint32) {
	if r.closed {
		return
	}
	if r.slot == ringSlots {
		r.flush()
	}
	if !r.open {
		r.encoder = r.dev.native.CreateEncoder()
		r.pass = r.encoder.BeginPass()
		r.open = true
		r.current = nil
	}
	offset := r.slot * r.slotSize
	copy(r.ringData[offset:offset+paramsBytes], p.b[:])
	for _, a := range bufs {
		if a == r.dev.fault {
			r.dev.faultArmed = true
		}
	}
	var pipeline *webgpu.Pipeline
	if r.current != k {
		pipeline, r.current = &k.pipeline, k
	}
	r.pass.Dispatch(pipeline, r.group(k, bufs, offsets, sizes), uint32(offset), x, y, z)
	r.slot++
	r.dispatches.Add(1)
}

// group returns a cached bind group for the buffers, creating it if needed.
func (r *recorder) group(k *kernel, bufs []*allocation, offsets, sizes []uint64) webgpu.BindGroup {
	key := groupKey{kernel: k}
	for i, a := range bufs {
		key.bufs[i], key.offsets[i], key.sizes[i] = a.handle, offsets[i], sizes[i]
	}
	if g, ok := r.groups[key]; ok {
		return g
	}
	if len(r.groups) >= maxGroups {
		r.dropGroups()
	}
	g := r.dev.native.CreateBindGroupAt(k.pipeline, key.bufs[:len(bufs)], offsets, sizes, r.ring, paramsBytes)
	r.groups[key] = g
	return g
}

// dropGroups releases the cached bind groups; the pass being recorded keeps
// its own references to those it uses.
func (r *recorder) dropGroups() {
	for _, g := range r.groups {
		g.Release()
	}
	clear(r.groups)
}

// flush submits the recorded batch, if any.
func (r *recorder) flush() {
	if !r.open || r.closed {
		return
	}
	r.pass.End()
	r.dev.native.WriteBuffer(r.ring, 0, r.ringData[:r.slot*r.slotSize])
	r.dev.native.Submit(r.encoder)
	r.open, r.slot, r.current = false, 0, nil
	r.submits.Add(1)
}

func (r *recorder) counts() (submits, dispatches int64) {
	if r == nil {
		return 0, 0
	}
	return r.submits.Load(), r.dispatches.Load()
}

// release frees the recorder's native objects; later dispatches are ignored.
func (r *recorder) release() {
	r.flush()
	r.dropGroups()
	r.ring.Release()
	r.closed = true
}
