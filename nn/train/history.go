package train

import (
	"math"
	"time"
)

// Metric names Run records (see the package documentation).
const (
	MetricLoss       = "loss"
	MetricAccuracy   = "accuracy"
	MetricThroughput = "samples_per_second"
	MetricLR         = "lr"
	// ValPrefix prefixes the metrics measured on the validation set.
	ValPrefix = "val_"
)

// Epoch is what one epoch recorded.
type Epoch struct {
	Epoch    int                // from 1
	Metrics  map[string]float64 // by name: "loss", "val_accuracy", …
	Duration time.Duration      // training and evaluation
}

// History is the record of a run: one Epoch per completed epoch.
type History struct {
	Epochs []Epoch
	// BestEpoch is the epoch best.safetensors holds (by
	// Checkpoints.Best), 0 when there is none.
	BestEpoch int
	// StoppedEarly says that early stopping ended the run.
	StoppedEarly bool
}

// Metric returns the named metric of every epoch, NaN where an epoch did
// not record it.
func (h *History) Metric(name string) []float64 {
	out := make([]float64, len(h.Epochs))
	for i, e := range h.Epochs {
		v, ok := e.Metrics[name]
		if !ok {
			v = math.NaN()
		}
		out[i] = v
	}
	return out
}

// improvement tracks the best value of a monitored metric.
type improvement struct {
	Monitor
	best  float64
	epoch int // of best; 0 before the first value
}

// better reports whether v beats the best so far by more than minDelta,
// and records it if so. NaN never improves.
func (t *improvement) better(v float64, epoch int, minDelta float64) bool {
	if math.IsNaN(v) {
		return false
	}
	ok := t.epoch == 0
	if !ok && t.Maximize {
		ok = v > t.best+minDelta
	} else if !ok {
		ok = v < t.best-minDelta
	}
	if ok {
		t.best, t.epoch = v, epoch
	}
	return ok
}

// stopper is early stopping's state.
type stopper struct {
	cfg  EarlyStopping
	seen improvement
	wait int // epochs since the last improvement
}

// update takes an epoch's value and reports whether to stop.
func (s *stopper) update(v float64, epoch int) bool {
	if s.seen.better(v, epoch, s.cfg.MinDelta) {
		s.wait = 0
		return false
	}
	s.wait++
	return s.wait >= s.cfg.Patience
}
