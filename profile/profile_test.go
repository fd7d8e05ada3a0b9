package profile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/profile"
	"github.com/webtensor/webtensor/tensor"
)

// knownSequence issues MatMul, Softmax, MatMul on odd sizes and reads the
// result, so that every kernel has run when it returns.
func knownSequence(t *testing.T, dev *tensor.Device) func() error {
	g := tensor.NewGenerator(15)
	a := g.Rand(dev, 37, 29)
	b := g.Rand(dev, 29, 41)
	t.Cleanup(func() { a.Release(); b.Release() })
	return func() error {
		c := tensor.MatMul(a, b)
		s := c.Softmax(1)
		d := tensor.MatMul(a, b)
		defer c.Release()
		defer s.Release()
		defer d.Release()
		_, err := d.Float32s()
		return err
	}
}

func hasTimestamps(dev *tensor.Device) bool {
	return slices.Contains(dev.Info().Features, "timestamp-query")
}

// TestProfileKnownSequence: on every device a known sequence gives its
// ops, and where the backend times kernels its kernels, by name and
// count, with positive, ordered times on the clock the device has:
// the device's on lavapipe (timestamp-query), the host's on llvmpipe
// and the CPU.
func TestProfileKnownSequence(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		run := knownSequence(t, dev)
		prof, err := profile.Run(dev, run)
		require.NoError(t, err)

		var ops []string
		for _, o := range prof.Ops {
			ops = append(ops, o.Name)
		}
		// Float32s reads without an op of its own.
		assert.Equal(t, []string{"MatMul", "Softmax", "MatMul"}, ops)

		isCPU := dev.Info().Backend == "cpu"
		switch {
		case isCPU:
			assert.False(t, prof.HasKernels)
			assert.Equal(t, hal.ClockHost, prof.Clock)
			assert.Equal(t, prof.Ops, prof.Kernels, "without kernels the ops are the table's rows")
		case hasTimestamps(dev):
			assert.True(t, prof.HasKernels)
			assert.Equal(t, hal.ClockDevice, prof.Clock)
			assert.Contains(t, prof.ClockNote, "timestamp")
		default:
			assert.True(t, prof.HasKernels)
			assert.Equal(t, hal.ClockHost, prof.Clock)
		}
		if !isCPU {
			require.Len(t, prof.Kernels, 3, "%v", prof.Kernels)
			assert.Equal(t, prof.Kernels[0].Name, prof.Kernels[2].Name)
			assert.Contains(t, prof.Kernels[1].Name, "softmax")
			rows := prof.KernelRows()
			require.Len(t, rows, 2)
			byName := map[string]int{rows[0].Name: rows[0].Calls, rows[1].Name: rows[1].Calls}
			assert.Equal(t, 2, byName[prof.Kernels[0].Name])
			assert.Equal(t, 1, byName[prof.Kernels[1].Name])
		}
		for i, k := range prof.Kernels {
			assert.Positive(t, k.Dur, "%s", k.Name)
			assert.GreaterOrEqual(t, k.Start, time.Duration(0))
			if i > 0 {
				prev := prof.Kernels[i-1]
				assert.GreaterOrEqual(t, k.Start, prev.Start+prev.Dur, "kernel %d starts after kernel %d ends", i, i-1)
			}
			assert.LessOrEqual(t, k.Dur, prof.Wall+time.Millisecond, "a kernel within the profile's wall time")
		}
		checkTable(t, prof)
		checkTrace(t, prof)
	})
}

// checkTable: the rows add up to the kernels (calls, totals, shares), min
// ≤ mean ≤ max, and the text names every row and the total.
func checkTable(t *testing.T, prof *profile.Profile) {
	t.Helper()
	rows := prof.KernelRows()
	var calls int
	var sum time.Duration
	var share float64
	for i, r := range rows {
		calls += r.Calls
		sum += r.Total
		share += r.Share
		assert.LessOrEqual(t, r.Min, r.Mean)
		assert.LessOrEqual(t, r.Mean, r.Max)
		assert.Equal(t, r.Total/time.Duration(r.Calls), r.Mean)
		if i > 0 {
			assert.GreaterOrEqual(t, rows[i-1].Total, r.Total, "largest total first")
		}
	}
	var want time.Duration
	for _, k := range prof.Kernels {
		want += k.Dur
	}
	assert.Equal(t, len(prof.Kernels), calls)
	assert.Equal(t, want, sum)
	assert.Equal(t, want, prof.TotalKernelTime())
	assert.InDelta(t, 1, share, 1e-9)

	var buf bytes.Buffer
	require.NoError(t, prof.WriteTable(&buf))
	text := buf.String()
	t.Log("\n" + text)
	what := " kernels, "
	if !prof.HasKernels {
		what = " ops, "
	}
	assert.Contains(t, text, "profile of "+prof.Device+": "+itoa(len(prof.Kernels))+what)
	assert.Contains(t, text, prof.Clock.String())
	for _, r := range rows {
		assert.Contains(t, text, strings.Join(strings.Fields(r.Name), " ")[:min(len(r.Name), 40)])
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Total") })
	require.GreaterOrEqual(t, i, 0, "a Total line")
	total := strings.Fields(lines[i])
	assert.Equal(t, []string{"Total", itoa(calls)}, total[:2])
	assert.Equal(t, "100.0%", total[len(total)-1])
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// checkTrace: the trace is Chrome trace-event JSON with one complete
// event per op (host track) and per kernel (device track), named as the
// profile names them, in microseconds.
func checkTrace(t *testing.T, prof *profile.Profile) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.json")
	require.NoError(t, prof.WriteTraceFile(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var trace struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Ph   string         `json:"ph"`
			Ts   float64        `json:"ts"`
			Dur  float64        `json:"dur"`
			Pid  int            `json:"pid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
		OtherData map[string]any `json:"otherData"`
	}
	require.NoError(t, json.Unmarshal(data, &trace))
	var ops, kernels []string
	processes := 0
	pidOf := map[string]int{}
	for _, e := range trace.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			processes++
		case e.Ph == "X" && e.Cat == "op":
			ops = append(ops, e.Name)
			pidOf["op"] = e.Pid
		case e.Ph == "X" && e.Cat == "kernel":
			kernels = append(kernels, e.Name)
			pidOf["kernel"] = e.Pid
			i := len(kernels) - 1
			assert.InDelta(t, float64(prof.Kernels[i].Dur)/1e3, e.Dur, 1e-6, "µs")
			assert.InDelta(t, float64(prof.Kernels[i].Start)/1e3, e.Ts, 1e-6, "µs")
			assert.Equal(t, prof.Clock.String(), e.Args["clock"])
		}
	}
	var wantOps []string
	for _, o := range prof.Ops {
		wantOps = append(wantOps, o.Name)
	}
	assert.Equal(t, wantOps, ops)
	assert.Equal(t, prof.Device, trace.OtherData["device"])
	if prof.HasKernels {
		var want []string
		for _, k := range prof.Kernels {
			want = append(want, k.Name)
		}
		assert.Equal(t, want, kernels)
		assert.Equal(t, 2, processes)
		assert.NotEqual(t, pidOf["op"], pidOf["kernel"], "ops and kernels on their own tracks")
	} else {
		assert.Empty(t, kernels)
		assert.Equal(t, 1, processes)
	}
	assert.False(t, math.IsNaN(trace.OtherData["wall_us"].(float64)))
}

// TestProfileMisuse: a device runs one profile at a time; stopping twice
// is an error, and a profile can start again after a stop.
func TestProfileMisuse(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		p, err := profile.Start(dev)
		require.NoError(t, err)
		_, err = profile.Start(dev)
		assert.True(t, errors.Is(err, hal.ErrInvalid), "second start: %v", err)
		_, err = p.Stop()
		require.NoError(t, err)
		_, err = p.Stop()
		assert.True(t, errors.Is(err, hal.ErrInvalid), "second stop: %v", err)
		prof, err := profile.Run(dev, func() error { return nil })
		require.NoError(t, err)
		assert.Empty(t, prof.Kernels)
		var buf bytes.Buffer
		require.NoError(t, prof.WriteTable(&buf))
		assert.Contains(t, buf.String(), "Total")
	})
}

// TestProfileOnlyWhileRunning: ops issued outside a profile are not in it.
func TestProfileOnlyWhileRunning(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		run := knownSequence(t, dev)
		require.NoError(t, run()) // before: not recorded
		p, err := profile.Start(dev)
		require.NoError(t, err)
		x := tensor.Ones(dev, 5, 3)
		y := x.ReLU()
		prof, err := p.Stop()
		require.NoError(t, err)
		require.NoError(t, run()) // after: not recorded
		x.Release()
		y.Release()
		var ops []string
		for _, o := range prof.Ops {
			ops = append(ops, o.Name)
		}
		assert.Equal(t, []string{"Ones", "ReLU"}, ops)
	})
}
