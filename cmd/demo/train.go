package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// newModel is two 3×3 convolutions, each followed by ReLU and 2×2 max
// pooling, then a hidden layer of 64 and the classifier. Padding keeps the
// convolutions from shrinking 8×8 digits, so the pools see 8×8 then 4×4;
// MNIST's 28×28 goes the same way to 7×7.
func newModel(dev *tensor.Device, shape []int, classes int, gen *tensor.Generator) *nn.Sequential {
	channels, h, w := shape[0], shape[1], shape[2]
	same := tensor.ConvOptions{Padding: [2]int{1, 1}}
	pool := tensor.PoolOptions{Kernel: [2]int{2, 2}}
	k3 := [2]int{3, 3}
	return nn.NewSequential(
		nn.NewConv2d(dev, channels, 16, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewConv2d(dev, 16, 32, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewFlatten(),
		nn.NewLinear(dev, 32*(h/4)*(w/4), 64, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 64, classes, true, gen),
	)
}

// result is what a training run reports.
type result struct {
	losses   []float64 // mean training loss of each epoch
	accuracy float64   // final held-out accuracy
	correct  int       // final held-out count correct
	elapsed  time.Duration
}

// train trains a fresh model on trainSet for c.epochs, printing each
// epoch's loss and held-out accuracy to stdout and the progress bar (when
// c.progress) to stderr.
func train(c config, dev *tensor.Device, trainSet, testSet *data.Dataset, stdout, stderr io.Writer) (res result, err error) {
	start := time.Now()
	if trainSet.Len() == 0 {
		return res, errors.New("no training images")
	}
	// Enough classes for every label, including one that only the
	// held-out set has.
	classes := int(max(slices.Max(trainSet.Y), slices.Max(append([]int32{0}, testSet.Y...)))) + 1
	if lo := min(slices.Min(trainSet.Y), slices.Min(append([]int32{0}, testSet.Y...))); lo < 0 {
		return res, fmt.Errorf("negative label %d", lo)
	}
	gen := tensor.NewGenerator(c.seed)
	model := newModel(dev, trainSet.Shape, classes, gen)
	defer nn.Release(model)
	var opt optim.Optimizer = optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: c.lr})
	if r, ok := opt.(interface{ Release() }); ok {
		defer r.Release()
	}

	// Cosine decay to zero over the run: the large early steps learn
	// fast, the small late ones settle, which makes the final accuracy
	// steady across seeds.
	stepsPerEpoch := (trainSet.Len() + c.batchSize - 1) / c.batchSize
	sched := optim.CosineWarmup{Base: c.lr, Total: c.epochs * stepsPerEpoch}
	step := 0

	for epoch := range c.epochs {
		bar := progressbar.NewOptions(trainSet.Len(),
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetVisibility(c.progress),
			progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", epoch+1, c.epochs)),
			progressbar.OptionSetWidth(24),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		epochStart := time.Now()
		// Each epoch has its own order, fixed by the seed.
		order := data.Batches(trainSet.Len(), c.batchSize, true, c.seed<<16+uint64(epoch), false)
		loss, err := trainEpoch(model, opt, sched, &step, dev, trainSet, order, bar, fmt.Sprintf("epoch %d/%d", epoch+1, c.epochs))
		if err != nil {
			return res, fmt.Errorf("epoch %d: %w", epoch+1, err)
		}
		_ = bar.Finish()
		rate := float64(trainSet.Len()) / time.Since(epochStart).Seconds()
		res.losses = append(res.losses, loss)

		correct, err := evaluate(model, dev, testSet)
		if err != nil {
			return res, fmt.Errorf("epoch %d: held-out accuracy: %w", epoch+1, err)
		}
		res.correct = correct
		res.accuracy = float64(correct) / float64(max(1, testSet.Len()))
		fmt.Fprintf(stdout, "epoch %2d/%d  loss %.4f  held-out accuracy %6.2f%%  %6.0f samples/s\n",
			epoch+1, c.epochs, loss, 100*res.accuracy, rate)
	}
	res.elapsed = time.Since(start)
	return res, nil
}

// barInterval is how often the progress bar reads the loss back and
// updates the rate: each read waits for the device, so not every step.
const barInterval = 100 * time.Millisecond

// trainEpoch runs one optimizer step per batch of order, at the rate
// sched gives for each step (counting on from *step), and returns the
// epoch's mean loss, summed on the device and read once at the end.
func trainEpoch(model nn.Module, opt optim.Optimizer, sched optim.Schedule, step *int, dev *tensor.Device, ds *data.Dataset, order [][]int, bar *progressbar.ProgressBar, desc string) (float64, error) {
	model.SetTraining(true)
	var sum *tensor.Tensor
	defer func() { sum.Release() }()
	start := time.Now()
	lastRead, done := start, 0
	for _, idx := range order {
		if err := catch(func() error {
			xs, ys := ds.Batch(dev, idx)
			x, y := graph.Constant(xs), graph.Constant(ys)
			defer x.Release()
			defer y.Release()
			logits := model.Forward(x)
			defer logits.Release()
			loss := nn.CrossEntropy(logits, y, 0)
			defer loss.Release()
			if err := graph.Backward(loss); err != nil {
				return err
			}
			opt.SetLR(sched.LR(*step))
			*step++
			if err := opt.Step(); err != nil {
				return err
			}
			opt.ZeroGrad()

			weighted := loss.Tensor().MulScalar(float64(len(idx)))
			if sum == nil {
				sum = weighted
			} else {
				next := sum.Add(weighted)
				sum.Release()
				weighted.Release()
				sum = next
			}
			done += len(idx)
			if time.Since(lastRead) >= barInterval {
				// Item waits for the device to finish this step, so the
				// rate counts samples trained, not samples queued.
				if v, err := loss.Item(); err == nil {
					rate := float64(done) / time.Since(start).Seconds()
					bar.Describe(fmt.Sprintf("%s  loss %.4f  %.0f samples/s", desc, v, rate))
				}
				lastRead = time.Now()
			}
			return nil
		}); err != nil {
			return 0, err
		}
		_ = bar.Add(len(idx))
	}
	if sum == nil {
		return 0, nil
	}
	total, err := sum.Item()
	return total / float64(ds.Len()), err
}

// evaluate counts the samples of ds whose most likely class is their
// label, without recording a graph.
func evaluate(model nn.Module, dev *tensor.Device, ds *data.Dataset) (correct int, err error) {
	model.SetTraining(false)
	defer model.SetTraining(true)
	const batchSize = 500
	for _, idx := range data.Batches(ds.Len(), batchSize, false, 0, false) {
		var pred []int32
		err := catch(func() (err error) {
			xs, ys := ds.Batch(dev, idx)
			ys.Release()
			// A no-grad scope: nothing is recorded, and closing it
			// releases the batch and everything computed from it.
			eval := graph.NewScope(graph.NoGrad)
			defer eval.Close()
			logits := model.Forward(eval.Use(graph.Constant(xs)))
			pred, err = logits.ArgMax([]int{1}, false).Int32s()
			return err
		})
		if err != nil {
			return 0, err
		}
		for j, i := range idx {
			if pred[j] == ds.Y[i] {
				correct++
			}
		}
	}
	return correct, err
}

// catch runs f, turning a *tensor.Error panic (misuse, which the tensor
// and graph packages report by panicking) into an error.
func catch(f func() error) (err error) {
	if perr := tensor.Catch(func() { err = f() }); perr != nil {
		return perr
	}
	return err
}
