//go:build cgo || (js && wasm)

package device

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// recorder batches dispatches into one compute pass of a pending command
// encoder. It runs on the worker only.
//
// Kernel parameters travel in one uniform "ring" buffer bound with a
// dynamic offset: dispatch i of a batch reads slot i. At flush the slots
// are uploaded with queue.WriteBuffer, which lands after every earlier
// submission and before this one, so a single ring serves every batch.
//
// A failure stays with the dispatch that caused it. WebGPU fails a whole
// command buffer for one bad command, and an invalid bind group would
// spoil the pass it is set in, so: a bind group the device refuses is
// caught when it is created and its dispatch left out of the batch; and a
// batch the device refuses at submission ran nothing, so its dispatches
// are submitted again one at a time (isolate), and only those the device
// refuses on their own fail. Either failure is reported once, by the next
// Read or Sync (Device.Fail); the batches after it run as usual.
type recorder struct {
	dev *Device

	open    bool
	encoder webgpu.Encoder
	pass    webgpu.Pass
	current *Kernel // pipeline set in the open pass
	// batch lists the dispatches of the open batch, for isolate.
	batch []recorded

	ring     webgpu.Buffer
	ringData []byte
	slotSize int
	slot     int

	groups map[groupKey]webgpu.BindGroup
	// retired holds bind groups dropped from the cache while the open
	// batch may use them: isolate may need them again, so they are
	// released after the batch is submitted.
	retired []webgpu.BindGroup
	closed  bool

	submits, dispatches atomic.Int64

	// prof is the running profile (profile.go), nil when none; queries
	// and querySets count the timestamps written and query sets created.
	prof               *profiling
	queries, querySets atomic.Int64
}

// DispatchesPerBatch is the most dispatches one command buffer carries:
// a batch is submitted when it has this many.
const DispatchesPerBatch = 256

// maxGroups is the number of bind groups cached before the cache is reset.
const maxGroups = 4096

// recorded is one dispatch of the open batch.
type recorded struct {
	k       *Kernel
	group   webgpu.BindGroup
	offset  uint32 // into the ring
	x, y, z uint32
}

// groupKey identifies a bind group: a kernel and the buffer ranges bound.
type groupKey struct {
	kernel  *Kernel
	bufs    [MaxBindings]webgpu.Buffer
	offsets [MaxBindings]uint64
	sizes   [MaxBindings]uint64
}

func newRecorder(d *Device) (*recorder, error) {
	slot := int(d.limits.MinUniformBufferOffsetAlignment)
	if slot < ParamsBytes {
		slot = ParamsBytes
	}
	ring, err := d.native.CreateBuffer(uint64(slot*DispatchesPerBatch), webgpu.UsageUniform|webgpu.UsageCopyDst)
	if err != nil {
		return nil, err
	}
	return &recorder{
		dev:      d,
		ring:     ring,
		ringData: make([]byte, slot*DispatchesPerBatch),
		slotSize: slot,
		groups:   map[groupKey]webgpu.BindGroup{},
	}, nil
}

// dispatch records one kernel launch over the given buffers.
func (r *recorder) dispatch(k *Kernel, bufs []*Allocation, offsets, sizes []uint64, p *[ParamsBytes]byte, x, y, z uint32) {
	if r.closed {
		return
	}
	g, err := r.group(k, bufs, offsets, sizes)
	if err != nil {
		// Left out, so that the rest of the batch still runs.
		r.dev.Fail(fmt.Errorf("kernel %s: binding its buffers: %w", k.name, classify(err)))
		return
	}
	if r.slot == DispatchesPerBatch {
		r.flush()
	}
	if !r.open {
		r.encoder = r.dev.native.CreateEncoder()
		if r.prof == nil {
			r.pass = r.encoder.BeginPass()
		}
		r.open = true
		r.current = nil
	}
	if r.prof != nil {
		r.prof.beginKernel(r, k, x, y, z) // a pass of its own
	}
	offset := r.slot * r.slotSize
	copy(r.ringData[offset:offset+ParamsBytes], p[:])
	for _, a := range bufs {
		if a == r.dev.fault {
			r.dev.faultArmed = true
		}
	}
	var pipeline *webgpu.Pipeline
	if r.current != k {
		pipeline, r.current = &k.pipeline, k
	}
	r.pass.Dispatch(pipeline, g, uint32(offset), x, y, z)
	r.batch = append(r.batch, recorded{k: k, group: g, offset: uint32(offset), x: x, y: y, z: z})
	r.slot++
	r.dispatches.Add(1)
	if r.prof != nil {
		r.prof.endKernel(r)
	}
}

// group returns a cached bind group for the buffers, creating it if needed.
// A group the device refuses is not cached: the error comes back instead.
func (r *recorder) group(k *Kernel, bufs []*Allocation, offsets, sizes []uint64) (webgpu.BindGroup, error) {
	key := groupKey{kernel: k}
	for i, a := range bufs {
		key.bufs[i], key.offsets[i], key.sizes[i] = a.handle, offsets[i], sizes[i]
	}
	if g, ok := r.groups[key]; ok {
		return g, nil
	}
	if len(r.groups) >= maxGroups {
		r.dropGroups()
	}
	g, err := r.dev.native.CreateBindGroupChecked(k.pipeline, key.bufs[:len(bufs)], offsets, sizes, r.ring, ParamsBytes)
	if err != nil {
		return g, err
	}
	r.groups[key] = g
	return g, nil
}

// dropGroups empties the bind group cache. Groups the open batch may use
// are released after it is submitted.
func (r *recorder) dropGroups() {
	for _, g := range r.groups {
		if r.open {
			r.retired = append(r.retired, g)
		} else {
			g.Release()
		}
	}
	clear(r.groups)
}

// flush submits the recorded batch, if any.
func (r *recorder) flush() {
	if !r.open || r.closed {
		return
	}
	if r.prof == nil {
		r.pass.End()
	} else {
		r.prof.beforeSubmit(r) // each kernel's pass is already ended
	}
	r.dev.native.WriteBuffer(r.ring, 0, r.ringData[:r.slot*r.slotSize])
	err := r.dev.native.SubmitChecked(r.encoder)
	if err != nil {
		r.isolate(err)
	}
	if r.prof != nil {
		r.prof.afterSubmit(r, err == nil)
	}
	r.open, r.slot, r.current = false, 0, nil
	clear(r.batch)
	r.batch = r.batch[:0]
	for _, g := range r.retired {
		g.Release()
	}
	clear(r.retired)
	r.retired = r.retired[:0]
	r.submits.Add(1)
}

// isolate handles a batch the device refused at submission, which ran none
// of its dispatches: it submits them again in order, one per command
// buffer, so that every dispatch the device accepts runs and only those it
// refuses on their own fail. The ring still holds the batch's parameters:
// nothing has written it since.
func (r *recorder) isolate(batchErr error) {
	err := classify(batchErr)
	if errors.Is(err, hal.ErrDeviceLost) || r.dev.Lost() {
		r.dev.Fail(err)
		return
	}
	for _, b := range r.batch {
		if e := r.dev.native.DispatchAlone(b.k.pipeline, b.group, b.offset, b.x, b.y, b.z); e != nil {
			r.dev.Fail(fmt.Errorf("kernel %s: %w", b.k.name, classify(e)))
		}
	}
	// When every dispatch ran on its own (a passing out-of-memory
	// condition), the batch's work is done and there is nothing to report.
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
	if r.prof != nil {
		r.prof.release()
		r.prof = nil
	}
	r.dropGroups()
	r.ring.Release()
	r.closed = true
}
