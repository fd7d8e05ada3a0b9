package graph

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// The devices every test runs on (internal/testdevice).
var (
	ci            = testdevice.CI
	cpuDevice     = testdevice.CPU
	webgpuDevice  = testdevice.WebGPU
	forEachDevice = testdevice.ForEach
	forEachWebGPU = testdevice.ForEachWebGPU
)

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
	return testdevice.Float64s(t, x.Tensor())
}
