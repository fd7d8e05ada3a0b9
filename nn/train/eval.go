package train

import (
	"context"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/tensor"
)

// forwardNoGrad runs model on x without recording a graph: x enters a
// no-grad scope, so only this computation stops recording (a training
// goroutine beside it records as usual), and the forward pass's result
// is kept out of the scope as a plain constant, owned by the caller.
func forwardNoGrad(model nn.Module, x *graph.Value, autocast bool) *graph.Value {
	if autocast {
		s := graph.NewScope(graph.NoGrad, graph.Autocast)
		defer s.Close()
		out := model.Forward(s.Use(x.Detach()))
		if out.DType() == tensor.Float16 {
			out = out.Cast(tensor.Float32)
		}
		s.Keep(out)
		return out
	}
	s := graph.NewScope(graph.NoGrad)
	defer s.Close()
	out := model.Forward(s.Use(x.Detach()))
	s.Keep(out)
	return out
}

// evaluate runs the model in evaluation mode over c.Val and returns the
// mean loss, the accuracy (for class labels and [batch, classes] outputs)
// and the user metrics, each a mean over samples, under their names
// without ValPrefix. It stops with ctx.Err() before a batch once ctx is
// done.
func evaluate(ctx context.Context, c *Config, dev *tensor.Device) (map[string]float64, error) {
	c.Model.SetTraining(false)
	defer c.Model.SetTraining(true)
	size := c.EvalBatchSize
	if size == 0 {
		size = c.BatchSize
	}
	var lossSum, correct accumulator
	defer lossSum.release()
	defer correct.release()
	classes := !c.Val.HasTargets()
	user := make([]float64, len(c.Metrics))
	for _, idx := range data.Batches(c.Val.Len(), size, false, 0, false) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := catch(func() error {
			xs, ys := c.Val.Batch(dev, idx)
			x, y := graph.Constant(xs), graph.Constant(ys)
			defer x.Release()
			defer y.Release()
			out := forwardNoGrad(c.Model, x, c.Autocast)
			defer out.Release()
			loss := c.Loss(out, y)
			defer loss.Release()
			lossSum.add(loss.Tensor().MulScalar(float64(len(idx))))
			if classes {
				if hits := countCorrect(out.Tensor(), ys); hits != nil {
					correct.add(hits)
				} else {
					classes = false
				}
			}
			for i, m := range c.Metrics {
				v, err := m.Batch(out.Tensor(), ys)
				if err != nil {
					return err
				}
				user[i] += v * float64(len(idx))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	n := float64(c.Val.Len())
	total, err := lossSum.read()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{MetricLoss: total / n}
	if classes {
		hits, err := correct.read()
		if err != nil {
			return nil, err
		}
		out[MetricAccuracy] = hits / n
	}
	for i, m := range c.Metrics {
		out[m.Name] = user[i] / n
	}
	return out, nil
}
