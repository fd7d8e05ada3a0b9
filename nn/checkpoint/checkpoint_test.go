package checkpoint

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// tinyModule has two parameters and a buffer, named as a PyTorch
// Sequential(Linear, BatchNorm1d) would name them.
type tinyModule struct {
	w, b, rm *graph.Value
}

func newTiny(dev *tensor.Device, seed float32) *tinyModule {
	w := make([]float32, 6)
	for i := range w {
		w[i] = seed + float32(i)/8
	}
	return &tinyModule{
		w:  graph.Param(tensor.FromFloat32(dev, w, 3, 2)),
		b:  graph.Param(tensor.FromFloat32(dev, []float32{seed, -seed, 0.5}, 3)),
		rm: graph.Constant(tensor.FromFloat32(dev, []float32{seed * 2, 1, 2}, 3)),
	}
}

func (m *tinyModule) Forward(x *graph.Value) *graph.Value { return x }
func (m *tinyModule) Parameters() []nn.Named {
	return []nn.Named{{Name: "0.weight", Value: m.w}, {Name: "0.bias", Value: m.b}}
}
func (m *tinyModule) Buffers() []nn.Named       { return []nn.Named{{Name: "1.running_mean", Value: m.rm}} }
func (m *tinyModule) SetTraining(training bool) {}
func (m *tinyModule) Training() bool            { return false }
func (m *tinyModule) release() {
	m.w.Release()
	m.b.Release()
	m.rm.Release()
}

// fakeOptim keeps named state tensors and metadata, as optim's
// optimizers do, and copies what LoadState gives it.
type fakeOptim struct {
	state map[string]*tensor.Tensor
	meta  map[string]string
	fail  error
}

func (o *fakeOptim) State() (map[string]*tensor.Tensor, map[string]string) {
	return o.state, o.meta
}

func (o *fakeOptim) LoadState(ts map[string]*tensor.Tensor, meta map[string]string) error {
	if o.fail != nil {
		return o.fail
	}
	for _, t := range o.state {
		t.Release()
	}
	o.state = map[string]*tensor.Tensor{}
	for k, t := range ts {
		o.state[k] = t.Contiguous() // a new reference: Load releases its own
	}
	o.meta = maps.Clone(meta)
	return nil
}

func values(t testing.TB, m nn.Module) map[string][]float32 {
	out := map[string][]float32{}
	for _, list := range [][]nn.Named{m.Parameters(), m.Buffers()} {
		for _, n := range list {
			v, err := n.Value.Float32s()
			require.NoError(t, err)
			out[n.Name] = v
		}
	}
	return out
}

func TestSaveLoad(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		src := newTiny(dev, 1)
		defer src.release()
		opt := &fakeOptim{
			state: map[string]*tensor.Tensor{"0.weight.exp_avg": tensor.FromFloat32(dev, []float32{9, 8, 7, 6, 5, 4}, 3, 2)},
			meta:  map[string]string{"kind": "adam", "0.weight.step": "3"},
		}
		defer releaseAll(opt.state)
		path := filepath.Join(t.TempDir(), "model.safetensors")
		require.NoError(t, Save(path, src, opt))

		// The file is plain safetensors with prefixed optimizer entries.
		raw, meta, err := ReadFile(path, dev)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"0.weight", "0.bias", "1.running_mean", "optim.0.weight.exp_avg"}, keys(raw))
		require.Equal(t, map[string]string{"optim.kind": "adam", "optim.0.weight.step": "3"}, meta)
		releaseAll(raw)

		dst := newTiny(dev, 5)
		defer dst.release()
		opt2 := &fakeOptim{}
		defer func() { releaseAll(opt2.state) }()
		require.NoError(t, Load(path, dst, opt2))
		require.Equal(t, values(t, src), values(t, dst))
		require.True(t, dst.w.RequiresGrad(), "parameters stay parameters")
		require.Equal(t, opt.meta, opt2.meta)
		require.Len(t, opt2.state, 1)
		got, err := opt2.state["0.weight.exp_avg"].Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{9, 8, 7, 6, 5, 4}, got)

		// Weights alone, for inference: the optimizer state is skipped.
		inf := newTiny(dev, 7)
		defer inf.release()
		require.NoError(t, Load(path, inf, nil))
		require.Equal(t, values(t, src), values(t, inf))
	})
}

// A checkpoint loads onto another device than it was saved from.
func TestLoadAcrossDevices(t *testing.T) { forEachWebGPU(t, testLoadAcrossDevices) }

func testLoadAcrossDevices(t *testing.T, gpu *tensor.Device) {
	cpu := cpuDevice(t)
	src := newTiny(cpu, 2)
	defer src.release()
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, Save(path, src, nil))
	dst := newTiny(gpu, 0)
	defer dst.release()
	require.NoError(t, Load(path, dst, nil))
	require.Equal(t, gpu, dst.w.Device())
	require.Equal(t, values(t, src), values(t, dst))
}

func TestLoadMismatchChangesNothing(t *testing.T) {
	dev := cpuDevice(t)
	dir := t.TempDir()
	src := newTiny(dev, 1)
	defer src.release()
	path := filepath.Join(dir, "m.safetensors")
	require.NoError(t, Save(path, src, nil))

	// Wrong shape, a missing and an unexpected name, all reported at once.
	w := tensor.FromFloat32(dev, make([]float32, 4), 2, 2)
	b := tensor.FromFloat32(dev, make([]float32, 3), 3)
	extra := tensor.FromFloat32(dev, make([]float32, 1), 1)
	defer releaseAll(map[string]*tensor.Tensor{"w": w, "b": b, "x": extra})
	bad := filepath.Join(dir, "bad.safetensors")
	require.NoError(t, WriteFile(bad, map[string]*tensor.Tensor{"0.weight": w, "0.bias": b, "2.weight": extra}, nil))
	dst := newTiny(dev, 5)
	defer dst.release()
	before := values(t, dst)
	err := Load(bad, dst, nil)
	require.ErrorContains(t, err, "missing 1.running_mean")
	require.ErrorContains(t, err, "unexpected 2.weight")
	require.ErrorContains(t, err, "mismatched 0.weight (shape [2 2] in the state dict, [3 2] in the module)")
	require.Equal(t, before, values(t, dst))

	// A dtype other than the module's is refused, not converted: a
	// checkpoint is the module's own state.
	w64 := tensor.FromFloat64(dev, make([]float64, 6), 3, 2)
	defer w64.Release()
	wrongType := filepath.Join(dir, "f64.safetensors")
	require.NoError(t, WriteFile(wrongType, map[string]*tensor.Tensor{"0.weight": w64, "0.bias": b, "1.running_mean": b}, nil))
	require.ErrorContains(t, Load(wrongType, dst, nil), "0.weight is float64 in the file, float32 in the module")
	require.Equal(t, before, values(t, dst))

	// An optimizer that refuses its state leaves the module untouched too.
	err = Load(path, dst, &fakeOptim{fail: errors.New("no such parameter")})
	require.ErrorContains(t, err, "no such parameter")
	require.Equal(t, before, values(t, dst))

	require.Error(t, Load(filepath.Join(dir, "missing.safetensors"), dst, nil))
}

// A failing Save leaves the previous checkpoint intact and no temporary
// file behind.
func TestSaveAtomic(t *testing.T) {
	dev := cpuDevice(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	src := newTiny(dev, 1)
	defer src.release()
	require.NoError(t, Save(path, src, nil))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	// The optimizer's state names a tensor that cannot be written.
	broken := &fakeOptim{state: map[string]*tensor.Tensor{"x": nil}}
	require.ErrorContains(t, Save(path, newTinyReleased(t, dev), broken), `"optim.x" is nil`)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}

func newTinyReleased(t *testing.T, dev *tensor.Device) *tinyModule {
	m := newTiny(dev, 3)
	t.Cleanup(m.release)
	return m
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
