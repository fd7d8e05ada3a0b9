package train

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/amp"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// TestRunAutocastWithScaler: Run with Autocast and a GradScaler trains
// (the loss falls, every step taken: a power-of-two scale is exact), its
// validation reads float32 outputs, the scale grows by the rule, and the
// checkpoints carry the scaler's state, which LoadState takes back.
func TestRunAutocastWithScaler(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		trainSet, valSet := blobs(45, 3), blobs(23, 4)
		model := newLinear(dev, 2, 3, 5)
		defer nn.Release(model)
		scaler := amp.NewGradScaler(model.Parameters(), amp.Config{InitScale: 256, GrowthInterval: 4})
		dir := t.TempDir()
		hist, err := Run(context.Background(), Config{
			Model: model, Loss: crossEntropy, Optimizer: optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.05}),
			Train: trainSet, Val: valSet, Epochs: 4, BatchSize: 10, Seed: 1, Silent: true,
			Autocast: true, Scaler: scaler,
			Checkpoints: Checkpoints{Dir: dir},
		})
		require.NoError(t, err)
		losses := hist.Metric(MetricLoss)
		assert.Less(t, losses[3], losses[0], "training under autocast lowers the loss: %v", losses)
		assert.Greater(t, hist.Epochs[3].Metrics["val_accuracy"], 0.6)
		// 4 epochs of 5 batches, none overflowing: 20 clean steps, so
		// five growths by 2 from 256.
		assert.Equal(t, 256.0*32, scaler.CurrentScale())
		assert.Equal(t, 0, scaler.GrowthTracker())

		loaded := newLinear(dev, 2, 3, 6)
		defer nn.Release(loaded)
		meta, err := checkpoint.LoadModule(filepath.Join(dir, LastFile), loaded)
		require.NoError(t, err)
		back := amp.NewGradScaler(model.Parameters(), amp.Config{})
		require.NoError(t, back.LoadState(meta))
		assert.Equal(t, scaler.CurrentScale(), back.CurrentScale())
	})
}
