package profile

import (
	"cmp"
	"slices"
	"time"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// Profiler is a running profile of one device.
type Profiler struct {
	dev *tensor.Device
}

// Start starts profiling dev. Work issued on dev before Start is not
// profiled. A device runs one profile at a time.
func Start(dev *tensor.Device) (*Profiler, error) {
	if err := dev.StartProfile(); err != nil {
		return nil, err
	}
	return &Profiler{dev: dev}, nil
}

// Stop waits for the work issued since Start and returns its profile.
func (p *Profiler) Stop() (*Profile, error) {
	rec, err := p.dev.StopProfile()
	if err != nil {
		return nil, err
	}
	return fromRecording(rec), nil
}

// Run profiles f on dev. The profile comes back with f's error too.
func Run(dev *tensor.Device, f func() error) (*Profile, error) {
	p, err := Start(dev)
	if err != nil {
		return nil, err
	}
	ferr := f()
	prof, err := p.Stop()
	if ferr != nil {
		return prof, ferr
	}
	return prof, err
}

// Profile is what one profile recorded.
type Profile struct {
	Device string
	// Clock is what timed Kernels: hal.ClockDevice (timestamp queries) or
	// hal.ClockHost; ClockNote says more.
	Clock     hal.ProfileClock
	ClockNote string
	// Kernels are the device's kernels in issue order, or, on a device
	// that does not time kernels (HasKernels false), its ops timed on the
	// host.
	Kernels    []Event
	HasKernels bool
	// Ops are the tensor operations issued, timed on the host around
	// their call (issue time on an asynchronous device).
	Ops []Event
	// Wall is the host time from Start to Stop.
	Wall time.Duration
}

// Event is one kernel launch or op call. Start counts from the profile's
// start on the host; a device-clock kernel is placed there approximately
// (its first batch's submission), and its duration is exact.
type Event struct {
	Name  string
	Start time.Duration
	Dur   time.Duration
	Grid  [3]uint32 // a kernel's workgroups; zero for ops
}

func fromRecording(rec *tensor.Recording) *Profile {
	p := &Profile{Device: rec.Device, Wall: rec.Stop.Sub(rec.Start), HasKernels: rec.HasKernels}
	for _, o := range rec.Ops {
		p.Ops = append(p.Ops, Event{Name: o.Op, Start: o.Start, Dur: o.End - o.Start})
	}
	if !rec.HasKernels {
		p.Clock = hal.ClockHost
		p.ClockNote = "this backend does not time kernels; ops are timed on the host around each call (a synchronous backend runs the op within it)"
		p.Kernels = slices.Clone(p.Ops)
		return p
	}
	k := rec.Kernels
	p.Clock, p.ClockNote = k.Clock, k.Note
	shift := k.Origin.Sub(rec.Start)
	for _, e := range k.Kernels {
		p.Kernels = append(p.Kernels, Event{Name: e.Name, Start: shift + e.Start, Dur: e.End - e.Start, Grid: e.Grid})
	}
	return p
}

// Row is the summary of the events of one name, as a key_averages row.
type Row struct {
	Name                  string
	Calls                 int
	Total, Mean, Min, Max time.Duration
	Share                 float64 // of the table's total time, in [0, 1]
}

// KernelRows summarizes Kernels by name, the largest total first.
func (p *Profile) KernelRows() []Row { return summarize(p.Kernels) }

// OpRows summarizes Ops by name, the largest total first.
func (p *Profile) OpRows() []Row { return summarize(p.Ops) }

// TotalKernelTime is the sum of the kernels' times.
func (p *Profile) TotalKernelTime() time.Duration { return total(p.Kernels) }

func total(events []Event) time.Duration {
	var t time.Duration
	for _, e := range events {
		t += e.Dur
	}
	return t
}

func summarize(events []Event) []Row {
	byName := map[string]*Row{}
	var rows []*Row
	for _, e := range events {
		r, ok := byName[e.Name]
		if !ok {
			r = &Row{Name: e.Name, Min: e.Dur, Max: e.Dur}
			byName[e.Name] = r
			rows = append(rows, r)
		}
		r.Calls++
		r.Total += e.Dur
		r.Min, r.Max = min(r.Min, e.Dur), max(r.Max, e.Dur)
	}
	sum := total(events)
	out := make([]Row, len(rows))
	for i, r := range rows {
		r.Mean = r.Total / time.Duration(r.Calls)
		if sum > 0 {
			r.Share = float64(r.Total) / float64(sum)
		}
		out[i] = *r
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}
