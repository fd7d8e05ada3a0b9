//go:build cgo

package wgpu

import (
	"testing"

	"github.com/webtensor/webtensor/hal/haltest"
)

// TestConformance runs the shared HAL suite on the shared test device.
func TestConformance(t *testing.T) {
	haltest.Run(t, openTestDevice(t))
}

// TestConformanceClosed checks a device after Close, on a fresh device of
// its own: the suite closes it.
func TestConformanceClosed(t *testing.T) {
	openTestDevice(t) // skips, or fails under CI, without a device
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	haltest.RunClosed(t, d)
}

func BenchmarkKernels(b *testing.B) {
	haltest.Benchmark(b, openTestDevice(b))
}
