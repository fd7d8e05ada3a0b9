package soak

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/webtensor/webtensor/tensor"
)

// DeviceSample is one device's pool and kernel counters at a sample.
type DeviceSample struct {
	Device      string `json:"device"`
	LiveBytes   int64  `json:"live_bytes"`
	PooledBytes int64  `json:"pooled_bytes"`
	Kernels     int64  `json:"kernels"` // compiled so far (hal.Stats.Kernels)
}

// Sample is the state of the process at one instant of the run, taken
// between two rounds of work with every device synced and the garbage
// collected, so that it sees only what the run keeps, not what is in
// flight.
type Sample struct {
	At         time.Duration  `json:"at_ns"`
	Devices    []DeviceSample `json:"devices"`
	HeapAlloc  uint64         `json:"heap_alloc"`
	HeapInuse  uint64         `json:"heap_inuse"`
	RSS        int64          `json:"rss"`
	Goroutines int            `json:"goroutines"`
	Ops        int64          `json:"ops"`
	Cycles     int64          `json:"alloc_free_cycles"`
}

// settle syncs every device and collects garbage until the devices' live
// bytes stop moving: tensors the work dropped without Release are freed
// by cleanups that run after a GC, on their own goroutine, so one GC is
// not enough to see them gone.
func settle(devs []*tensor.Device) error {
	prev := int64(-1)
	for range 50 {
		for _, d := range devs {
			if err := d.Sync(); err != nil {
				return fmt.Errorf("sync %s: %w", d.Name(), err)
			}
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
		var cur int64
		for _, d := range devs {
			cur += d.Stats().LiveBytes
		}
		if cur == prev {
			return nil
		}
		prev = cur
	}
	return nil
}

// take samples the process now; at is the time since the run started.
func take(at time.Duration, devs []*tensor.Device, ops, cycles int64) (Sample, error) {
	if err := settle(devs); err != nil {
		return Sample{}, err
	}
	s := Sample{At: at, Goroutines: runtime.NumGoroutine(), Ops: ops, Cycles: cycles}
	for _, d := range devs {
		st := d.Stats()
		s.Devices = append(s.Devices, DeviceSample{Device: d.Name(), LiveBytes: st.LiveBytes, PooledBytes: st.PooledBytes, Kernels: st.Kernels})
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.HeapAlloc, s.HeapInuse = ms.HeapAlloc, ms.HeapInuse
	rss, err := readRSS()
	if err != nil {
		return Sample{}, err
	}
	s.RSS = rss
	return s, nil
}

// readRSS returns the resident set size from /proc/self/statm (its second
// field, in pages): everything the process maps and touches, Go heap,
// C allocations of the WebGPU library and driver alike. Elsewhere than
// Linux it is 0, and the RSS metric is left out of the verdicts.
func readRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/self/statm: %q", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}
