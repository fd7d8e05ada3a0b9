package tensor

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webtensor/webtensor/hal"
)

// Recording is what a device saw between StartProfile and StopProfile:
// every op's call, timed on the host, and, where the backend times its
// own kernels (hal.Profiler), every kernel. Package profile turns it into
// a table and a trace; most users want that package, not this type.
type Recording struct {
	Device string    // the device, as its String
	Start  time.Time // when StartProfile returned; Ops count from it
	Stop   time.Time // when StopProfile began
	// Ops are the tensor operations issued, in order, each timed around
	// its call into the backend: their run time on a synchronous backend
	// (cpu), only their issue time on an asynchronous one (webgpu), whose
	// run time Kernels holds.
	Ops []ProfiledOp
	// Kernels are the backend's kernels when it implements hal.Profiler
	// (HasKernels), else empty.
	HasKernels bool
	Kernels    hal.KernelProfile
}

// ProfiledOp is one operation's call, from Recording.Start.
type ProfiledOp struct {
	Op         string
	Start, End time.Duration
}

// profiles holds the running profile of each device (*Device →
// *opRecorder); profiling counts them, so that an op on an unprofiled
// process pays one atomic load.
var (
	profiles  sync.Map
	profiling atomic.Int32
)

type opRecorder struct {
	mu       sync.Mutex
	start    time.Time
	ops      []ProfiledOp
	profiler hal.Profiler // the backend device that was started, or nil
}

// StartProfile starts recording the ops issued on d, and the backend's
// kernels where it times them; StopProfile returns what was recorded.
// Starting a running profile again is an error. Work issued before the
// start is not recorded: the backend submits it first.
func (d *Device) StartProfile() error {
	r := &opRecorder{start: time.Now()}
	if _, running := profiles.LoadOrStore(d, r); running {
		return &Error{Op: "StartProfile", Msg: fmt.Sprintf("%v is already being profiled", d), Err: hal.ErrInvalid}
	}
	if p, ok := d.backendDevice().(hal.Profiler); ok {
		if err := p.StartProfile(); err != nil {
			profiles.Delete(d)
			return &Error{Op: "StartProfile", Msg: d.String(), Err: err}
		}
		r.profiler = p
	}
	profiling.Add(1)
	return nil
}

// StopProfile waits for the work issued on d since StartProfile and
// returns what was recorded.
func (d *Device) StopProfile() (*Recording, error) {
	v, ok := profiles.Load(d)
	if !ok {
		return nil, &Error{Op: "StopProfile", Msg: fmt.Sprintf("%v is not being profiled", d), Err: hal.ErrInvalid}
	}
	r := v.(*opRecorder)
	stop := time.Now()
	rec := &Recording{Device: d.String(), Start: r.start, Stop: stop}
	var err error
	if r.profiler != nil {
		rec.Kernels, err = r.profiler.StopProfile()
		rec.HasKernels = err == nil
	} else {
		err = d.hal.Sync()
	}
	profiles.Delete(d)
	profiling.Add(-1)
	r.mu.Lock()
	rec.Ops = r.ops
	r.mu.Unlock()
	if err != nil {
		return rec, &Error{Op: "StopProfile", Msg: d.String(), Err: err}
	}
	return rec, nil
}

// backendDevice is the backend device under device-loss recovery.
func (d *Device) backendDevice() hal.Device {
	if c, ok := d.hal.(interface{ Current() hal.Device }); ok {
		return c.Current()
	}
	return d.hal
}

// profileClock returns the time an op starts, or the zero time when no
// profile runs anywhere (the common case: one atomic load).
func profileClock() time.Time {
	if profiling.Load() == 0 {
		return time.Time{}
	}
	return time.Now()
}

// recordOp records op on d, begun at start, if d is being profiled.
func (d *Device) recordOp(op string, start time.Time) {
	if start.IsZero() {
		return
	}
	v, ok := profiles.Load(d)
	if !ok {
		return
	}
	end := time.Now()
	r := v.(*opRecorder)
	r.mu.Lock()
	defer r.mu.Unlock()
	if start.Before(r.start) {
		return // begun before the profile
	}
	r.ops = append(r.ops, ProfiledOp{Op: op, Start: start.Sub(r.start), End: end.Sub(r.start)})
}
