package train

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/optim"
)

// metricMetaPrefix prefixes the metric names in checkpoint metadata.
const metricMetaPrefix = "metric."

// Checkpoint file names inside Checkpoints.Dir.
const (
	LastFile      = "last.safetensors"
	LastOptimFile = "last.optim.safetensors"
	BestFile      = "best.safetensors"
)

// EpochFiles are the names of the periodic checkpoint of epoch.
func EpochFiles(epoch int) (model, optimizer string) {
	return fmt.Sprintf("epoch-%04d.safetensors", epoch), fmt.Sprintf("epoch-%04d.optim.safetensors", epoch)
}

// checkpoint writes the epoch's checkpoints.
func (l *loop) checkpoint(e Epoch) error {
	if l.best != nil {
		v, err := metricOf(e, l.best.Metric)
		if err != nil {
			return fmt.Errorf("train: Checkpoints.Best: %w", err)
		}
		if l.best.better(v, e.Epoch, 0) {
			l.hist.BestEpoch = e.Epoch
			if l.c.Checkpoints.Dir != "" && writes(l.c) {
				path := filepath.Join(l.c.Checkpoints.Dir, BestFile)
				if err := checkpoint.SaveModule(path, l.c.Model, l.metadata(false)); err != nil {
					return fmt.Errorf("train: best checkpoint: %w", err)
				}
			}
		}
	}
	if l.c.Checkpoints.Dir == "" {
		return nil
	}
	if every := l.c.Checkpoints.Every; every > 0 && e.Epoch%every == 0 {
		model, opt := EpochFiles(e.Epoch)
		if err := l.save(model, opt, false); err != nil {
			return err
		}
	}
	return l.saveLast(false)
}

// saveLast writes last.safetensors and last.optim.safetensors.
func (l *loop) saveLast(interrupted bool) error {
	if l.c.Checkpoints.Dir == "" {
		return nil
	}
	return l.save(LastFile, LastOptimFile, interrupted)
}

// save writes the model and optimizer files, each atomically, the model
// last: a crash between the two leaves an optimizer file one step ahead
// of the model at worst, which their "step" metadata tells.
func (l *loop) save(model, opt string, interrupted bool) error {
	if !writes(l.c) {
		return nil // rank 0 writes every rank's state, which is the same
	}
	meta := l.metadata(interrupted)
	if err := checkpoint.SaveOptimizer(filepath.Join(l.c.Checkpoints.Dir, opt), l.c.Optimizer, meta); err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	if err := checkpoint.SaveModule(filepath.Join(l.c.Checkpoints.Dir, model), l.c.Model, meta); err != nil {
		return fmt.Errorf("train: checkpoint: %w", err)
	}
	return nil
}

// metadata is a checkpoint's metadata: Config.Metadata, the epochs
// completed, the steps taken and the last completed epoch's metrics.
func (l *loop) metadata(interrupted bool) map[string]string {
	meta := maps.Clone(l.c.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta["epoch"] = strconv.Itoa(l.completed)
	meta["step"] = strconv.Itoa(l.step)
	meta["interrupted"] = strconv.FormatBool(interrupted)
	if l.c.Scaler != nil {
		// The loss scale goes with the weights: a resumed run that
		// restarted from InitScale would skip steps finding it again.
		// Scaler.LoadState takes this metadata back.
		maps.Copy(meta, l.c.Scaler.State())
	}
	if n := len(l.hist.Epochs); n > 0 {
		for k, v := range l.hist.Epochs[n-1].Metrics {
			meta[metricMetaPrefix+k] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return meta
}

// metricOf is e's metric name, or an error that lists the names it has.
func metricOf(e Epoch, name string) (float64, error) {
	v, ok := e.Metrics[name]
	if !ok {
		return 0, fmt.Errorf("metric %q was not recorded; epoch %d has %v", name, e.Epoch, slices.Sorted(maps.Keys(e.Metrics)))
	}
	return v, nil
}

// Resume loads the last checkpoint in dir (last.safetensors and
// last.optim.safetensors) into model and opt and returns the epochs it
// had completed and the optimizer steps it had taken: set them as
// Config.StartEpoch and StartStep, with the rest of the Config as before,
// to go on where the run stopped, mid-epoch included. The two files must
// agree on their step; on an error model and opt may hold part of the
// state and should be discarded.
func Resume(dir string, model nn.Module, opt optim.Optimizer) (epoch, step int, err error) {
	meta, err := checkpoint.LoadModule(filepath.Join(dir, LastFile), model)
	if err != nil {
		return 0, 0, fmt.Errorf("train: Resume: %w", err)
	}
	optMeta, err := checkpoint.LoadOptimizer(filepath.Join(dir, LastOptimFile), opt)
	if err != nil {
		return 0, 0, fmt.Errorf("train: Resume: %w", err)
	}
	epoch, step, err = resumePoint(meta, optMeta)
	if err != nil {
		return 0, 0, fmt.Errorf("train: Resume: %w", err)
	}
	return epoch, step, nil
}

// resume reads a model and an optimizer checkpoint into model and opt
// and returns the epoch and step they hold.
func resume(modelFile, optFile io.Reader, model nn.Module, opt optim.Optimizer) (epoch, step int, err error) {
	meta, err := checkpoint.ReadModule(modelFile, model)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", LastFile, err)
	}
	optMeta, err := checkpoint.ReadOptimizer(optFile, opt)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", LastOptimFile, err)
	}
	return resumePoint(meta, optMeta)
}

// resumePoint is the epoch and step of a checkpoint's two files, which
// must agree.
func resumePoint(meta, optMeta map[string]string) (epoch, step int, err error) {
	if meta["step"] != optMeta["step"] {
		return 0, 0, fmt.Errorf("%s is at step %q but %s at step %q (a crash between the two writes?)",
			LastFile, meta["step"], LastOptimFile, optMeta["step"])
	}
	epoch, err1 := strconv.Atoi(meta["epoch"])
	step, err2 := strconv.Atoi(meta["step"])
	if err1 != nil || err2 != nil || epoch < 0 || step < 0 {
		return 0, 0, fmt.Errorf("%s has epoch %q and step %q, want non-negative integers", LastFile, meta["epoch"], meta["step"])
	}
	return epoch, step, nil
}
