package train

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/webtensor/webtensor/nn/checkpoint"
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
			if l.c.Checkpoints.Dir != "" {
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
	meta["epoch"] = strconv.Itoa(len(l.hist.Epochs))
	meta["step"] = strconv.Itoa(l.step)
	meta["interrupted"] = strconv.FormatBool(interrupted)
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
