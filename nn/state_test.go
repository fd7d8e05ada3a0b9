package nn

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

func stateModel(dev *tensor.Device, seed uint64) *Sequential {
	gen := tensor.NewGenerator(seed)
	return NewSequential(NewLinear(dev, 3, 4, true, gen), NewBatchNorm1d(dev, 4), ReLU{}, NewLinear(dev, 4, 2, true, gen))
}

// readState reads every tensor of m's state dict.
func readState(t *testing.T, m Module) map[string][]float64 {
	out := map[string][]float64{}
	for k, v := range StateDict(m) {
		out[k] = readTensor(t, v)
	}
	return out
}

func TestStateDict(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		a := stateModel(e.dev, 1)
		defer Release(a)
		castModule(e, a)
		// One training step's forward moves the running statistics off
		// their initial values.
		x := e.constant(randn(130, 15, 1), 5, 3)
		defer x.Release()
		a.Forward(x).Release()

		sd := StateDict(a)
		want := []string{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var", "1.num_batches_tracked", "3.weight", "3.bias"}
		require.ElementsMatch(t, want, slices.Collect(maps.Keys(sd)))
		require.Same(t, a.Modules[0].(*Linear).Weight.Tensor(), sd["0.weight"]) // borrowed

		b := stateModel(e.dev, 2)
		defer Release(b)
		castModule(e, b)
		require.NotEqual(t, readState(t, a), readState(t, b))
		require.NoError(t, LoadStateDict(b, sd))
		require.Equal(t, readState(t, a), readState(t, b))
		// The loaded values are copies.
		before := readState(t, b)
		w := a.Modules[0].(*Linear).Weight
		w.SetTensor(e.tensorOf(make([]float64, 12), 4, 3))
		require.Equal(t, before, readState(t, b))
		a.SetTraining(false)
		b.SetTraining(false)
		ya, yb := a.Forward(x), b.Forward(x)
		require.NotEqual(t, read(t, ya), read(t, yb))
		releaseValues(ya, yb)

		// Errors name every problem and load nothing.
		bad := maps.Clone(StateDict(a))
		delete(bad, "3.bias")
		bad["extra.weight"] = sd["0.bias"]
		bad["4.bias"] = sd["0.bias"]
		small := e.tensorOf(make([]float64, 4), 2, 2)
		defer small.Release()
		bad["0.weight"] = small
		bad["1.running_var"] = nil
		err := LoadStateDict(b, bad)
		require.EqualError(t, err, "nn.LoadStateDict: missing 3.bias; unexpected 4.bias, extra.weight; "+
			"mismatched 0.weight (shape [2 2] in the state dict, [4 3] in the module), 1.running_var (nil tensor)")
		require.Equal(t, before, readState(t, b))
	})

	// Values convert to the module's dtype, as PyTorch's copy_.
	dev := cpuDevice(t)
	a := stateModel(dev, 3)
	defer Release(a)
	castModule(env{dev: dev, dt: tensor.Float64}, a)
	b := stateModel(dev, 4)
	defer Release(b)
	require.NoError(t, LoadStateDict(b, StateDict(a)))
	for _, p := range b.Parameters() {
		require.Equal(t, tensor.Float32, p.Value.DType())
	}
	for k, v := range readState(t, a) {
		near(t, v, readState(t, b)[k], 1e-7, k)
	}
}

func TestTo(t *testing.T) { forEachWebGPU(t, testTo) }

func testTo(t *testing.T, gpu *tensor.Device) {
	cpu := cpuDevice(t)
	m := stateModel(cpu, 5)
	defer Release(m)
	x := graph.Constant(tensor.FromFloat32(cpu, []float32{1, -2, 3, 0.5, 0, -1}, 2, 3))
	defer x.Release()
	y := m.Forward(x)
	backwardSum(t, y)
	y.Release()
	want := readState(t, m)

	require.NoError(t, To(m, gpu))
	for _, n := range append(m.Parameters(), m.Buffers()...) {
		require.Same(t, gpu, n.Value.Device(), n.Name)
	}
	for _, p := range m.Parameters() {
		require.Nil(t, p.Value.Grad(), "the gradient on the old device is dropped")
	}
	require.Equal(t, want, readState(t, m))

	// The model computes on its new device as on the old one.
	xg := graph.Constant(x.Tensor().To(gpu))
	defer xg.Release()
	m.SetTraining(false)
	yg := m.Forward(xg)
	defer yg.Release()
	require.NoError(t, To(m, cpu))
	require.Equal(t, want, readState(t, m))
	yc := m.Forward(x)
	defer yc.Release()
	near(t, read(t, yc), read(t, yg), 1e-5)
}

func TestReleaseAndNumParams(t *testing.T) {
	dev := cpuDevice(t)
	quietGC(t, dev)
	base := dev.Stats().LiveBytes
	gen := tensor.NewGenerator(6)
	m := NewSequential(NewConv2d(dev, 3, 8, [2]int{3, 3}, tensor.ConvOptions{}, true, gen), NewBatchNorm2d(dev, 8),
		NewFlatten(), NewLinear(dev, 8, 10, true, gen), NewTransformerEncoderBlock(dev, 10, 2, 16, 0, gen),
		NewEmbedding(dev, 5, 2, gen), NewLayerNorm(dev, []int{2}))
	require.Equal(t, 8*3*9+8+8+8+8*10+10+(30*10+30+10*10+10)+(10*16+16+16*10+10)+4*10+5*2+2+2, NumParams(m))
	require.Greater(t, dev.Stats().LiveBytes, base)
	Release(m)
	require.Equal(t, base, dev.Stats().LiveBytes)
}
