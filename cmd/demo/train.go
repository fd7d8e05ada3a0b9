package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/amp"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	nntrain "github.com/webtensor/webtensor/nn/train"
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
	history  *nntrain.History
}

// train trains a fresh model on trainSet for c.epochs with nn/train,
// printing each epoch's loss and held-out accuracy to stdout and the
// progress bar (when c.progress) to stderr.
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
	cfg := nntrain.Config{
		Model:     model,
		Loss:      func(logits, labels *graph.Value) *graph.Value { return nn.CrossEntropy(logits, labels, 0) },
		Optimizer: opt,
		Train:     trainSet,
		Device:    dev,
		Epochs:    c.epochs, BatchSize: c.batchSize, EvalBatchSize: 500,
		Seed:     c.seed,
		Schedule: optim.CosineWarmup{Base: c.lr, Total: c.epochs * stepsPerEpoch},
		Output:   stdout, BarOutput: stderr, Bar: nntrain.BarOff,
	}
	if c.progress {
		cfg.Bar = nntrain.BarOn
	}
	if c.autocast {
		cfg.Autocast = true
		cfg.Scaler = amp.NewGradScaler(model.Parameters(), amp.Config{})
	}
	if testSet.Len() > 0 {
		cfg.Val = testSet
	}
	if c.checkpoints != "" {
		cfg.Checkpoints = nntrain.Checkpoints{Dir: c.checkpoints, Best: nntrain.Monitor{Metric: "val_accuracy", Maximize: true}}
		cfg.Metadata = map[string]string{"demo": fmt.Sprintf("seed=%d lr=%g batch=%d classes=%d", c.seed, c.lr, c.batchSize, classes)}
	}
	hist, err := nntrain.Run(context.Background(), cfg)
	if err != nil {
		return res, err
	}
	res.history = hist
	res.losses = hist.Metric(nntrain.MetricLoss)
	if cfg.Val != nil {
		res.accuracy = hist.Epochs[len(hist.Epochs)-1].Metrics["val_accuracy"]
		res.correct = int(math.Round(res.accuracy * float64(testSet.Len())))
	}
	res.elapsed = time.Since(start)
	return res, nil
}
