package graph

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

func ci() bool { return os.Getenv("CI") == "true" }

func cpuDevice(t testing.TB) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open("cpu")
	require.NoError(t, err)
	return dev
}

// webgpuDevice opens the first WebGPU adapter. Without one the test is
// skipped, except under CI=true, where it is required.
func webgpuDevice(t testing.TB) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open("webgpu")
	if err != nil {
		if ci() {
			t.Fatalf("CI=true requires a WebGPU device: %v", err)
		}
		t.Skipf("no WebGPU device: %v", err)
	}
	return dev
}

// forEachDevice runs f as a subtest on the CPU and on WebGPU.
func forEachDevice(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
	t.Run("cpu", func(t *testing.T) { f(t, cpuDevice(t)) })
	t.Run("webgpu", func(t *testing.T) { f(t, webgpuDevice(t)) })
}

// param makes a float32 leaf that requires a gradient.
func param(dev *tensor.Device, data []float32, shape ...int) *Value {
	return Param(tensor.FromFloat32(dev, data, shape...))
}

// constant makes a float32 value that needs none.
func constant(dev *tensor.Device, data []float32, shape ...int) *Value {
	return Constant(tensor.FromFloat32(dev, data, shape...))
}

// read returns x's elements as float64, failing the test on a device error.
func read(t testing.TB, x *Value) []float64 {
	t.Helper()
	require.NotNil(t, x)
	f := x.Tensor()
	if f.DType() == tensor.Float64 {
		out, err := f.Float64s()
		require.NoError(t, err)
		return out
	}
	if f.DType() != tensor.Float32 {
		f = f.Cast(tensor.Float32)
		defer f.Release()
	}
	f32, err := f.Float32s()
	require.NoError(t, err)
	out := make([]float64, len(f32))
	for i, v := range f32 {
		out[i] = float64(v)
	}
	return out
}
