package train_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/nn/train"
	"github.com/webtensor/webtensor/tensor"
)

// Fitting a line to float targets: five epochs of SGD, a validation set,
// the best checkpoint by validation loss, and the history's chart.
func ExampleRun() {
	dev, _ := tensor.Open("cpu")
	// y = 2x − 1 on 16 points, every fourth held out.
	trainSet := &data.Dataset{Shape: []int{1}, TargetShape: []int{1}}
	valSet := &data.Dataset{Shape: []int{1}, TargetShape: []int{1}}
	for i := range 16 {
		x := float32(i)/8 - 1
		d := trainSet
		if i%4 == 3 {
			d = valSet
		}
		d.X = append(d.X, x)
		d.Targets = append(d.Targets, 2*x-1)
	}
	model := nn.NewLinear(dev, 1, 1, true, tensor.NewGenerator(1))
	defer nn.Release(model)
	dir, _ := os.MkdirTemp("", "train")
	defer os.RemoveAll(dir)

	hist, err := train.Run(context.Background(), train.Config{
		Model:     model,
		Loss:      func(out, y *graph.Value) *graph.Value { return nn.MSELoss(out, y) },
		Optimizer: optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.3}),
		Train:     trainSet, Val: valSet,
		Epochs: 5, BatchSize: 4, Seed: 1,
		Checkpoints: train.Checkpoints{Dir: dir, Best: train.Monitor{Metric: "val_loss"}},
		Silent:      true, // or Output: os.Stderr for a bar on a terminal, lines elsewhere
	})
	if err != nil {
		panic(err)
	}
	for _, e := range hist.Epochs {
		fmt.Printf("epoch %d  loss %.4f  val_loss %.4f\n", e.Epoch, e.Metrics["loss"], e.Metrics["val_loss"])
	}
	meta, _ := checkpoint.LoadModule(filepath.Join(dir, train.BestFile), model)
	fmt.Println("best epoch", hist.BestEpoch, "checkpoint of epoch", meta["epoch"])

	var svg bytes.Buffer
	_ = hist.WriteSVG(&svg, 400, 300) // "loss" and "val_loss"
	fmt.Println(bytes.HasPrefix(svg.Bytes(), []byte("<?xml")))
	// Output:
	// epoch 1  loss 1.2001  val_loss 0.0729
	// epoch 2  loss 0.0585  val_loss 0.0200
	// epoch 3  loss 0.0162  val_loss 0.0070
	// epoch 4  loss 0.0033  val_loss 0.0013
	// epoch 5  loss 0.0008  val_loss 0.0004
	// best epoch 5 checkpoint of epoch 5
	// true
}

// Data-parallel training on two ranks of an in-process group (under
// mpirun, each process would pass mpi.Init's Comm instead): each rank
// trains on half of every batch, and both end with the weights one
// process gets on the whole batches; rank 0 alone writes checkpoints.
func ExampleConfig_distributed() {
	dev, _ := tensor.Open("cpu")
	set := &data.Dataset{Shape: []int{1}, TargetShape: []int{1}}
	for i := range 16 {
		x := float32(i)/8 - 1
		set.X = append(set.X, x)
		set.Targets = append(set.Targets, 2*x-1)
	}
	config := func(model nn.Module, dir string) train.Config {
		return train.Config{
			Model:     model,
			Loss:      func(out, y *graph.Value) *graph.Value { return nn.MSELoss(out, y) },
			Optimizer: optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.3}),
			Train:     set, Epochs: 5, BatchSize: 4, Seed: 1, Silent: true,
			Checkpoints: train.Checkpoints{Dir: dir},
		}
	}
	weights := func(m nn.Module) string {
		w, _ := m.Parameters()[0].Value.Float32s()
		b, _ := m.Parameters()[1].Value.Float32s()
		return fmt.Sprintf("w %.4f b %.4f", w[0], b[0])
	}
	root, _ := os.MkdirTemp("", "ddp")
	defer os.RemoveAll(root)

	one := nn.NewLinear(dev, 1, 1, true, tensor.NewGenerator(1))
	defer nn.Release(one)
	if _, err := train.Run(context.Background(), config(one, filepath.Join(root, "one"))); err != nil {
		panic(err)
	}
	fmt.Println("one process:", weights(one))

	comms := parallel.NewLocalGroup(2)
	done := make(chan string, 2)
	for rank, comm := range comms {
		go func() {
			model := nn.NewLinear(dev, 1, 1, true, tensor.NewGenerator(uint64(1+rank))) // rank 0's weights win
			defer nn.Release(model)
			d, err := parallel.NewDistributed(model, comm)
			if err != nil {
				panic(err)
			}
			c := config(model, filepath.Join(root, fmt.Sprint("rank", rank)))
			c.Distributed = d
			if _, err := train.Run(context.Background(), c); err != nil {
				panic(err)
			}
			_, statErr := os.Stat(filepath.Join(c.Checkpoints.Dir, train.LastFile))
			done <- fmt.Sprintf("rank %d: %s, wrote a checkpoint: %v", rank, weights(model), statErr == nil)
		}()
	}
	got := []string{<-done, <-done}
	slices.Sort(got)
	fmt.Println(strings.Join(got, "\n"))
	// Output:
	// one process: w 1.9929 b -1.0006
	// rank 0: w 1.9929 b -1.0006, wrote a checkpoint: true
	// rank 1: w 1.9929 b -1.0006, wrote a checkpoint: false
}
