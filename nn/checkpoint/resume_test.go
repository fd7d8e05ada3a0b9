package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// Resuming from a checkpoint continues training exactly: two steps, save,
// load into a fresh model and optimizer, one more step on each, and the
// parameters agree bit for bit.
func TestResumeTraining(t *testing.T) {
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
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		require.NoError(t, Save(path, model, opt))

		resumed := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(2))
		defer nn.Release(resumed)
		opt2 := optim.NewAdam(resumed.Parameters(), optim.AdamConfig{LR: 0.5})
		require.NoError(t, Load(path, resumed, opt2))
		require.Equal(t, opt.LR(), opt2.LR())
		require.Equal(t, values(t, model), values(t, resumed))

		step(model, opt)
		step(resumed, opt2)
		require.Equal(t, values(t, model), values(t, resumed))
	})
}
