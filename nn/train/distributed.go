package train

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

// writes reports whether this process writes checkpoints and output: the
// only one, or rank 0 of a distributed run.
func writes(c *Config) bool {
	return c.Distributed == nil || c.Distributed.Communicator().Rank() == 0
}

// distributedBatch trains on this rank's shard of the batch idx (every
// rank draws the same batches) and returns the whole batch's mean loss,
// the same on every rank. The shard's correct predictions go to correct
// while classes holds.
func (l *loop) distributedBatch(idx []int, correct *accumulator, classes *bool) (float64, error) {
	c := l.c
	d := c.Distributed
	comm := d.Communicator()
	sh := parallel.Shards(len(idx), comm.Size())[comm.Rank()]
	var xs, ys *tensor.Tensor
	if sh[0] < sh[1] {
		if err := catch(func() error { xs, ys = c.Train.Batch(l.dev, idx[sh[0]:sh[1]]); return nil }); err != nil {
			return 0, err
		}
		defer xs.Release()
		defer ys.Release()
	}
	if c.Schedule != nil {
		c.Optimizer.SetLR(c.Schedule.LR(l.step))
	}
	loss := func(out, y *graph.Value) *graph.Value {
		if *classes {
			if hits := countCorrect(out.Tensor(), y.Tensor()); hits != nil {
				correct.add(hits)
			} else {
				*classes = false
			}
		}
		return c.Loss(out, y)
	}
	v, err := d.Backward(xs, ys, loss)
	if err != nil {
		return 0, err
	}
	if err := d.Step(c.Optimizer); err != nil {
		return 0, err
	}
	l.step++
	return v, nil
}

// sumCorrect sums the ranks' correct predictions of the epoch (a
// collective); classes holds when it held on every rank.
func sumCorrect(c *Config, correct *accumulator, classes bool) (float64, bool, error) {
	hits, err := correct.read()
	if err != nil {
		return 0, false, err
	}
	notClasses := 0.0
	if !classes {
		notClasses = 1
	}
	buf := []float64{hits, notClasses}
	if err := c.Distributed.Communicator().AllReduceFloat64(buf); err != nil {
		return 0, false, fmt.Errorf("summing the ranks' correct predictions: %w", err)
	}
	return buf[0], buf[1] == 0, nil
}

// metricNames are the metrics an epoch may record, in a fixed order.
func metricNames(c *Config) []string {
	names := []string{MetricLoss, MetricAccuracy, MetricThroughput, MetricLR}
	if c.Val != nil && c.Val.Len() > 0 {
		names = append(names, ValPrefix+MetricLoss, ValPrefix+MetricAccuracy)
		for _, m := range c.Metrics {
			names = append(names, ValPrefix+m.Name)
		}
	}
	return names
}

// shareMetrics replaces every rank's epoch metrics by rank 0's (a
// collective), which alone evaluated the model: the ranks then take the
// same early-stopping and best-checkpoint decisions. rank0Err is rank 0's
// validation failure, which every rank returns.
func shareMetrics(c *Config, metrics map[string]float64, rank0Err error) (map[string]float64, error) {
	comm := c.Distributed.Communicator()
	names := metricNames(c)
	// [failed, then (recorded, value) per name]
	buf := make([]float64, 1+2*len(names))
	if comm.Rank() == 0 {
		if rank0Err != nil {
			buf[0] = 1
		}
		for i, name := range names {
			if v, ok := metrics[name]; ok {
				buf[1+2*i], buf[2+2*i] = 1, v
			}
		}
	}
	if err := comm.BroadcastFloat64(buf, 0); err != nil {
		return nil, fmt.Errorf("rank %d: sharing rank 0's metrics: %w", comm.Rank(), err)
	}
	if comm.Rank() == 0 {
		return metrics, rank0Err
	}
	if buf[0] != 0 {
		return nil, fmt.Errorf("rank %d: rank 0's validation failed", comm.Rank())
	}
	out := make(map[string]float64, len(names))
	for i, name := range names {
		if buf[1+2*i] != 0 {
			out[name] = buf[2+2*i]
		}
	}
	return out, nil
}

// ResumeDistributed is Resume for a distributed run, and a collective:
// rank 0 reads the last checkpoint in dir (the files Run wrote there),
// broadcasts both files, and every rank loads them into d.Module() and
// opt, so that the ranks go on from the same state without sharing a file
// system. Every rank returns the same epoch and step, or an error (rank
// 0's failure to read the files included).
func ResumeDistributed(dir string, d *parallel.Distributed, opt optim.Optimizer) (epoch, step int, err error) {
	comm := d.Communicator()
	var files [2][]byte
	var readErr error
	if comm.Rank() == 0 {
		for i, name := range []string{LastFile, LastOptimFile} {
			if files[i], readErr = os.ReadFile(filepath.Join(dir, name)); readErr != nil {
				break
			}
		}
	}
	// A header [failed, model bytes, optimizer bytes], then both files,
	// four bytes per float64 (exact, and never a NaN whose payload a
	// transport might not keep).
	head := []float64{0, float64(len(files[0])), float64(len(files[1]))}
	if readErr != nil {
		head = []float64{1, 0, 0}
	}
	if err := comm.BroadcastFloat64(head, 0); err != nil {
		return 0, 0, fmt.Errorf("train: ResumeDistributed: rank %d: %w", comm.Rank(), err)
	}
	if readErr != nil {
		return 0, 0, fmt.Errorf("train: ResumeDistributed: rank 0: %w", readErr)
	}
	if head[0] != 0 {
		return 0, 0, fmt.Errorf("train: ResumeDistributed: rank %d: rank 0 could not read the checkpoint in %s", comm.Rank(), dir)
	}
	sizes := [2]int{int(head[1]), int(head[2])}
	words := make([]float64, (sizes[0]+sizes[1]+3)/4)
	if comm.Rank() == 0 {
		packed := append(append(make([]byte, 0, 4*len(words)), files[0]...), files[1]...)
		packed = append(packed, make([]byte, 4*len(words)-len(packed))...)
		for i := range words {
			words[i] = float64(binary.LittleEndian.Uint32(packed[4*i:]))
		}
	}
	if err := comm.BroadcastFloat64(words, 0); err != nil {
		return 0, 0, fmt.Errorf("train: ResumeDistributed: rank %d: %w", comm.Rank(), err)
	}
	packed := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(packed[4*i:], uint32(w))
	}
	epoch, step, err = resume(bytes.NewReader(packed[:sizes[0]]), bytes.NewReader(packed[sizes[0]:sizes[0]+sizes[1]]), d.Module(), opt)
	if err != nil {
		return 0, 0, fmt.Errorf("train: ResumeDistributed: rank %d: %w", comm.Rank(), err)
	}
	return epoch, step, nil
}
