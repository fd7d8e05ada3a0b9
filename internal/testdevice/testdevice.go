// Package testdevice opens the devices that tests run on, the same way in
// every package: the CPU, and every WebGPU adapter, once each.
//
// [ForEach] runs a test as subtests "cpu", then one per adapter, named by
// index and graphics API ("webgpu:0-vulkan", "webgpu:1-opengles"): the
// software adapters of `make deps` are both called "llvmpipe (…)".
// [ForEachWebGPU] runs the adapters only, and [WebGPU] opens the first, for
// tests that need just one GPU.
//
// WEBTENSOR_TEST_ADAPTERS, a comma-separated list of adapter indices and
// graphics APIs, restricts the adapters: WEBTENSOR_TEST_ADAPTERS=0 or
// WEBTENSOR_TEST_ADAPTERS=vulkan for a quick local run or on a GPU machine
// (e.g. CI=true WEBTENSOR_TEST_ADAPTERS=0 go test ./...).
//
// Without an adapter the WebGPU subtests are skipped, except under
// CI=true, where they fail. Under CI=true on linux/amd64, with
// WEBTENSOR_TEST_ADAPTERS unset, both software adapters that `make deps`
// installs are required: lavapipe through Vulkan and llvmpipe through
// OpenGL ES. The rules live in package [adapters], which the tensor and
// backend/wgpu tests share.
package testdevice

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
	"github.com/webtensor/webtensor/internal/testdevice/gcquiet"
	"github.com/webtensor/webtensor/tensor"
)

// Tests name the device they run on, so placement must not move their
// work elsewhere (a GPU test would silently test the CPU): they run under
// tensor.Explicit, and the placement tests switch policies themselves.
func init() { tensor.SetPlacement(tensor.Explicit) }

// CI reports whether the tests run in CI (CI=true), where a missing WebGPU
// device is a failure.
var CI = adapters.CI

// CPU opens the CPU device.
func CPU(t testing.TB) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open("cpu")
	require.NoError(t, err)
	return dev
}

// selection lists the WebGPU adapters once: they do not change while the
// tests run.
var selection = sync.OnceValue(func() adapters.Selection {
	var infos []hal.Info
	for _, a := range tensor.Adapters() { // in index order
		if strings.HasPrefix(a.Name, "webgpu:") {
			infos = append(infos, a.Info)
		}
	}
	return adapters.Select(infos, tensor.BackendErrors()["webgpu"])
})

// open opens a selected adapter: it was listed, so failing to open it is
// a failure.
func open(t testing.TB, a adapters.Adapter) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open(a.Device())
	require.NoError(t, err, "open %s (%s)", a.Name(), a.Info.Name)
	return dev
}

// WebGPU opens the first selected WebGPU adapter, skipping the test
// without one unless CI requires it.
func WebGPU(t testing.TB) *tensor.Device {
	t.Helper()
	return open(t, selection().First(t))
}

// ForEachWebGPU runs f as a subtest on each selected WebGPU adapter.
func ForEachWebGPU(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
	t.Helper()
	selection().Run(t, func(t *testing.T, a adapters.Adapter) { f(t, open(t, a)) })
}

// ForEach runs f as a subtest on the CPU, then on each selected WebGPU
// adapter.
func ForEach(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
	t.Helper()
	t.Run("cpu", func(t *testing.T) { f(t, CPU(t)) })
	ForEachWebGPU(t, f)
}

// QuietGC turns automatic garbage collection off for the rest of the test
// and first runs the cleanups of tensors that earlier tests forgot, so
// that dev's live bytes then move only by what the test does (see
// gcquiet.Quiet).
func QuietGC(t *testing.T, dev *tensor.Device) {
	t.Helper()
	gcquiet.Quiet(t, func() int64 { return dev.Stats().LiveBytes })
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
