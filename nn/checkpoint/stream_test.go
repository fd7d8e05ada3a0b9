package checkpoint

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// A module round-trips through a bytes.Buffer with its metadata, and the
// stream is a plain state_dict: exactly the module's state-dict names,
// nothing of an optimizer.
func TestModuleStreamRoundTrip(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		src := newTiny(dev, 1.5)
		defer src.release()
		config, err := json.Marshal(map[string]any{"hidden": 8, "lr": 0.01, "name": "tiny \"quoted\""})
		require.NoError(t, err)
		meta := map[string]string{"epoch": "3", "config": string(config), "empty": ""}

		var buf bytes.Buffer
		require.NoError(t, WriteModule(&buf, src, meta))
		raw, rawMeta, err := Read(bytes.NewReader(buf.Bytes()), cpuDevice(t))
		require.NoError(t, err)
		defer releaseAll(raw)
		wantNames := keys(nn.StateDict(src))
		slices.Sort(wantNames)
		gotNames := keys(raw)
		slices.Sort(gotNames)
		require.Equal(t, wantNames, gotNames, "the stream holds the state dict and nothing else")
		require.Equal(t, meta, rawMeta)

		dst := newTiny(dev, 7)
		defer dst.release()
		got, err := ReadModule(&buf, dst)
		require.NoError(t, err)
		require.Equal(t, meta, got)
		require.Equal(t, values(t, src), values(t, dst))
	})
}

// A stream that does not fit the module, and every truncation of one that
// does, is an error that leaves the module as it was.
func TestReadModuleRejects(t *testing.T) {
	dev := cpuDevice(t)
	src := newTiny(dev, 1)
	defer src.release()
	var buf bytes.Buffer
	require.NoError(t, WriteModule(&buf, src, map[string]string{"epoch": "1"}))
	good := buf.Bytes()

	dst := newTiny(dev, 7)
	defer dst.release()
	before := values(t, dst)
	for n := range len(good) {
		_, err := ReadModule(bytes.NewReader(good[:n]), dst)
		require.Error(t, err, "truncated to %d of %d bytes", n, len(good))
		require.Equal(t, before, values(t, dst))
	}

	other := nn.NewLinear(dev, 2, 3, true, tensor.NewGenerator(1))
	defer nn.Release(other)
	var lin bytes.Buffer
	require.NoError(t, WriteModule(&lin, other, nil))
	_, err := ReadModule(&lin, dst)
	require.ErrorContains(t, err, "does not match the module")
	require.Equal(t, before, values(t, dst))
}

// Metadata that WriteModule refuses is refused before anything is written.
func TestWriteModuleMetadataLimits(t *testing.T) {
	dev := cpuDevice(t)
	m := newTiny(dev, 1)
	defer m.release()
	for name, meta := range map[string]map[string]string{
		"reserved prefix": {OptimPrefix + "lr": "1"},
		"too large":       {"blob": strings.Repeat("x", MaxMetadataBytes)},
		"invalid UTF-8":   {"k": "\xff"},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			require.Error(t, WriteModule(&buf, m, meta))
			require.Zero(t, buf.Len(), "nothing written")
		})
	}
	var buf bytes.Buffer
	require.NoError(t, WriteModule(&buf, m, map[string]string{"blob": strings.Repeat("x", MaxMetadataBytes-4)}),
		"exactly MaxMetadataBytes is accepted")
}

// Optimizer state travels in its own stream: two steps, then model and
// optimizer written to two buffers, read into a fresh model and
// optimizer, and one more step on each gives the same parameters bit for
// bit.
func TestOptimizerStreamResumes(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x := graph.Constant(tensor.FromFloat32(dev, []float32{1, -2, 0.5, 3, 0.25, -1}, 2, 3))
		y := graph.Constant(tensor.FromFloat32(dev, []float32{0.5, -1, 2, 1}, 2, 2))
		defer x.Release()
		defer y.Release()
		step := func(m nn.Module, opt optim.Optimizer) {
			pred := m.Forward(x)
			loss := nn.MSELoss(pred, y)
			graph.Backward(loss)
			require.NoError(t, opt.Step())
			opt.ZeroGrad()
			pred.Release()
			loss.Release()
		}
		model := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(1))
		defer nn.Release(model)
		opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.01})
		step(model, opt)
		step(model, opt)

		var modelBuf, optBuf bytes.Buffer
		require.NoError(t, WriteModule(&modelBuf, model, map[string]string{"epoch": "2"}))
		require.NoError(t, WriteOptimizer(&optBuf, opt, map[string]string{"epoch": "2"}))
		require.NotContains(t, modelBuf.String(), OptimPrefix, "the model stream holds no optimizer state")

		resumed := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(2))
		defer nn.Release(resumed)
		opt2 := optim.NewAdam(resumed.Parameters(), optim.AdamConfig{LR: 0.5})
		meta, err := ReadModule(&modelBuf, resumed)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"epoch": "2"}, meta)
		meta, err = ReadOptimizer(&optBuf, opt2)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"epoch": "2"}, meta, "the optimizer's own keys are not user metadata")
		require.Equal(t, opt.LR(), opt2.LR())

		step(model, opt)
		step(resumed, opt2)
		require.Equal(t, values(t, model), values(t, resumed))
	})
}

// A combined file written by Save still loads: the model part through
// LoadModule, the optimizer part through LoadOptimizer. A model-only file
// has no optimizer state to give.
func TestLoadCombinedFile(t *testing.T) {
	dev := cpuDevice(t)
	src := newTiny(dev, 2)
	defer src.release()
	opt := &fakeOptim{
		state: map[string]*tensor.Tensor{"0.weight.exp_avg": tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 3, 2)},
		meta:  map[string]string{"optimizer": "fake", "lr": "0.5"},
	}
	defer releaseAll(opt.state)
	dir := t.TempDir()
	combined := filepath.Join(dir, "combined.safetensors")
	require.NoError(t, Save(combined, src, opt))

	dst := newTiny(dev, 9)
	defer dst.release()
	meta, err := LoadModule(combined, dst)
	require.NoError(t, err)
	require.Empty(t, meta)
	require.Equal(t, values(t, src), values(t, dst))

	opt2 := &fakeOptim{}
	defer func() { releaseAll(opt2.state) }()
	_, err = LoadOptimizer(combined, opt2)
	require.NoError(t, err)
	require.Equal(t, opt.meta, opt2.meta)
	require.Equal(t, bitsOf(t, opt.state["0.weight.exp_avg"]), bitsOf(t, opt2.state["0.weight.exp_avg"]))

	modelOnly := filepath.Join(dir, "model.safetensors")
	require.NoError(t, SaveModule(modelOnly, src, map[string]string{"epoch": "4"}))
	_, err = LoadOptimizer(modelOnly, &fakeOptim{})
	require.ErrorContains(t, err, "no optimizer state")
	require.ErrorContains(t, err, modelOnly, "file errors name the file")
	_, err = LoadModule(filepath.Join(dir, "missing.safetensors"), dst)
	require.Error(t, err)
}

// FuzzReadModule reads arbitrary bytes into a module: an error leaves it
// unchanged, and nothing panics.
func FuzzReadModule(f *testing.F) {
	dev := cpuDevice(f)
	src := newTiny(dev, 1)
	var buf bytes.Buffer
	require.NoError(f, WriteModule(&buf, src, map[string]string{"epoch": "1", "config": `{"a":1}`}))
	src.release()
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, file []byte) {
		m := newTiny(dev, 7)
		defer m.release()
		before := values(t, m)
		if _, err := ReadModule(bytes.NewReader(file), m); err != nil {
			require.Equal(t, before, values(t, m))
			require.True(t, strings.HasPrefix(err.Error(), "checkpoint: "), "%v", err)
		}
	})
}
