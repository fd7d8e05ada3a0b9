package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

func newMLP(dev *tensor.Device, seed uint64) nn.Module {
	gen := tensor.NewGenerator(seed)
	return nn.NewSequential(nn.NewLinear(dev, 2, 8, true, gen), nn.Tanh{}, nn.NewLinear(dev, 8, 3, true, gen))
}

// distributedConfig is the run every test below makes, on one process or
// on each rank: 29 samples in batches of 6 (the last one 5, which three
// ranks split 2, 2, 1), validation, the best checkpoint.
func distributedConfig(m nn.Module, opt optim.Optimizer, dir string, epochs int, out *bytes.Buffer) Config {
	c := Config{
		Model: m, Loss: crossEntropy, Optimizer: opt,
		Train: blobs(29, 1), Val: blobs(13, 2),
		Epochs: epochs, BatchSize: 6, Seed: 3,
		Checkpoints: Checkpoints{Dir: dir, Best: Monitor{Metric: "val_accuracy", Maximize: true}},
		Bar:         BarOff, Silent: out == nil,
	}
	if out != nil {
		c.Output = out
	}
	return c
}

func newSGD(m nn.Module) optim.Optimizer {
	return optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
}

// onRanks runs f on every rank of a local group of size ranks, each on its
// own goroutine, with a model of its own (built from a seed of its own:
// NewDistributed replaces it by rank 0's), and returns the ranks'
// results.
func onRanks[T any](t *testing.T, dev *tensor.Device, ranks int, f func(r int, d *parallel.Distributed, opt optim.Optimizer) (T, error)) []T {
	t.Helper()
	comms := parallel.NewLocalGroup(ranks)
	out := make([]T, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Go(func() {
			m := newMLP(dev, uint64(5+100*r))
			t.Cleanup(func() { nn.Release(m) })
			d, err := parallel.NewDistributed(m, comms[r])
			if err != nil {
				errs[r] = err
				return
			}
			d.BucketBytes = 64 // three buckets, all-reduced during the backward pass
			out[r], errs[r] = f(r, d, newSGD(m))
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return out
}

// requireParamsClose checks a distributed rank's parameters against one
// process's after steps steps, within float32 rounding.
func requireParamsClose(t *testing.T, want, got map[string][]float64, steps int, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	for name, w := range want {
		g := got[name]
		require.Len(t, g, len(w), name)
		for i := range w {
			require.InDelta(t, w[i], g[i], float64(steps)*64*0x1p-23*(math.Abs(w[i])+1), "%s: %s[%d]", what, name, i)
		}
	}
}

// TestDistributedMatchesOneProcess: Run with Distributed on 2 and 3 ranks
// of a local group takes the steps one process takes on the whole
// batches; rank 0 alone writes checkpoints and output, and every rank
// records rank 0's metrics. ResumeDistributed then loads rank 0's
// checkpoint into every rank (the others' directories are empty), and the
// resumed run ends where one process's uninterrupted run ends.
func TestDistributedMatchesOneProcess(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		const epochs, steps = 2, 2 * 5
		one := func(epochs int) (map[string][]float64, *History) {
			m := newMLP(dev, 5)
			defer nn.Release(m)
			var out bytes.Buffer
			hist, err := Run(context.Background(), distributedConfig(m, newSGD(m), t.TempDir(), epochs, &out))
			require.NoError(t, err, out.String())
			return params(t, m), hist
		}
		want, wantHist := one(epochs)
		want3, _ := one(epochs + 1)
		for _, ranks := range []int{2, 3} {
			t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
				dirs := make([]string, ranks)
				for r := range dirs {
					dirs[r] = filepath.Join(t.TempDir(), "ckpt")
				}
				type result struct {
					params map[string][]float64
					hist   *History
					out    string
					seen   int // samples the rank's loss saw
				}
				got := onRanks(t, dev, ranks, func(r int, d *parallel.Distributed, opt optim.Optimizer) (result, error) {
					var out bytes.Buffer
					c := distributedConfig(d.Module(), opt, dirs[r], epochs, &out)
					c.Distributed = d
					seen := 0
					c.Loss = func(out, y *graph.Value) *graph.Value {
						seen += out.Shape()[0]
						return crossEntropy(out, y)
					}
					hist, err := Run(context.Background(), c)
					if err != nil {
						return result{}, err
					}
					return result{params(t, d.Module()), hist, out.String(), seen}, nil
				})
				for r, g := range got {
					// Each rank's loss saw its shards of the batches alone.
					shard := 0
					for _, b := range []int{6, 6, 6, 6, 5} {
						sh := parallel.Shards(b, ranks)[r]
						shard += sh[1] - sh[0]
					}
					if r == 0 {
						shard += 13 // rank 0 alone evaluates the validation set
					}
					require.Equal(t, epochs*shard, g.seen, "rank %d's samples", r)
					requireParamsClose(t, want, g.params, steps, fmt.Sprintf("rank %d", r))
					require.Len(t, g.hist.Epochs, epochs)
					for e, ep := range g.hist.Epochs {
						// Every rank records rank 0's metrics.
						require.Equal(t, got[0].hist.Epochs[e].Metrics, ep.Metrics, "rank %d epoch %d", r, e+1)
					}
				}
				for e, ep := range got[0].hist.Epochs {
					w := wantHist.Epochs[e].Metrics
					for _, name := range []string{MetricLoss, ValPrefix + MetricLoss} {
						relClose(t, w[name], ep.Metrics[name], 1e-5, "epoch %d %s", e+1, name)
					}
					// An arg-max may flip on a float32 tie: one sample at most.
					require.InDelta(t, w[MetricAccuracy], ep.Metrics[MetricAccuracy], 1.0/29+1e-12, "epoch %d accuracy", e+1)
					require.InDelta(t, w[ValPrefix+MetricAccuracy], ep.Metrics[ValPrefix+MetricAccuracy], 1.0/13+1e-12, "epoch %d val_accuracy", e+1)
					require.Equal(t, w[MetricLR], ep.Metrics[MetricLR])
				}
				// Rank 0 alone writes checkpoints and output.
				for _, f := range []string{LastFile, LastOptimFile, BestFile} {
					require.FileExists(t, filepath.Join(dirs[0], f))
				}
				require.Contains(t, got[0].out, "epoch  2/2  loss ")
				for r := 1; r < ranks; r++ {
					_, err := os.Stat(dirs[r])
					require.True(t, os.IsNotExist(err), "rank %d created %s: %v", r, dirs[r], err)
					require.Empty(t, got[r].out, "rank %d's output", r)
				}

				// Resume on fresh models: every rank loads rank 0's files.
				resumed := onRanks(t, dev, ranks, func(r int, d *parallel.Distributed, opt optim.Optimizer) (map[string][]float64, error) {
					epoch, step, err := ResumeDistributed(dirs[r], d, opt)
					if err != nil {
						return nil, err
					}
					if epoch != epochs || step != steps {
						return nil, fmt.Errorf("rank %d resumed at epoch %d step %d, want %d and %d", r, epoch, step, epochs, steps)
					}
					c := distributedConfig(d.Module(), opt, dirs[r], epochs+1, nil)
					c.Distributed, c.StartEpoch, c.StartStep, c.Silent = d, epoch, step, true
					if _, err := Run(context.Background(), c); err != nil {
						return nil, err
					}
					return params(t, d.Module()), nil
				})
				for r, p := range resumed {
					requireParamsClose(t, want3, p, steps+5, fmt.Sprintf("resumed rank %d", r))
				}
			})
		}
	})
}

// TestResumeDistributedWithoutCheckpoint: when rank 0 has no checkpoint,
// every rank fails (none waits for files that never come).
func TestResumeDistributedWithoutCheckpoint(t *testing.T) {
	dev := cpuDevice(t)
	comms := parallel.NewLocalGroup(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range comms {
		wg.Go(func() {
			m := newMLP(dev, 1)
			defer nn.Release(m)
			d, err := parallel.NewDistributed(m, comms[r])
			if err == nil {
				_, _, err = ResumeDistributed(t.TempDir(), d, newSGD(m))
			}
			errs[r] = err
		})
	}
	wg.Wait()
	require.ErrorContains(t, errs[0], "train: ResumeDistributed: rank 0: open ")
	require.ErrorContains(t, errs[0], LastFile)
	require.ErrorContains(t, errs[1], "train: ResumeDistributed: rank 1: rank 0 could not read the checkpoint")
}

// TestDistributedValidationFails: rank 0 alone evaluates; when that
// fails, every rank returns an error instead of waiting for its metrics.
func TestDistributedValidationFails(t *testing.T) {
	dev := cpuDevice(t)
	comms := parallel.NewLocalGroup(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range comms {
		wg.Go(func() {
			m := newMLP(dev, 1)
			defer nn.Release(m)
			d, err := parallel.NewDistributed(m, comms[r])
			if err == nil {
				c := distributedConfig(m, newSGD(m), "", 2, nil)
				c.Distributed = d
				c.Metrics = []Metric{{Name: "broken", Batch: func(out, y *tensor.Tensor) (float64, error) { return 0, errors.New("the metric failed") }}}
				_, err = Run(context.Background(), c)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	require.ErrorContains(t, errs[0], "train: epoch 1: validation: the metric failed")
	require.ErrorContains(t, errs[1], "train: epoch 1: rank 1: rank 0's validation failed")
}

// TestDistributedConfigErrors: a Model other than the Distributed's, and
// mixed precision, are refused.
func TestDistributedConfigErrors(t *testing.T) {
	dev := cpuDevice(t)
	m := newMLP(dev, 1)
	defer nn.Release(m)
	d, err := parallel.NewDistributed(m, parallel.NewLocalGroup(1)[0])
	require.NoError(t, err)
	other := newMLP(dev, 2)
	defer nn.Release(other)
	c := distributedConfig(other, newSGD(other), "", 1, nil)
	c.Distributed, c.Autocast = d, true
	_, err = Run(context.Background(), c)
	require.ErrorContains(t, err, "Model is not Distributed.Module()")
	require.ErrorContains(t, err, "Autocast and Scaler do not run with Distributed")
}
