package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/nn/parallel/mpi"
	"github.com/webtensor/webtensor/nn/train"
	"github.com/webtensor/webtensor/tensor"
)

type config struct {
	digits      string
	device      string
	epochs      int
	batchSize   int
	lr          float64
	seed        uint64
	want        float64
	checkpoints string
	resume      bool
	model       string
	bucket      int
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("ddp", flag.ContinueOnError)
	fs.StringVar(&c.digits, "digits", "testdata/digits/digits.csv.gz", "the UCI digits CSV")
	fs.StringVar(&c.device, "device", "cpu", "the device of every process")
	fs.IntVar(&c.epochs, "epochs", 10, "epochs")
	fs.IntVar(&c.batchSize, "batch", 64, "the global batch size, split over the processes")
	fs.Float64Var(&c.lr, "lr", 0.1, "SGD learning rate (momentum 0.9)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the split, the batches and the weights")
	fs.Float64Var(&c.want, "want", 0.9, "the least held-out accuracy that exits 0")
	fs.StringVar(&c.checkpoints, "checkpoints", "", "rank 0 writes the last and best checkpoints in this directory (nn/train's files)")
	fs.BoolVar(&c.resume, "resume", false, "go on from the last checkpoint in -checkpoints (rank 0 reads it, every rank loads it)")
	fs.StringVar(&c.model, "model", "mlp", "mlp (64-128-10) or cnn (cmd/demo's CNN on the 8×8 digits)")
	fs.IntVar(&c.bucket, "bucket", parallel.DefaultBucketBytes, "gradient bucket size in bytes, all-reduced during the backward pass (0: one all-reduce after it)")
	err := fs.Parse(args)
	return c, err
}

// communicator is MPI's world under mpirun (which sets
// OMPI_COMM_WORLD_SIZE), else one local process: a process started
// without mpirun needs no MPI library. Under mpirun a process that cannot
// load Open MPI fails, saying why, rather than train alone.
func communicator() (parallel.Communicator, func() error, error) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" {
		return parallel.NewLocalGroup(1)[0], func() error { return nil }, nil
	}
	comm, err := mpi.Init()
	if err != nil {
		return nil, nil, err
	}
	return comm, comm.Finalize, nil
}

// timed counts the time and bytes of the all-reduces.
type timed struct {
	parallel.Communicator
	nanos, bytes atomic.Int64
}

func (t *timed) AllReduceFloat32(buf []float32) error {
	defer t.count(time.Now(), 4*len(buf))
	return t.Communicator.AllReduceFloat32(buf)
}

func (t *timed) AllReduceFloat64(buf []float64) error {
	defer t.count(time.Now(), 8*len(buf))
	return t.Communicator.AllReduceFloat64(buf)
}

// IAllReduceFloat32 counts the bytes, and the time the caller waits for
// the result: with buckets, the communication the backward pass did not
// hide.
func (t *timed) IAllReduceFloat32(buf []float32) (parallel.Request, error) {
	t.bytes.Add(int64(4 * len(buf)))
	q, err := t.Communicator.IAllReduceFloat32(buf)
	return timedRequest{q, t}, err
}

func (t *timed) IAllReduceFloat64(buf []float64) (parallel.Request, error) {
	t.bytes.Add(int64(8 * len(buf)))
	q, err := t.Communicator.IAllReduceFloat64(buf)
	return timedRequest{q, t}, err
}

type timedRequest struct {
	parallel.Request
	t *timed
}

func (q timedRequest) Wait() error {
	defer q.t.count(time.Now(), 0)
	return q.Request.Wait()
}

func (t *timed) count(start time.Time, bytes int) {
	t.nanos.Add(int64(time.Since(start)))
	t.bytes.Add(int64(bytes))
}

func run(args []string, out io.Writer) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	comm, finalize, err := communicator()
	if err != nil {
		return err
	}
	acc, err := fit(c, comm, out)
	if ferr := finalize(); err == nil {
		err = ferr
	}
	if err == nil && acc < c.want {
		err = fmt.Errorf("held-out accuracy %.3f below %.3f", acc, c.want)
	}
	return err
}

func fit(c config, world parallel.Communicator, out io.Writer) (float64, error) {
	dev, err := tensor.Open(c.device)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(c.digits)
	if err != nil {
		return 0, fmt.Errorf("%w (run from the repository root, or pass -digits)", err)
	}
	all, err := data.ReadCSV(f, -1, nil)
	f.Close()
	if err != nil {
		return 0, err
	}
	for i := range all.X {
		all.X[i] /= 16 // pixel counts 0…16
	}
	trainSet, testSet := all.Split(0.2, c.seed)

	comm := &timed{Communicator: world}
	rank, size := comm.Rank(), comm.Size()
	say := func(format string, args ...any) {
		if rank == 0 {
			fmt.Fprintf(out, format, args...)
		}
	}
	gen := tensor.NewGenerator(c.seed)
	var model nn.Module
	switch c.model {
	case "mlp":
		model = nn.NewSequential(nn.NewLinear(dev, 64, 128, true, gen), nn.ReLU{}, nn.NewLinear(dev, 128, 10, true, gen))
	case "cnn":
		model = newCNN(dev, gen)
	default:
		return 0, fmt.Errorf("-model %q: want mlp or cnn", c.model)
	}
	defer nn.Release(model)
	ddp, err := parallel.NewDistributed(model, comm)
	if err != nil {
		return 0, err
	}
	ddp.BucketBytes = c.bucket
	opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: c.lr, Momentum: 0.9})
	cfg := train.Config{
		Model: model, Distributed: ddp, Optimizer: opt,
		Loss:  func(out, y *graph.Value) *graph.Value { return nn.CrossEntropy(out, y, 0) },
		Train: trainSet, Val: testSet,
		Epochs: c.epochs, BatchSize: c.batchSize, Seed: c.seed,
		Checkpoints: train.Checkpoints{Dir: c.checkpoints, Best: train.Monitor{Metric: "val_accuracy", Maximize: true}},
		Output:      out, Bar: train.BarOff,
	}
	if c.resume {
		if c.checkpoints == "" {
			return 0, errors.New("-resume needs -checkpoints")
		}
		// Rank 0 reads its checkpoint; every rank loads it.
		if cfg.StartEpoch, cfg.StartStep, err = train.ResumeDistributed(c.checkpoints, ddp, opt); err != nil {
			return 0, err
		}
		say("resumed from %s after epoch %d (step %d)\n", c.checkpoints, cfg.StartEpoch, cfg.StartStep)
	}
	say("%d process(es) on %s, global batch %d, %d parameters\n", size, dev.Name(), c.batchSize, nn.NumParams(model))
	hist, err := train.Run(context.Background(), cfg)
	if err != nil {
		return 0, err
	}
	if len(hist.Epochs) == 0 {
		return 0, fmt.Errorf("nothing to train: the checkpoint has %d of %d epochs", cfg.StartEpoch, c.epochs)
	}
	// Every rank records rank 0's metrics: the same accuracy everywhere.
	last := hist.Epochs[len(hist.Epochs)-1].Metrics
	acc := last[train.ValPrefix+train.MetricAccuracy]
	say("held-out accuracy %.3f  loss %.4f\n", acc, last[train.MetricLoss])
	// The training time of the epochs, from their throughput (rank 0's).
	var stepTime time.Duration
	steps := 0
	for _, e := range hist.Epochs {
		n := float64(trainSet.Len())
		stepTime += time.Duration(n / e.Metrics[train.MetricThroughput] * float64(time.Second))
		steps += (trainSet.Len() + c.batchSize - 1) / c.batchSize
	}
	say("all-reduce (BucketBytes %d; with buckets, the time waited for them): %.1f%% of the step time (%v of %v per step), %d bytes per step and process\n", c.bucket,
		100*float64(comm.nanos.Load())/float64(stepTime), time.Duration(comm.nanos.Load()/int64(steps)).Round(time.Microsecond),
		(stepTime / time.Duration(steps)).Round(time.Microsecond), comm.bytes.Load()/int64(steps))
	return acc, nil
}

// newCNN is cmd/demo's CNN for 1×8×8 images: two 3×3 convolutions, each
// followed by ReLU and 2×2 max pooling, then two linear layers. It takes
// the digits' 64 pixels flat.
func newCNN(dev *tensor.Device, gen *tensor.Generator) nn.Module {
	same := tensor.ConvOptions{Padding: [2]int{1, 1}}
	pool := tensor.PoolOptions{Kernel: [2]int{2, 2}}
	k3 := [2]int{3, 3}
	return nn.NewSequential(
		image{},
		nn.NewConv2d(dev, 1, 16, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewConv2d(dev, 16, 32, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewFlatten(),
		nn.NewLinear(dev, 32*2*2, 64, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 64, 10, true, gen),
	)
}

// image reshapes a batch of 64 pixels into 1×8×8 images.
type image struct{}

func (image) Forward(x *graph.Value) *graph.Value { return x.Reshape(x.Shape()[0], 1, 8, 8) }

func (image) Parameters() []nn.Named { return nil }
func (image) Buffers() []nn.Named    { return nil }
func (image) SetTraining(bool)       {}
func (image) Training() bool         { return false }
