package profile

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"time"
)

// The trace is Chrome's trace-event format (the JSON object form), which
// chrome://tracing and Perfetto open: complete events ("ph": "X") with
// microsecond timestamps, and metadata events naming the tracks.
type traceFile struct {
	TraceEvents     []traceEvent   `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
}

type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// Track ids: the host's ops, and the device's kernels.
const (
	hostPid   = 1
	devicePid = 2
)

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// WriteTrace writes the profile as Chrome trace-event JSON: ops on a host
// track, kernels on a device track (named with their clock), each kernel
// with its full name, workgroup grid, issue index and Key as arguments.
func (p *Profile) WriteTrace(w io.Writer) error {
	t := traceFile{DisplayTimeUnit: "ns", OtherData: map[string]any{
		"device": p.Device, "kernel_clock": p.Clock.String(), "kernel_clock_note": p.ClockNote,
		"has_kernels": p.HasKernels, "wall_us": micros(p.Wall),
	}}
	meta := func(pid int, name string) {
		t.TraceEvents = append(t.TraceEvents,
			traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": name}},
			traceEvent{Name: "process_sort_index", Ph: "M", Pid: pid, Args: map[string]any{"sort_index": pid}})
	}
	meta(hostPid, "host: ops on "+p.Device)
	for i, o := range p.Ops {
		t.TraceEvents = append(t.TraceEvents, traceEvent{Name: o.Name, Cat: "op", Ph: "X", Ts: micros(o.Start), Dur: micros(o.Dur), Pid: hostPid, Tid: 1,
			Args: map[string]any{"index": i, "key": Key(o.Name)}})
	}
	if p.HasKernels {
		meta(devicePid, "device: kernels on "+p.Device+" ("+p.Clock.String()+" clock)")
		for i, k := range p.Kernels {
			t.TraceEvents = append(t.TraceEvents, traceEvent{Name: k.Name, Cat: "kernel", Ph: "X", Ts: micros(k.Start), Dur: micros(k.Dur), Pid: devicePid, Tid: 1,
				Args: map[string]any{"index": i, "key": Key(k.Name), "grid": k.Grid, "clock": p.Clock.String()}})
		}
	}
	return json.NewEncoder(w).Encode(t)
}

// WriteTraceFile writes the trace (WriteTrace) to the file at path.
func (p *Profile) WriteTraceFile(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriter(f)
	if err := p.WriteTrace(bw); err != nil {
		return err
	}
	return bw.Flush()
}
