package tensor

import (
	"testing"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/recovery"
)

// SetMemoryLimitForTest caps dev's backend memory (live plus pooled bytes;
// WebGPU only) for the rest of the test, so that the out-of-memory path
// runs on demand.
func SetMemoryLimitForTest(t testing.TB, dev *Device, bytes int64) {
	t.Helper()
	var hd hal.Device = dev.hal
	if r, ok := hd.(*recovery.Device); ok {
		hd = r.Current()
	}
	l, ok := hd.(interface{ SetMemoryLimit(int64) int64 })
	if !ok {
		t.Fatalf("%v has no memory limit to set", dev)
	}
	prev := l.SetMemoryLimit(bytes)
	t.Cleanup(func() { l.SetMemoryLimit(prev) })
	// Pooled buffers would serve the next allocation under any cap.
	if c, ok := hd.(interface{ ReleaseCached() int64 }); ok {
		c.ReleaseCached()
	}
}

// ForgetFailuresForTest clears dev's recorded failures, so that a test
// that provokes one on a shared device leaves it clean for the next.
func ForgetFailuresForTest(dev *Device) {
	dev.mu.Lock()
	defer dev.mu.Unlock()
	dev.sticky, dev.next = nil, nil
}
