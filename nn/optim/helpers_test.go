package optim

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// The devices every test runs on (internal/testdevice).
var (
	ci            = testdevice.CI
	cpuDevice     = testdevice.CPU
	forEachDevice = testdevice.ForEach
	forEachWebGPU = testdevice.ForEachWebGPU
	quietGC       = testdevice.QuietGC
)

func f32s(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

// param makes a named float32 parameter of shape [len(data)].
func param(dev *tensor.Device, name string, data []float64) nn.Named {
	return nn.Named{Name: name, Value: graph.Param(tensor.FromFloat32(dev, f32s(data)))}
}

func setGrad(dev *tensor.Device, p nn.Named, g []float64) {
	p.Value.SetGrad(tensor.FromFloat32(dev, f32s(g), p.Value.Shape()...))
}

// read returns t's elements as float64.
func read(t testing.TB, x *tensor.Tensor) []float64 {
	t.Helper()
	out, err := x.Float32s()
	require.NoError(t, err)
	r := make([]float64, len(out))
	for i, v := range out {
		r[i] = float64(v)
	}
	return r
}

func releaseParams(ps []nn.Named) {
	for _, p := range ps {
		p.Value.Release()
	}
}

// newParam makes a float32 parameter of zeros.
func newParam(dev *tensor.Device, shape []int) *graph.Value {
	return graph.Param(tensor.Zeros(dev, shape...))
}
