package train

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/tensor"
)

// Run trains c.Model for c.Epochs (fewer when early stopping ends the
// run) and returns the history of the completed epochs. Misuse that the
// tensor and graph packages report by panicking (a loss of the wrong
// shape, say) comes back as an error. When ctx is done Run stops before
// the next batch, writes the last checkpoint and returns ctx.Err() with
// the history so far.
func Run(ctx context.Context, c Config) (*History, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if !writes(&c) {
		c.Silent = true // rank 0 alone reports
	}
	if dir := c.Checkpoints.Dir; dir != "" && writes(&c) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("train: checkpoint directory: %w", err)
		}
	}
	dev := c.Device
	if dev == nil {
		dev = modelDevice(&c)
	}
	l := &loop{c: &c, dev: dev, rep: newReporter(&c), hist: &History{}, step: c.StartStep, completed: c.StartEpoch}
	if c.Checkpoints.Best.Metric != "" {
		l.best = &improvement{Monitor: c.Checkpoints.Best}
	}
	if c.EarlyStop != nil {
		l.stop = &stopper{cfg: *c.EarlyStop, seen: improvement{Monitor: c.EarlyStop.Monitor}}
	}
	for epoch := c.StartEpoch + 1; epoch <= c.Epochs; epoch++ {
		stop, err := l.epoch(ctx, epoch)
		if err != nil {
			return l.hist, err
		}
		if stop {
			l.hist.StoppedEarly = epoch < c.Epochs
			break
		}
	}
	return l.hist, nil
}

// loop is a run's state.
type loop struct {
	c         *Config
	dev       *tensor.Device
	rep       *reporter
	hist      *History
	step      int // optimizer steps taken, StartStep included
	completed int // epochs completed, StartEpoch included
	best      *improvement
	stop      *stopper
}

// epoch runs one epoch, its evaluation, checkpoints and hook, and reports
// whether early stopping asks to stop.
func (l *loop) epoch(ctx context.Context, epoch int) (bool, error) {
	start := time.Now()
	metrics, err := l.trainEpoch(ctx, epoch)
	if err == nil {
		if l.c.Val != nil && l.c.Val.Len() > 0 && writes(l.c) {
			var val map[string]float64
			if val, err = evaluate(ctx, l.c, l.dev); err != nil {
				err = fmt.Errorf("validation: %w", err)
			}
			for k, v := range val {
				metrics[ValPrefix+k] = v
			}
		}
		if l.c.Distributed != nil {
			// Every rank trained; rank 0's metrics (and its validation's
			// failure, which the others then return too) become every
			// rank's.
			metrics, err = shareMetrics(l.c, metrics, err)
		}
	}
	if err != nil {
		l.rep.abandon()
		if ctx.Err() != nil {
			if cerr := l.saveLast(true); cerr != nil {
				return false, fmt.Errorf("%w (and writing the last checkpoint failed: %v)", ctx.Err(), cerr)
			}
			return false, ctx.Err()
		}
		return false, fmt.Errorf("train: epoch %d: %w", epoch, err)
	}
	e := Epoch{Epoch: epoch, Metrics: metrics, Duration: time.Since(start)}
	l.hist.Epochs = append(l.hist.Epochs, e)
	l.completed = epoch
	l.rep.endEpoch(e)
	if err := l.checkpoint(e); err != nil {
		return false, err
	}
	if l.c.OnEpoch != nil {
		if err := l.c.OnEpoch(e); err != nil {
			return false, err
		}
	}
	if l.stop == nil {
		return false, nil
	}
	v, err := metricOf(e, l.stop.cfg.Metric)
	if err != nil {
		return false, fmt.Errorf("train: EarlyStop: %w", err)
	}
	return l.stop.update(v, epoch), nil
}

// trainEpoch runs one optimizer step per batch and returns the epoch's
// training metrics, over the samples it trained on (all of them unless a
// resumed run skipped some). The loss and correct counts are summed on
// the device and read once at the end.
func (l *loop) trainEpoch(ctx context.Context, epoch int) (map[string]float64, error) {
	c := l.c
	c.Model.SetTraining(true)
	order := data.Batches(c.Train.Len(), c.BatchSize, !c.NoShuffle, c.Seed<<16+uint64(epoch-1), false)
	// A resumed run skips the batches its checkpoint had already taken.
	if done := l.step - (epoch-1)*len(order); done > 0 {
		order = order[done:]
	}
	samples := 0
	for _, idx := range order {
		samples += len(idx)
	}
	var lossSum, correct accumulator
	defer lossSum.release()
	defer correct.release()
	hostLoss := 0.0 // Σ loss·batch, of the whole batches, with Distributed
	classes := !c.Train.HasTargets()
	l.rep.startEpoch(epoch, samples)
	start := time.Now()
	for _, idx := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.Distributed != nil {
			v, err := l.distributedBatch(idx, &correct, &classes)
			if err != nil {
				return nil, err
			}
			hostLoss += v * float64(len(idx))
			l.rep.batchDone(len(idx), func() (float64, error) { return v, nil })
			continue
		}
		err := catch(func() error {
			xs, ys := c.Train.Batch(l.dev, idx)
			x, y := graph.Constant(xs), graph.Constant(ys)
			defer x.Release()
			defer y.Release()
			if c.Autocast {
				s := graph.NewScope(graph.Autocast)
				defer s.Close()
				s.Use(x)
			}
			out := c.Model.Forward(x)
			defer out.Release()
			loss := c.Loss(out, y)
			defer loss.Release()
			if n := loss.Tensor().Len(); n != 1 {
				return fmt.Errorf("the loss has %d elements (shape %v), want a scalar", n, loss.Tensor().Shape())
			}
			if c.Schedule != nil {
				c.Optimizer.SetLR(c.Schedule.LR(l.step))
			}
			if err := backwardAndStep(c, loss); err != nil {
				return err
			}
			l.step++
			c.Optimizer.ZeroGrad()
			lossSum.add(loss.Tensor().MulScalar(float64(len(idx))))
			if classes {
				if hits := countCorrect(out.Tensor(), ys); hits != nil {
					correct.add(hits)
				} else {
					classes = false
				}
			}
			l.rep.batchDone(len(idx), loss.Item)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	n := float64(samples)
	total, err := lossSum.read()
	if err != nil {
		return nil, err
	}
	var hits float64
	if c.Distributed != nil {
		total = hostLoss
		if hits, classes, err = sumCorrect(c, &correct, classes); err != nil {
			return nil, err
		}
	} else if classes {
		if hits, err = correct.read(); err != nil {
			return nil, err
		}
	}
	metrics := map[string]float64{
		MetricLoss:       total / n,
		MetricThroughput: n / time.Since(start).Seconds(),
		MetricLR:         c.Optimizer.LR(),
	}
	if classes {
		metrics[MetricAccuracy] = hits / n
	}
	return metrics, nil
}

// backwardAndStep differentiates loss and steps the optimizer, through
// the scaler when there is one.
func backwardAndStep(c *Config, loss *graph.Value) error {
	if c.Scaler == nil {
		if err := graph.Backward(loss); err != nil {
			return err
		}
		return c.Optimizer.Step()
	}
	scaled := c.Scaler.Scale(loss)
	defer scaled.Release()
	if err := graph.Backward(scaled); err != nil {
		return err
	}
	if _, err := c.Scaler.Step(c.Optimizer); err != nil {
		return err
	}
	return c.Scaler.Update()
}

// countCorrect is the number of rows of out ([batch, classes]) whose
// arg-max is the label in labels (Int32 [batch]), as an Int32 scalar on
// the device; nil when out is not shaped for classification.
func countCorrect(out, labels *tensor.Tensor) *tensor.Tensor {
	if out.Rank() != 2 || labels.DType() != tensor.Int32 || out.Shape()[0] != labels.Len() {
		return nil
	}
	pred := out.ArgMax([]int{1}, false)
	defer pred.Release()
	hits := pred.Eq(labels)
	defer hits.Release()
	return hits.Sum([]int{0}, false)
}

// accumulator sums scalars on the device.
type accumulator struct{ sum *tensor.Tensor }

// add takes over t.
func (a *accumulator) add(t *tensor.Tensor) {
	if a.sum == nil {
		a.sum = t
		return
	}
	next := a.sum.Add(t)
	a.sum.Release()
	t.Release()
	a.sum = next
}

func (a *accumulator) read() (float64, error) {
	if a.sum == nil {
		return 0, nil
	}
	return a.sum.Item()
}

func (a *accumulator) release() { a.sum.Release() }

func modelDevice(c *Config) *tensor.Device {
	for _, p := range append(c.Model.Parameters(), c.Model.Buffers()...) {
		return p.Value.Device()
	}
	return tensor.Default()
}

// catch runs f, turning a *tensor.Error panic (misuse, which the tensor
// and graph packages report by panicking) into an error.
func catch(f func() error) (err error) {
	if perr := tensor.Catch(func() { err = f() }); perr != nil {
		return perr
	}
	return err
}
