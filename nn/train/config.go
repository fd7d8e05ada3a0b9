package train

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/amp"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

// LossFunc computes a batch's scalar loss from the model's output and the
// batch's labels: class labels (Int32, shape [batch]) or float targets
// (Float32, shape [batch, TargetShape...]), as data.Dataset.Batch gives
// them.
type LossFunc func(output, target *graph.Value) *graph.Value

// Metric is a user metric, computed on the validation set and recorded as
// "val_" + Name. Batch returns its value on one batch; the epoch's value
// is the mean over samples (each batch's value weighted by its size).
// Batch borrows its arguments.
type Metric struct {
	Name  string
	Batch func(output, target *tensor.Tensor) (float64, error)
}

// Monitor names a metric to watch and which way is better.
type Monitor struct {
	Metric   string // a name History records: "val_loss", "val_accuracy", "loss", …
	Maximize bool   // higher is better (accuracy); otherwise lower is (loss)
}

// Checkpoints says which checkpoints Run writes; see the package
// documentation for the files and their metadata.
type Checkpoints struct {
	Dir   string  // created if missing; "" writes none
	Every int     // also keep epoch-NNNN files every Every epochs; 0: never
	Best  Monitor // Metric "" writes no best.safetensors
}

// EarlyStopping stops the run when Metric has not improved by more than
// MinDelta for Patience epochs in a row.
type EarlyStopping struct {
	Monitor
	Patience int     // at least 1
	MinDelta float64 // an improvement smaller than this does not count
}

// BarMode chooses the progress display.
type BarMode int

const (
	// BarAuto draws a live bar when Config.Output is a terminal and writes
	// one plain line per epoch otherwise (a log file, a pipe, CI).
	BarAuto BarMode = iota
	// BarOn always draws the live bar, as well as the lines.
	BarOn
	// BarOff writes only the plain lines.
	BarOff
)

// Config is a training run. Model, Loss, Optimizer, Train, Epochs and
// BatchSize are required; everything else is optional.
type Config struct {
	Model     nn.Module
	Loss      LossFunc
	Optimizer optim.Optimizer
	Train     *data.Dataset
	Val       *data.Dataset // evaluated after every epoch when not nil

	// Device holds the batches; nil means the device of the model's
	// first parameter.
	Device *tensor.Device

	Epochs    int
	BatchSize int
	// EvalBatchSize is the validation batch size; 0 means BatchSize.
	EvalBatchSize int
	// Seed fixes each epoch's batch order; NoShuffle keeps the dataset's
	// order instead.
	Seed      uint64
	NoShuffle bool
	// Schedule, when set, gives the learning rate of every step (counted
	// from 0 over the whole run): opt.SetLR(Schedule.LR(step)).
	Schedule optim.Schedule
	// StartEpoch and StartStep continue an earlier run (see Resume): the
	// epochs already completed and the optimizer steps already taken.
	// Run goes on with epoch StartEpoch+1, skipping the batches of it
	// that StartStep says were done, so a run resumed from a checkpoint
	// written mid-epoch takes the same steps as one never interrupted.
	StartEpoch, StartStep int

	Metrics     []Metric
	Checkpoints Checkpoints
	// Metadata is added to every checkpoint's metadata (a configuration's
	// JSON, say); keys must not collide with Run's own.
	Metadata  map[string]string
	EarlyStop *EarlyStopping

	// Output receives one line per epoch and, unless BarOutput is set,
	// the progress bar; nil means os.Stderr. BarOutput lets the bar draw
	// elsewhere (a command's stderr while its lines go to stdout); BarAuto
	// looks at whichever writer the bar uses. Silent writes nothing at all.
	Output    io.Writer
	BarOutput io.Writer
	Bar       BarMode
	Silent    bool

	// OnEpoch, when set, runs after each epoch's metrics and checkpoints;
	// an error it returns ends the run with that error.
	OnEpoch func(Epoch) error

	// Autocast runs every forward pass and loss in a graph.Autocast scope
	// (mixed precision: float16 products where the device runs them,
	// float32 reductions, softmax and losses); the model's outputs reach
	// Loss in the dtype the last layer produced, and evaluation reads them
	// as float32. Scaler, when set, scales each step's loss and unscales
	// the gradients before the step, which it skips when they overflowed
	// (amp.GradScaler); pair it with Autocast on float16 devices.
	Autocast bool
	Scaler   *amp.GradScaler

	// Distributed, when set, trains data-parallel over its
	// Communicator's ranks (package nn/parallel; over MPI,
	// nn/parallel/mpi): every rank calls Run with the same Config but its
	// own Distributed, built over Model. Each rank draws the same batches
	// and trains on its shard of each (parallel.Shards), and
	// Distributed.Backward all-reduces the gradients, so that every rank
	// takes the step one process would take on the whole batch. Only
	// rank 0 evaluates, writes checkpoints and writes output; every rank
	// gets rank 0's metrics, so that early stopping and OnEpoch (which
	// runs on every rank) see the same values. ResumeDistributed loads
	// rank 0's checkpoint into every rank. Not with Autocast or Scaler.
	Distributed *parallel.Distributed
}

// reservedMeta are the metadata keys Run writes itself.
var reservedMeta = []string{"epoch", "step", "interrupted"}

func (c *Config) check() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if c.Model == nil {
		add("Model is nil")
	}
	if c.Loss == nil {
		add("Loss is nil")
	}
	if c.Optimizer == nil {
		add("Optimizer is nil")
	}
	if c.Train == nil || c.Train.Len() == 0 {
		add("Train has no samples")
	}
	if c.Epochs < 1 {
		add("Epochs is %d, want at least 1", c.Epochs)
	}
	if c.BatchSize < 1 {
		add("BatchSize is %d, want at least 1", c.BatchSize)
	}
	if c.BatchSize >= 1 && c.Train != nil && c.Train.Len() > 0 {
		perEpoch := (c.Train.Len() + c.BatchSize - 1) / c.BatchSize
		if c.StartEpoch < 0 || c.StartEpoch > c.Epochs {
			add("StartEpoch is %d, want 0 to Epochs (%d)", c.StartEpoch, c.Epochs)
		} else if c.StartStep < c.StartEpoch*perEpoch || c.StartStep >= (c.StartEpoch+1)*perEpoch {
			add("StartStep %d does not fall in epoch %d of %d batches each (steps %d to %d)",
				c.StartStep, c.StartEpoch+1, perEpoch, c.StartEpoch*perEpoch, (c.StartEpoch+1)*perEpoch-1)
		}
	}
	if d := c.Distributed; d != nil {
		if c.Model != nil && c.Model != d.Module() {
			add("Model is not Distributed.Module()")
		}
		if c.Autocast || c.Scaler != nil {
			add("Autocast and Scaler do not run with Distributed")
		}
	}
	if c.EvalBatchSize < 0 {
		add("EvalBatchSize is %d, want 0 (BatchSize) or more", c.EvalBatchSize)
	}
	if c.Checkpoints.Every < 0 {
		add("Checkpoints.Every is %d, want 0 (never) or more", c.Checkpoints.Every)
	}
	if c.EarlyStop != nil {
		if c.EarlyStop.Metric == "" {
			add("EarlyStop.Metric is empty")
		}
		if c.EarlyStop.Patience < 1 {
			add("EarlyStop.Patience is %d, want at least 1", c.EarlyStop.Patience)
		}
		if !(c.EarlyStop.MinDelta >= 0) {
			add("EarlyStop.MinDelta is %v, want at least 0", c.EarlyStop.MinDelta)
		}
	}
	for k := range c.Metadata {
		if strings.HasPrefix(k, metricMetaPrefix) || slices.Contains(reservedMeta, k) || strings.HasPrefix(k, checkpoint.OptimPrefix) {
			add("Metadata key %q is reserved", k)
		}
	}
	seen := map[string]bool{}
	for _, m := range c.Metrics {
		switch {
		case m.Name == "" || m.Batch == nil:
			add("Metric %q needs a name and a Batch function", m.Name)
		case seen[m.Name] || m.Name == "loss" || m.Name == "accuracy":
			add("Metric name %q is taken", m.Name)
		}
		seen[m.Name] = true
	}
	if len(problems) > 0 {
		return errors.New("train: invalid Config: " + strings.Join(problems, "; "))
	}
	return nil
}
