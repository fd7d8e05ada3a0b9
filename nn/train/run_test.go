package train

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// The history Run records equals an independent float64 replay of the
// same run: plain SGD on a linear regression with float targets, the
// same seeded batch order, the training loss of each epoch (each batch's
// loss before its step, weighted by its size) and the validation loss
// after it. The device computes in float32, so they agree to a few
// float32 roundings.
func TestHistoryMatchesFloat64Replay(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		trainSet, valSet := regression(37, 1), regression(11, 2)
		model := newLinear(dev, 3, 1, 3)
		defer nn.Release(model)
		start := params(t, model)
		const lr, epochs, batch, seed = 0.05, 4, 8, 9
		var out bytes.Buffer
		hist, err := Run(context.Background(), Config{
			Model: model, Loss: mse, Optimizer: optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: lr}),
			Train: trainSet, Val: valSet, Epochs: epochs, BatchSize: batch, Seed: seed,
			Output: &out, Bar: BarOff,
		})
		require.NoError(t, err)
		require.Len(t, hist.Epochs, epochs)
		require.Equal(t, epochs, strings.Count(out.String(), "\n"), "one line per epoch:\n%s", out.String())

		w, b := start["weight"], start["bias"][0]
		for e := 1; e <= epochs; e++ {
			order := data.Batches(trainSet.Len(), batch, true, seed<<16+uint64(e-1), false)
			wantLoss := sgdEpoch64(trainSet, w, &b, lr, order)
			got := hist.Epochs[e-1]
			require.Equal(t, e, got.Epoch)
			relClose(t, wantLoss, got.Metrics[MetricLoss], 1e-5, "epoch %d loss", e)
			relClose(t, linearLoss64(valSet, w, b, all(valSet.Len())), got.Metrics["val_loss"], 1e-5, "epoch %d val_loss", e)
			require.NotContains(t, got.Metrics, MetricAccuracy, "float targets have no accuracy")
			require.Positive(t, got.Metrics[MetricThroughput])
			require.Equal(t, lr, got.Metrics[MetricLR])
		}
		require.Less(t, hist.Epochs[epochs-1].Metrics[MetricLoss], hist.Epochs[0].Metrics[MetricLoss])
		require.Equal(t, hist.Metric("val_loss")[2], hist.Epochs[2].Metrics["val_loss"])
		final := params(t, model)
		for j := range w {
			relClose(t, w[j], final["weight"][j], 1e-5, "final weight %d", j)
		}
	})
}

// Accuracy, on the training batches and on the validation set, is the
// fraction of samples whose arg-max output is their label; val_accuracy
// and val_loss are checked against float64 from each epoch's weights.
func TestAccuracyMatchesFloat64(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		trainSet, valSet := blobs(45, 3), blobs(23, 4)
		model := newLinear(dev, 2, 3, 5)
		defer nn.Release(model)
		type snapshot struct{ w, b []float64 }
		var snaps []snapshot
		hist, err := Run(context.Background(), Config{
			Model: model, Loss: crossEntropy, Optimizer: optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.05}),
			Train: trainSet, Val: valSet, Epochs: 3, BatchSize: 10, EvalBatchSize: 7, Seed: 1, Silent: true,
			OnEpoch: func(Epoch) error {
				p := params(t, model)
				snaps = append(snaps, snapshot{p["weight"], p["bias"]})
				return nil
			},
		})
		require.NoError(t, err)
		for e, s := range snaps {
			correct, loss := 0, 0.0
			for i := range valSet.Len() {
				logits := make([]float64, 3)
				for c := range 3 {
					logits[c] = s.b[c] + s.w[2*c]*float64(valSet.X[2*i]) + s.w[2*c+1]*float64(valSet.X[2*i+1])
				}
				best, lse := 0, 0.0
				for c := range 3 {
					if logits[c] > logits[best] {
						best = c
					}
					lse += math.Exp(logits[c])
				}
				if best == int(valSet.Y[i]) {
					correct++
				}
				loss += math.Log(lse) - logits[valSet.Y[i]]
			}
			m := hist.Epochs[e].Metrics
			require.Equal(t, float64(correct)/float64(valSet.Len()), m["val_accuracy"], "epoch %d", e+1)
			relClose(t, loss/float64(valSet.Len()), m["val_loss"], 1e-5, "epoch %d val_loss", e+1)
			acc := m[MetricAccuracy]
			require.True(t, acc >= 0 && acc <= 1 && acc*45 == math.Round(acc*45), "train accuracy %v counts samples", acc)
		}
	})
}

// A user metric that returns a crafted value per epoch, whatever the
// batch: the way to test early stopping and best checkpoints on a known
// sequence.
func craftedMetric(seq []float64, epoch *int) Metric {
	return Metric{Name: "crafted", Batch: func(_, _ *tensor.Tensor) (float64, error) { return seq[*epoch], nil }}
}

// crafted runs Run with the crafted metric "val_crafted" following seq.
func crafted(t *testing.T, dev *tensor.Device, seq []float64, c Config) (*History, *nn.Linear, [][]float64) {
	model := newLinear(dev, 3, 1, 3)
	t.Cleanup(func() { nn.Release(model) })
	epoch := 0
	var weights [][]float64
	c.Model, c.Loss, c.Train, c.Val = model, mse, regression(20, 1), regression(6, 2)
	c.Optimizer = optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.05})
	c.Epochs, c.BatchSize, c.Silent = len(seq), 5, true
	c.Metrics = []Metric{craftedMetric(seq, &epoch)}
	c.OnEpoch = func(Epoch) error {
		epoch++
		weights = append(weights, params(t, model)["weight"])
		return nil
	}
	hist, err := Run(context.Background(), c)
	require.NoError(t, err)
	return hist, model, weights
}

// expectedStop is early stopping's rule written out plainly: the epoch
// (from 1) at which patience runs out, or 0 when it never does.
func expectedStop(seq []float64, maximize bool, patience int, minDelta float64) int {
	best, wait := seq[0], 0
	for e := 1; e < len(seq); e++ {
		improved := seq[e] < best-minDelta
		if maximize {
			improved = seq[e] > best+minDelta
		}
		if improved {
			best, wait = seq[e], 0
			continue
		}
		if wait++; wait >= patience {
			return e + 1
		}
	}
	return 0
}

func TestEarlyStopping(t *testing.T) {
	dev := cpuDevice(t)
	// Dyadic values, so that the validation mean (6·v over the batches,
	// divided by 6) gives each back exactly.
	seq := []float64{5, 4, 4.5, 3.9375, 4.25, 4.125, 3, 2.875}
	cases := []struct {
		name     string
		maximize bool
		patience int
		minDelta float64
	}{
		{"min delta hides a small gain", false, 2, 0.125},
		{"a small gain counts without min delta", false, 2, 0},
		{"patience 1", false, 1, 0},
		{"maximize", true, 3, 0},
		{"patience never runs out", false, 8, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := expectedStop(seq, tc.maximize, tc.patience, tc.minDelta)
			hist, _, _ := crafted(t, dev, seq, Config{EarlyStop: &EarlyStopping{
				Monitor: Monitor{Metric: "val_crafted", Maximize: tc.maximize}, Patience: tc.patience, MinDelta: tc.minDelta}})
			if want == 0 {
				require.Len(t, hist.Epochs, len(seq))
				require.False(t, hist.StoppedEarly)
				return
			}
			require.Len(t, hist.Epochs, want)
			require.True(t, hist.StoppedEarly)
			require.Equal(t, seq[:want], hist.Metric("val_crafted"))
		})
	}
	// The first case stops at epoch 4 and the second does not stop there:
	// the table exercises what MinDelta changes.
	require.Equal(t, 4, expectedStop(seq, false, 2, 0.125))
	require.NotEqual(t, 4, expectedStop(seq, false, 2, 0))
}

// best.safetensors holds the weights of the epoch with the best monitored
// value, not the last epoch's; its metadata names that epoch and value.
// Periodic and last checkpoints are written too.
func TestBestCheckpoint(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		seq := []float64{5, 3, 1, 2, 4, 6}
		dir := filepath.Join(t.TempDir(), "made", "by", "Run")
		hist, model, weights := crafted(t, dev, seq, Config{
			Checkpoints: Checkpoints{Dir: dir, Every: 2, Best: Monitor{Metric: "val_crafted"}},
			Metadata:    map[string]string{"config": `{"hidden":0}`},
		})
		wantBest := 1
		for e, v := range seq {
			if v < seq[wantBest-1] {
				wantBest = e + 1
			}
		}
		require.Equal(t, wantBest, hist.BestEpoch)

		fresh := newLinear(dev, 3, 1, 99)
		defer nn.Release(fresh)
		meta, err := checkpoint.LoadModule(filepath.Join(dir, BestFile), fresh)
		require.NoError(t, err)
		require.Equal(t, weights[wantBest-1], params(t, fresh)["weight"])
		require.NotEqual(t, weights[len(weights)-1], weights[wantBest-1])
		require.Equal(t, strconv.Itoa(wantBest), meta["epoch"])
		require.Equal(t, strconv.FormatFloat(seq[wantBest-1], 'g', -1, 64), meta["metric.val_crafted"])
		require.Equal(t, `{"hidden":0}`, meta["config"])

		for _, e := range []int{2, 4, 6} {
			mf, of := EpochFiles(e)
			meta, err := checkpoint.LoadModule(filepath.Join(dir, mf), fresh)
			require.NoError(t, err)
			require.Equal(t, weights[e-1], params(t, fresh)["weight"], "epoch %d", e)
			require.Equal(t, strconv.Itoa(e*4), meta["step"], "4 batches of 5 per epoch")
			opt := optim.NewSGD(fresh.Parameters(), optim.SGDConfig{LR: 1})
			_, err = checkpoint.LoadOptimizer(filepath.Join(dir, of), opt)
			require.NoError(t, err)
			require.Equal(t, 0.05, opt.LR())
		}
		_, err = checkpoint.LoadModule(filepath.Join(dir, LastFile), fresh)
		require.NoError(t, err)
		require.Equal(t, params(t, model), params(t, fresh))
	})
}

// Cancelling mid-epoch stops before the next batch, returns
// context.Canceled with the completed epochs, and leaves a last
// checkpoint of the model and optimizer as of the last step, from which
// training resumes exactly as the uninterrupted run goes on.
func TestCancelMidEpoch(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		trainSet := regression(20, 1)
		model := newLinear(dev, 3, 1, 3)
		defer nn.Release(model)
		opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.01})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		batches := 0
		loss := func(out, y *graph.Value) *graph.Value {
			if batches++; batches == 6 { // the second batch of epoch 2
				cancel()
			}
			return mse(out, y)
		}
		dir := t.TempDir()
		hist, err := Run(ctx, Config{Model: model, Loss: loss, Optimizer: opt, Train: trainSet,
			Epochs: 3, BatchSize: 5, Silent: true, Checkpoints: Checkpoints{Dir: dir}})
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, hist.Epochs, 1)
		require.Equal(t, 6, batches, "no batch after the cancellation")

		fresh := newLinear(dev, 3, 1, 77)
		defer nn.Release(fresh)
		freshOpt := optim.NewAdam(fresh.Parameters(), optim.AdamConfig{LR: 0.5})
		meta, err := checkpoint.LoadModule(filepath.Join(dir, LastFile), fresh)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"epoch": "1", "step": "6", "interrupted": "true"}, withoutMetrics(meta))
		_, err = checkpoint.LoadOptimizer(filepath.Join(dir, LastOptimFile), freshOpt)
		require.NoError(t, err)
		require.Equal(t, params(t, model), params(t, fresh))

		// One more identical step on each gives identical parameters.
		step := func(m nn.Module, o optim.Optimizer) {
			x, y := trainSet.Batch(dev, []int{3, 7, 11})
			xv, yv := graph.Constant(x), graph.Constant(y)
			defer xv.Release()
			defer yv.Release()
			out := m.Forward(xv)
			defer out.Release()
			l := mse(out, yv)
			defer l.Release()
			require.NoError(t, graph.Backward(l))
			require.NoError(t, o.Step())
			o.ZeroGrad()
		}
		step(model, opt)
		step(fresh, freshOpt)
		require.Equal(t, params(t, model), params(t, fresh))
	})
}

// A run cancelled mid-epoch and resumed from its last checkpoint takes
// the same steps as one never interrupted: the final parameters agree bit
// for bit, and so do the metrics of the epochs after the interrupted one.
func TestResumeAfterCancel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		trainSet := regression(23, 1)
		config := func(model nn.Module, opt optim.Optimizer) Config {
			return Config{Model: model, Loss: mse, Optimizer: opt, Train: trainSet, Epochs: 3, BatchSize: 5,
				Seed: 4, Schedule: optim.CosineWarmup{Base: 0.02, Warmup: 3, Total: 15}, Silent: true}
		}
		whole := newLinear(dev, 3, 1, 3)
		defer nn.Release(whole)
		want, err := Run(context.Background(), config(whole, optim.NewAdam(whole.Parameters(), optim.AdamConfig{})))
		require.NoError(t, err)

		cut := newLinear(dev, 3, 1, 3)
		defer nn.Release(cut)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := config(cut, optim.NewAdam(cut.Parameters(), optim.AdamConfig{}))
		batches := 0
		c.Loss = func(out, y *graph.Value) *graph.Value {
			if batches++; batches == 7 { // the third of five batches of epoch 2
				cancel()
			}
			return mse(out, y)
		}
		dir := t.TempDir()
		c.Checkpoints.Dir = dir
		_, err = Run(ctx, c)
		require.ErrorIs(t, err, context.Canceled)

		resumed := newLinear(dev, 3, 1, 42)
		defer nn.Release(resumed)
		opt := optim.NewAdam(resumed.Parameters(), optim.AdamConfig{})
		epoch, step, err := Resume(dir, resumed, opt)
		require.NoError(t, err)
		require.Equal(t, []int{1, 7}, []int{epoch, step})
		c = config(resumed, opt)
		c.StartEpoch, c.StartStep = epoch, step
		got, err := Run(context.Background(), c)
		require.NoError(t, err)
		require.Equal(t, params(t, whole), params(t, resumed))
		require.Len(t, got.Epochs, 2)
		require.Equal(t, 2, got.Epochs[0].Epoch)
		require.Equal(t, want.Epochs[2].Metrics[MetricLoss], got.Epochs[1].Metrics[MetricLoss])

		c.StartStep = 3 // not in epoch 2
		_, err = Run(context.Background(), c)
		require.ErrorContains(t, err, "StartStep 3 does not fall in epoch 2")
	})
}

func withoutMetrics(meta map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range meta {
		if !strings.HasPrefix(k, metricMetaPrefix) {
			out[k] = v
		}
	}
	return out
}

// Cancelling during validation stops before the next validation batch;
// the epoch is not recorded, and the checkpoint counts its steps.
func TestCancelDuringValidation(t *testing.T) {
	dev := cpuDevice(t)
	model := newLinear(dev, 3, 1, 3)
	defer nn.Release(model)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	stopper := Metric{Name: "stopper", Batch: func(_, _ *tensor.Tensor) (float64, error) {
		calls++
		cancel()
		return 0, nil
	}}
	dir := t.TempDir()
	hist, err := Run(ctx, Config{Model: model, Loss: mse, Optimizer: optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.1}),
		Train: regression(12, 1), Val: regression(9, 2), Epochs: 2, BatchSize: 4, EvalBatchSize: 2,
		Metrics: []Metric{stopper}, Silent: true, Checkpoints: Checkpoints{Dir: dir}})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, hist.Epochs)
	require.Equal(t, 1, calls)
	fresh := newLinear(dev, 3, 1, 8)
	defer nn.Release(fresh)
	meta, err := checkpoint.LoadModule(filepath.Join(dir, LastFile), fresh)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"epoch": "0", "step": "3", "interrupted": "true"}, meta)
	require.Equal(t, params(t, model), params(t, fresh))
}

// A context cancelled before Run starts stops it before the first batch.
func TestCancelBeforeStart(t *testing.T) {
	dev := cpuDevice(t)
	model := newLinear(dev, 3, 1, 3)
	defer nn.Release(model)
	before := params(t, model)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hist, err := Run(ctx, Config{Model: model, Loss: mse, Optimizer: optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 1}),
		Train: regression(8, 1), Epochs: 2, BatchSize: 4, Silent: true})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, hist.Epochs)
	require.Equal(t, before, params(t, model))
}

func TestConfigErrors(t *testing.T) {
	dev := cpuDevice(t)
	model := newLinear(dev, 3, 1, 3)
	defer nn.Release(model)
	opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 1})
	good := Config{Model: model, Loss: mse, Optimizer: opt, Train: regression(8, 1), Epochs: 1, BatchSize: 4, Silent: true}
	for name, tc := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"no model":       {func(c *Config) { c.Model = nil }, "Model is nil"},
		"no epochs":      {func(c *Config) { c.Epochs = 0 }, "Epochs is 0"},
		"empty train":    {func(c *Config) { c.Train = &data.Dataset{Shape: []int{3}} }, "no samples"},
		"patience":       {func(c *Config) { c.EarlyStop = &EarlyStopping{Monitor: Monitor{Metric: "loss"}} }, "Patience is 0"},
		"reserved meta":  {func(c *Config) { c.Metadata = map[string]string{"epoch": "1"} }, `"epoch" is reserved`},
		"metric name":    {func(c *Config) { c.Metrics = []Metric{{Name: "loss", Batch: craftedMetric(nil, nil).Batch}} }, "taken"},
		"unknown metric": {func(c *Config) { c.EarlyStop = &EarlyStopping{Monitor: Monitor{Metric: "val_loss"}, Patience: 1} }, `"val_loss" was not recorded`},
		"loss not scalar": {func(c *Config) {
			c.Loss = func(out, y *graph.Value) *graph.Value { return graph.Sub(out, y) }
		}, "want a scalar"},
		"misuse panics become errors": {func(c *Config) { c.Loss = crossEntropy }, "CrossEntropy"},
	} {
		t.Run(name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			_, err := Run(context.Background(), c)
			require.ErrorContains(t, err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "train: "), "%v", err)
		})
	}
	// An OnEpoch error ends the run with that error.
	stop := errors.New("enough")
	c := good
	c.Epochs = 3
	c.OnEpoch = func(Epoch) error { return stop }
	hist, err := Run(context.Background(), c)
	require.ErrorIs(t, err, stop)
	require.Len(t, hist.Epochs, 1)
}

func TestProgressOutput(t *testing.T) {
	dev := cpuDevice(t)
	run := func(c Config) string {
		model := newLinear(dev, 2, 3, 5)
		defer nn.Release(model)
		var out bytes.Buffer
		c.Model, c.Loss, c.Train, c.Val = model, crossEntropy, blobs(30, 1), blobs(10, 2)
		c.Optimizer = optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.1})
		c.Epochs, c.BatchSize, c.Output = 2, 8, &out
		_, err := Run(context.Background(), c)
		require.NoError(t, err)
		return out.String()
	}
	lines := run(Config{})
	require.Regexp(t, `^epoch  1/2  loss \d\.\d{4}  accuracy +\d+\.\d\d%  val_accuracy +\d+\.\d\d%  val_loss \S+ +\d+ samples/s\n`, lines,
		"a buffer is not a terminal: plain lines")
	require.Equal(t, 2, strings.Count(lines, "\n"))
	require.Empty(t, run(Config{Silent: true}))
	bar := run(Config{Bar: BarOn})
	require.Contains(t, bar, "epoch 1/2", "the bar's description")
	require.Contains(t, bar, "epoch  2/2  loss", "and the lines")
}
