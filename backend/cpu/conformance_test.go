package cpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/cpu"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// TestConformance runs the shared HAL v2 suite on a device opened the way
// applications open it.
func TestConformance(t *testing.T) {
	backend, ok := hal.Lookup("cpu")
	require.True(t, ok, "cpu backend not registered")
	dev, err := backend.Open(0)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, dev.Close()) })
	haltest.Run(t, dev)
}

// TestConformanceRequiredOnly runs the suite on the device with its
// optional tier hidden, as a backend that implements only the required
// kernels: the suite must accept it.
func TestConformanceRequiredOnly(t *testing.T) {
	dev := cpu.New()
	t.Cleanup(func() { assert.NoError(t, dev.Close()) })
	haltest.Run(t, haltest.RequiredOnly(dev))
}

var _ hal.Device = cpu.New()

// TestConformanceClosed runs the closed-device checks on a fresh device.
func TestConformanceClosed(t *testing.T) {
	haltest.RunClosed(t, cpu.New())
}

// BenchmarkKernels runs the shared kernel benchmarks, the same ones the
// WebGPU backend runs, so the two can be compared side by side.
func BenchmarkKernels(b *testing.B) {
	dev := cpu.New()
	b.Cleanup(func() { _ = dev.Close() })
	haltest.Benchmark(b, dev)
}
