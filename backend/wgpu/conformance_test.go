//go:build cgo || (js && wasm)

package wgpu

import (
	"testing"

	"github.com/webtensor/webtensor/hal/haltest"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// TestConformance runs the shared HAL suite on the shared device of every
// adapter.
func TestConformance(t *testing.T) {
	forEachTestDevice(t, func(t *testing.T, d *Device) { haltest.Run(t, d) })
}

// TestConformanceClosed checks a device after Close, on a fresh device of
// its own on every adapter: the suite closes it.
func TestConformanceClosed(t *testing.T) { forEachTestAdapter(t, testConformanceClosed) }

func testConformanceClosed(t *testing.T, a adapters.Adapter) {
	d, err := Open(a.Index)
	if err != nil {
		t.Fatal(err)
	}
	haltest.RunClosed(t, d)
}

func BenchmarkKernels(b *testing.B) {
	haltest.Benchmark(b, openTestDevice(b))
}
