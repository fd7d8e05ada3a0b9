package parallel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

// trainRanks trains the MLP for steps on size ranks of a local group with
// the given BucketBytes, each rank on its shard of batches of n, and
// returns every rank's parameters and losses.
func trainRanks(t *testing.T, dev *tensor.Device, size, n, bucketBytes int) ([]map[string][]float64, [][]float64) {
	const steps, lr = 3, 0.2
	results := make([]map[string][]float64, size)
	losses := make([][]float64, size)
	errs := runRanks(size, func(comm parallel.Communicator) error {
		m, _ := newMLP(dev)
		defer nn.Release(m)
		d, err := parallel.NewDistributed(m, comm)
		if err != nil {
			return err
		}
		d.BucketBytes = bucketBytes
		opt := optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})
		for step := range steps {
			x, y := batch(t, n, uint64(step+1))
			sh := parallel.Shards(n, comm.Size())[comm.Rank()]
			var xs, ys *tensor.Tensor
			if sh[1] > sh[0] {
				xs, ys = x.Slice(0, sh[0], sh[1], 1), y.Slice(0, sh[0], sh[1], 1)
			}
			loss, err := d.Backward(xs, ys, crossEntropy)
			for _, r := range []*tensor.Tensor{x, y, xs, ys} {
				if r != nil {
					r.Release()
				}
			}
			if err != nil {
				return err
			}
			losses[comm.Rank()] = append(losses[comm.Rank()], loss)
			if err := d.Step(opt); err != nil {
				return err
			}
		}
		results[comm.Rank()] = params(t, m)
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d of %d, BucketBytes %d", r, size, bucketBytes)
	}
	return results, losses
}

// TestDistributedBucketsMatchOneBuffer: gradients all-reduced in buckets
// during the backward pass (every parameter alone, a few per bucket, all
// in one) give the parameters that one all-reduce after the pass gives,
// bitwise (the same float32 sums in the same rank order), on 2 and 3
// ranks, including a rank with an empty shard (2 samples on 3 ranks).
func TestDistributedBucketsMatchOneBuffer(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for _, c := range []struct{ size, n int }{{2, 7}, {3, 7}, {3, 2}} {
			want, wantLoss := trainRanks(t, dev, c.size, c.n, 0)
			for _, capBytes := range []int{1, 200, parallel.DefaultBucketBytes} {
				got, gotLoss := trainRanks(t, dev, c.size, c.n, capBytes)
				msg := fmt.Sprintf("%d ranks, batch %d, BucketBytes %d", c.size, c.n, capBytes)
				assert.Equal(t, want, got, msg)
				for r := range gotLoss {
					// One buffer sends n·loss in float32, buckets in float64.
					assert.InDeltaSlice(t, wantLoss[r], gotLoss[r], 1e-6, msg)
				}
			}
		}
	})
}

// overlapProbe is a Communicator that notes, at the start of each
// non-blocking all-reduce, whether the first layer's weight has its
// gradient yet.
type overlapProbe struct {
	parallel.Communicator
	first   interface{ Grad() bool }
	started []bool
}

type gradProbe struct{ m nn.Module }

func (g gradProbe) Grad() bool { return g.m.Parameters()[0].Value.Grad() != nil }

func (o *overlapProbe) IAllReduceFloat32(buf []float32) (parallel.Request, error) {
	o.started = append(o.started, o.first.Grad())
	return o.Communicator.IAllReduceFloat32(buf)
}

// TestDistributedBucketsOverlapBackward: with a bucket per parameter, the
// last layer's buckets are sent while the backward pass has not reached
// the first layer yet, and the first layer's weight (ready last) is the
// last bucket.
func TestDistributedBucketsOverlapBackward(t *testing.T) {
	cpu := testdevice.CPU(t)
	started := make([][]bool, 2)
	errs := runRanks(2, func(comm parallel.Communicator) error {
		m, _ := newMLP(cpu)
		defer nn.Release(m)
		probe := &overlapProbe{Communicator: comm, first: gradProbe{m}}
		d, err := parallel.NewDistributed(m, probe)
		if err != nil {
			return err
		}
		d.BucketBytes = 1
		x, y := batch(t, 5, 1)
		defer x.Release()
		defer y.Release()
		_, err = d.Backward(x, y, crossEntropy)
		started[comm.Rank()] = probe.started
		return err
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
		ps := len(started[r])
		require.Equal(t, 4, ps, "rank %d: one bucket per parameter", r)
		assert.False(t, started[r][0], "rank %d: the last layer's bucket went before the first layer's gradient existed", r)
		assert.True(t, started[r][ps-1], "rank %d: the first layer's weight is the last bucket", r)
	}
}

// withUnused is a model with a parameter its Forward never uses.
type withUnused struct {
	nn.Module
	extra *graph.Value
}

func (w withUnused) Parameters() []nn.Named {
	return append(w.Module.Parameters(), nn.Named{Name: "extra", Value: w.extra})
}

// TestDistributedBucketsUnusedParameter: a parameter the backward pass
// never reaches fires no hook; its bucket still goes (after the pass),
// and it gets a zero gradient, as with one buffer (DDP's
// find_unused_parameters).
func TestDistributedBucketsUnusedParameter(t *testing.T) {
	cpu := testdevice.CPU(t)
	for _, bucketBytes := range []int{0, 1, parallel.DefaultBucketBytes} {
		grads := make([][]float64, 2)
		errs := runRanks(2, func(comm parallel.Communicator) error {
			inner, _ := newMLP(cpu)
			m := withUnused{inner, graph.Param(tensor.FromFloat32(cpu, []float32{1, 2, 3}, 3))}
			defer nn.Release(m)
			d, err := parallel.NewDistributed(m, comm)
			if err != nil {
				return err
			}
			d.BucketBytes = bucketBytes
			x, y := batch(t, 6, uint64(comm.Rank()+1))
			defer x.Release()
			defer y.Release()
			if _, err := d.Backward(x, y, crossEntropy); err != nil {
				return err
			}
			grads[comm.Rank()] = testdevice.Float64s(t, m.extra.Grad().Tensor())
			require.NotNil(t, inner.Parameters()[0].Value.Grad())
			return nil
		})
		for r, err := range errs {
			require.NoError(t, err, "rank %d, BucketBytes %d", r, bucketBytes)
			assert.Equal(t, []float64{0, 0, 0}, grads[r], "rank %d, BucketBytes %d", r, bucketBytes)
		}
	}
}
