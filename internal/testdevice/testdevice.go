// Package testdevice opens the devices that tests run on, the same way in
// every package: the CPU, and the first WebGPU adapter, which is skipped
// when there is none except under CI=true, where it is required.
package testdevice

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// Tests name the device they run on, so placement must not move their
// work elsewhere (a GPU test would silently test the CPU): they run under
// tensor.Explicit, and the placement tests switch policies themselves.
func init() { tensor.SetPlacement(tensor.Explicit) }

// CI reports whether the tests run in CI, where a missing WebGPU device is
// a failure.
func CI() bool { return os.Getenv("CI") == "true" }

// CPU opens the CPU device.
func CPU(t testing.TB) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open("cpu")
	require.NoError(t, err)
	return dev
}

// WebGPU opens the first WebGPU adapter, skipping the test without one
// unless CI requires it.
func WebGPU(t testing.TB) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open("webgpu")
	if err != nil {
		if CI() {
			t.Fatalf("CI=true requires a WebGPU device: %v", err)
		}
		t.Skipf("no WebGPU device: %v", err)
	}
	return dev
}

// ForEach runs f as a subtest on the CPU and on WebGPU.
func ForEach(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
	t.Run("cpu", func(t *testing.T) { f(t, CPU(t)) })
	t.Run("webgpu", func(t *testing.T) { f(t, WebGPU(t)) })
}

// QuietGC turns automatic garbage collection off for the rest of the test
// and lets the cleanups of tensors that earlier tests forgot run first, so
// that dev's live bytes then move only by what the test does.
func QuietGC(t *testing.T, dev *tensor.Device) {
	t.Helper()
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	prev, stable := int64(-1), 0
	for i := 0; i < 500 && stable < 5; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
		cur := dev.Stats().LiveBytes
		if cur == prev {
			stable++
		} else {
			stable = 0
		}
		prev = cur
	}
	require.Equal(t, 5, stable, "live bytes did not settle")
}

// Float64s reads t back as float64s, whatever its dtype, failing the test
// on a device error.
func Float64s(t testing.TB, x *tensor.Tensor) []float64 {
	t.Helper()
	require.NotNil(t, x)
	if x.DType() == tensor.Float64 {
		out, err := x.Float64s()
		require.NoError(t, err)
		return out
	}
	if x.DType() != tensor.Float32 {
		x = x.Cast(tensor.Float32)
		defer x.Release()
	}
	f, err := x.Float32s()
	require.NoError(t, err)
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}
