//go:build js && wasm

package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	nntrain "github.com/webtensor/webtensor/nn/train"
	"github.com/webtensor/webtensor/tensor"
)

// digitsCSV is a byte-for-byte copy of testdata/digits/digits.csv.gz
// (go:embed cannot reach above this directory; cmd/webdemo's tests check
// that the copy matches): the browser has no file system to read it from.
//
//go:embed digits.csv.gz
var digitsCSV []byte

// digitsMax is the largest pixel value of the digits data: each pixel
// counts the set pixels of a 4×4 block.
const digitsMax = 16

// settings is what the page's URL may change.
type settings struct {
	epochs    int
	batchSize int
	lr        float64
	seed      uint64
}

// defaultSettings are cmd/demo's, with fewer epochs: in SwiftShader on two
// cores an epoch takes seconds, and the cosine schedule over 8 epochs
// passes 95% held out.
var defaultSettings = settings{epochs: 8, batchSize: 32, lr: 1e-2, seed: 1}

// loadDigits parses the embedded digits and splits off a seeded fifth, as
// cmd/demo does.
func loadDigits(seed uint64) (trainSet, testSet *data.Dataset, err error) {
	all, err := data.ReadCSV(bytes.NewReader(digitsCSV), -1, []int{1, 8, 8})
	if err != nil {
		return nil, nil, fmt.Errorf("embedded digits: %w", err)
	}
	for i := range all.X {
		all.X[i] /= digitsMax
	}
	trainSet, testSet = all.Split(0.2, seed)
	return trainSet, testSet, nil
}

// newModel is cmd/demo's network for 8×8 digits: two 3×3 convolutions,
// each followed by ReLU and 2×2 max pooling, a hidden layer of 64 and the
// classifier.
func newModel(dev *tensor.Device, classes int, gen *tensor.Generator) *nn.Sequential {
	same := tensor.ConvOptions{Padding: [2]int{1, 1}}
	pool := tensor.PoolOptions{Kernel: [2]int{2, 2}}
	k3 := [2]int{3, 3}
	return nn.NewSequential(
		nn.NewConv2d(dev, 1, 16, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewConv2d(dev, 16, 32, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewFlatten(),
		nn.NewLinear(dev, 32*2*2, 64, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 64, classes, true, gen),
	)
}

// progress is one finished epoch, as the page draws it.
type progress struct {
	epoch          int
	loss, valLoss  float64
	valAccuracy    float64
	imagesPerSec   float64 // training images over the epoch's time (training and evaluation)
	epochDuration  time.Duration
	trainingImages int
}

// train trains the digits CNN on dev with nn/train, calling onEpoch after
// every epoch. It blocks on the GPU: call it from a goroutine, never from
// a js.FuncOf callback.
func train(s settings, dev *tensor.Device, trainSet, testSet *data.Dataset, onEpoch func(progress)) error {
	gen := tensor.NewGenerator(s.seed)
	model := newModel(dev, 10, gen)
	defer nn.Release(model)
	opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: s.lr})
	stepsPerEpoch := (trainSet.Len() + s.batchSize - 1) / s.batchSize
	_, err := nntrain.Run(context.Background(), nntrain.Config{
		Model:     model,
		Loss:      func(logits, labels *graph.Value) *graph.Value { return nn.CrossEntropy(logits, labels, 0) },
		Optimizer: opt,
		Train:     trainSet, Val: testSet, Device: dev,
		Epochs: s.epochs, BatchSize: s.batchSize, EvalBatchSize: 500,
		Seed:     s.seed,
		Schedule: optim.CosineWarmup{Base: s.lr, Total: s.epochs * stepsPerEpoch},
		Silent:   true,
		OnEpoch: func(e nntrain.Epoch) error {
			onEpoch(progress{
				epoch: e.Epoch, loss: e.Metrics[nntrain.MetricLoss],
				valLoss: e.Metrics["val_loss"], valAccuracy: e.Metrics["val_accuracy"],
				imagesPerSec:   float64(trainSet.Len()) / e.Duration.Seconds(),
				epochDuration:  e.Duration,
				trainingImages: trainSet.Len(),
			})
			return nil
		},
	})
	return err
}
