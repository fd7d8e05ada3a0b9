//go:build cgo || (js && wasm)

package device

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// profiling is the recorder's state while a profile is on (recorder.prof;
// nil when off, so that an unprofiled dispatch pays one nil check). Worker
// only.
//
// With timestamp-query every dispatch gets a compute pass of its own whose
// beginning and end write timestamps into the query set (2 per dispatch,
// so DispatchesPerBatch dispatches fill it); flush resolves them into a
// buffer in the same command buffer and reads them back once the batch
// has run. Without it, every dispatch is submitted alone and waited for,
// and host time brackets it.
type profiling struct {
	timestamps bool
	note       string
	queries    webgpu.QuerySet
	resolved   webgpu.Buffer // QueryResolve|CopySrc: 2 uint64 per dispatch
	readback   []byte

	origin time.Time // StartProfile (host clock) or the first submission
	// zero is the device timestamp that origin corresponds to (device
	// clock), set by the first batch read back.
	zero     uint64
	haveZero bool
	// firstSubmit is the host time the first profiled batch was submitted.
	firstSubmit time.Time

	pending []pendingKernel // the open batch's kernels, by ring slot
	kernels []hal.KernelTime
	dropped int // kernels whose times were lost (a refused batch, a failed read)
	// exact is set by a timestamp that is not a multiple of quantum.
	exact bool
}

type pendingKernel struct {
	name  string
	grid  [3]uint32
	start time.Time // host clock only
}

// timestampNote is what the device clock's numbers mean, for the reader.
const timestampNote = "WebGPU timestamp-query at the start and end of each kernel's compute pass (one pass per kernel while profiling)"

// quantum is what Dawn rounds timestamps to while its timestamp_quantization
// toggle is on (2^16 ns). The binding turns the toggle off at device
// creation (webgpu/query.h); a library that ignores that leaves every
// timestamp a multiple of it, which StopProfile then says.
const quantum = 1 << 16

// StartProfile starts timing every dispatch posted from now on: on the
// device's clock when it was created with timestamp-query, else on the
// host's.
func (d *Device) StartProfile() error {
	if d.Closed() {
		return fmt.Errorf("webgpu: StartProfile on closed device: %w", hal.ErrClosed)
	}
	var err error
	gpu.Run(func() {
		r := d.rec
		if r.prof != nil {
			err = fmt.Errorf("webgpu: StartProfile on %s: a profile is already running: %w", d.info.Name, hal.ErrInvalid)
			return
		}
		r.flush() // what was recorded before the start is not profiled
		p := &profiling{origin: time.Now(), note: "host wall time from submitting each kernel alone to its completion (this device has no timestamp-query)"}
		if d.hasTimestamps {
			p.timestamps, p.note = true, timestampNote
			if e := p.openQueries(d); e != nil {
				p.timestamps = false
				p.note = fmt.Sprintf("host wall time per kernel, submitted alone (timestamp queries failed: %v)", e)
			}
		}
		r.prof = p
	})
	return err
}

func (p *profiling) openQueries(d *Device) error {
	q, err := d.native.CreateTimestampQuerySet(2 * DispatchesPerBatch)
	if err != nil {
		return err
	}
	b, err := d.native.CreateBuffer(2*DispatchesPerBatch*8, webgpu.UsageQueryResolve|webgpu.UsageCopySrc)
	if err != nil {
		q.Release()
		return err
	}
	p.queries, p.resolved, p.readback = q, b, make([]byte, 2*DispatchesPerBatch*8)
	d.rec.querySets.Add(1)
	return nil
}

// StopProfile waits for the profiled work and returns its kernels' times,
// releasing the query set: profiling off holds nothing.
func (d *Device) StopProfile() (hal.KernelProfile, error) {
	if d.Closed() {
		return hal.KernelProfile{}, fmt.Errorf("webgpu: StopProfile on closed device: %w", hal.ErrClosed)
	}
	var out hal.KernelProfile
	var err error
	gpu.Run(func() {
		r := d.rec
		p := r.prof
		if p == nil {
			err = fmt.Errorf("webgpu: StopProfile on %s: no profile is running: %w", d.info.Name, hal.ErrInvalid)
			return
		}
		r.flush()
		r.prof = nil
		device := p.timestamps
		p.release()
		out = hal.KernelProfile{Clock: hal.ClockHost, Note: p.note, Origin: p.origin, Kernels: p.kernels}
		if device {
			out.Clock = hal.ClockDevice
			if !p.firstSubmit.IsZero() {
				out.Origin = p.firstSubmit
			}
		}
		if device && len(p.kernels) > 1 && !p.exact {
			out.Note += "; every timestamp is a multiple of 65.536 µs: the library quantizes them (Dawn's timestamp_quantization toggle), so short kernels read as 0 or 65.536 µs"
		}
		if p.dropped > 0 {
			out.Note += fmt.Sprintf("; %d kernels not timed (a refused batch or a failed read-back)", p.dropped)
		}
	})
	return out, err
}

// TimestampQueries counts the timestamps written and the query sets
// created since the device opened: both stay 0 while nothing is profiled.
func (d *Device) TimestampQueries() (written, sets int64) {
	return d.rec.queries.Load(), d.rec.querySets.Load()
}

// beginKernel opens the compute pass of the next dispatch, which is the
// batch's slot r.slot. The encoder is open.
func (p *profiling) beginKernel(r *recorder, k *Kernel, x, y, z uint32) {
	pk := pendingKernel{name: k.name, grid: [3]uint32{x, y, z}}
	if p.timestamps {
		i := uint32(2 * r.slot)
		r.pass = r.encoder.BeginTimedPass(p.queries, i, i+1)
		r.queries.Add(2)
	} else {
		r.pass = r.encoder.BeginPass()
		pk.start = time.Now()
	}
	r.current = nil // a new pass has no pipeline set
	p.pending = append(p.pending, pk)
}

// endKernel closes the dispatch's pass; on the host clock it also submits
// the dispatch and waits for it.
func (p *profiling) endKernel(r *recorder) {
	r.pass.End()
	if p.timestamps {
		return
	}
	pk := p.pending[len(p.pending)-1]
	r.flush()
	if err := r.dev.waitIdle(); err != nil {
		p.dropped++
		return
	}
	p.kernels = append(p.kernels, hal.KernelTime{Name: pk.name, Grid: pk.grid, Start: pk.start.Sub(p.origin), End: time.Since(p.origin)})
}

// beforeSubmit records the resolution of the batch's timestamps into the
// command buffer about to be submitted.
func (p *profiling) beforeSubmit(r *recorder) {
	if p.timestamps && len(p.pending) > 0 {
		r.encoder.Resolve(p.queries, 0, uint32(2*len(p.pending)), p.resolved, 0)
		if p.firstSubmit.IsZero() {
			p.firstSubmit = time.Now()
		}
	}
}

// afterSubmit reads the batch's timestamps back (waiting for the batch);
// ok is false when the batch was refused and so ran without them.
func (p *profiling) afterSubmit(r *recorder, ok bool) {
	defer func() { p.pending = p.pending[:0] }()
	if !p.timestamps || len(p.pending) == 0 {
		return
	}
	if !ok {
		p.dropped += len(p.pending)
		return
	}
	n := 2 * len(p.pending)
	staging, err := r.dev.stagingBuffer(int64(n * 8))
	if err == nil {
		err = r.dev.native.Read(p.resolved, staging, p.readback[:n*8])
	}
	if err != nil {
		p.dropped += len(p.pending)
		return
	}
	if !p.haveZero {
		p.zero, p.haveZero = binary.LittleEndian.Uint64(p.readback), true
	}
	for i, pk := range p.pending {
		begin := binary.LittleEndian.Uint64(p.readback[16*i:])
		end := binary.LittleEndian.Uint64(p.readback[16*i+8:])
		p.exact = p.exact || begin%quantum != 0 || end%quantum != 0
		p.kernels = append(p.kernels, hal.KernelTime{Name: pk.name, Grid: pk.grid, Start: p.since(begin), End: p.since(end)})
	}
}

// since converts device timestamp t (nanoseconds, as WebGPU resolves
// them) to a duration from the first one.
func (p *profiling) since(t uint64) time.Duration {
	return time.Duration(int64(t - p.zero))
}

// release frees the query set and its buffer, if any.
func (p *profiling) release() {
	if p.timestamps {
		p.queries.Release()
		p.resolved.Release()
		p.timestamps = false
	}
}

// HasTimestamps reports whether the device was created with
// timestamp-query.
func (d *Device) HasTimestamps() bool { return d.hasTimestamps }
