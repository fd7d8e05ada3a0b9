package parallel_test

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

// seededMLP builds the MLP from seed: ranks start from different weights,
// which NewDistributed replaces by rank 0's.
func seededMLP(dev *tensor.Device, seed uint64) nn.Module {
	gen := tensor.NewGenerator(seed)
	return nn.NewSequential(
		nn.NewLinear(dev, inputs, hidden, true, gen),
		nn.NewBatchNorm1d(dev, hidden),
		nn.Tanh{},
		nn.NewLinear(dev, hidden, classes, true, gen),
	)
}

// runRanks runs f on every rank of a local group, one goroutine each.
func runRanks(size int, f func(comm parallel.Communicator) error) []error {
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r, comm := range parallel.NewLocalGroup(size) {
		wg.Go(func() { errs[r] = f(comm) })
	}
	wg.Wait()
	return errs
}

// TestDistributedMatchesSingleProcess trains 2 and 3 ranks, each on its
// shard of every batch, and one process on the whole batch, from the same
// start: parameters agree to float32 rounding (the tolerance of
// TestMatchesSingleDevice). The model has no BatchNorm here, whose batch
// statistics are per shard.
func TestDistributedMatchesSingleProcess(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for _, size := range []int{2, 3} {
			distributedMatches(t, dev, size)
		}
	})
}

func distributedMatches(t *testing.T, dev *tensor.Device, size int) {
	const steps, lr, n = 4, 0.2, 7
	{
		ref, err := newMLP(dev)
		require.NoError(t, err)
		refOpt := optim.NewSGD(ref.Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})
		var refLosses []float64
		for step := range steps {
			x, y := batch(t, n, uint64(step+1))
			xv, yv := graph.Constant(x.To(dev)), graph.Constant(y.To(dev))
			out := ref.Forward(xv)
			l := crossEntropy(out, yv)
			require.NoError(t, graph.Backward(l))
			v, err := l.Item()
			require.NoError(t, err)
			refLosses = append(refLosses, v)
			require.NoError(t, refOpt.Step())
			refOpt.ZeroGrad()
			for _, r := range []interface{ Release() }{x, y, xv, yv, out, l} {
				r.Release()
			}
		}
		want := params(t, ref)
		nn.Release(ref)

		results := make([]map[string][]float64, size)
		errs := runRanks(size, func(comm parallel.Communicator) error {
			m, _ := newMLP(dev)
			if comm.Rank() > 0 { // different weights, replaced by rank 0's
				m = nn.NewSequential(
					nn.NewLinear(dev, inputs, hidden, true, tensor.NewGenerator(uint64(comm.Rank()))),
					nn.Tanh{},
					nn.NewLinear(dev, hidden, classes, true, tensor.NewGenerator(99)),
				)
			}
			defer nn.Release(m)
			d, err := parallel.NewDistributed(m, comm)
			if err != nil {
				return err
			}
			opt := optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})
			for step := range steps {
				x, y := batch(t, n, uint64(step+1))
				sh := parallel.Shards(n, comm.Size())[comm.Rank()]
				xs, ys := x.Slice(0, sh[0], sh[1], 1), y.Slice(0, sh[0], sh[1], 1)
				loss, err := d.Backward(xs, ys, crossEntropy)
				for _, r := range []interface{ Release() }{x, y, xs, ys} {
					r.Release()
				}
				if err != nil {
					return err
				}
				if math.Abs(loss-refLosses[step]) > 64*0x1p-23*math.Abs(refLosses[step]) {
					t.Errorf("rank %d step %d: loss %v, one process %v", comm.Rank(), step, loss, refLosses[step])
				}
				if err := d.Step(opt); err != nil {
					return err
				}
			}
			results[comm.Rank()] = params(t, m)
			return nil
		})
		for r, err := range errs {
			require.NoError(t, err, "rank %d of %d", r, size)
		}
		for r, got := range results {
			for name, vs := range got {
				for k := range vs {
					tol := steps * 64 * 0x1p-23 * (math.Abs(want[name][k]) + 1)
					require.InDelta(t, want[name][k], vs[k], tol, "%d ranks: rank %d %s[%d]", size, r, name, k)
				}
			}
		}
	}
}

// TestDistributedBuffers: after a step every rank holds rank 0's running
// statistics (DDP's broadcast_buffers), which differ from what its own
// shard gave it.
func TestDistributedBuffers(t *testing.T) {
	cpu := testdevice.CPU(t)
	means := make([][]float64, 2)
	errs := runRanks(2, func(comm parallel.Communicator) error {
		m := seededMLP(cpu, uint64(comm.Rank()+1))
		defer nn.Release(m)
		d, err := parallel.NewDistributed(m, comm)
		if err != nil {
			return err
		}
		opt := optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: 0.1})
		x, y := batch(t, 8, uint64(comm.Rank()+10)) // a different shard per rank
		defer x.Release()
		defer y.Release()
		if _, err := d.Backward(x, y, crossEntropy); err != nil {
			return err
		}
		if err := d.Step(opt); err != nil {
			return err
		}
		for _, b := range m.Buffers() {
			if b.Name == "1.running_mean" {
				means[comm.Rank()] = testdevice.Float64s(t, b.Value.Tensor())
			}
		}
		return nil
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, means[0], means[1])
	require.NotEqual(t, make([]float64, hidden), means[0])
}

// TestDistributedRankFailure: when one rank's step fails, every rank
// returns an error (none waits forever), the failing one naming itself.
func TestDistributedRankFailure(t *testing.T) {
	cpu := testdevice.CPU(t)
	errs := runRanks(3, func(comm parallel.Communicator) error {
		m, _ := newMLP(cpu)
		defer nn.Release(m)
		d, err := parallel.NewDistributed(m, comm)
		if err != nil {
			return err
		}
		x, y := batch(t, 4, 1)
		defer x.Release()
		defer y.Release()
		loss := crossEntropy
		if comm.Rank() == 1 {
			loss = func(out, y *graph.Value) *graph.Value { return out.Reshape(5, 5) } // misuse
		}
		_, err = d.Backward(x, y, loss)
		for _, p := range m.Parameters() {
			if p.Value.Grad() != nil {
				t.Errorf("rank %d: %s kept a gradient", comm.Rank(), p.Name)
			}
		}
		return err
	})
	require.ErrorContains(t, errs[1], "rank 1: tensor: Reshape")
	require.ErrorContains(t, errs[0], "rank 0: 1 of 3 ranks failed")
	require.ErrorContains(t, errs[2], "rank 2: 1 of 3 ranks failed")
}

// TestDistributedLeftoverGradient: a rank whose parameters still hold a
// gradient fails, and the others learn of it instead of waiting.
func TestDistributedLeftoverGradient(t *testing.T) {
	cpu := testdevice.CPU(t)
	errs := runRanks(2, func(comm parallel.Communicator) error {
		m, _ := newMLP(cpu)
		defer nn.Release(m)
		d, err := parallel.NewDistributed(m, comm)
		if err != nil {
			return err
		}
		x, y := batch(t, 4, 1)
		defer x.Release()
		defer y.Release()
		if comm.Rank() == 0 {
			p := m.Parameters()[0].Value
			p.SetGrad(tensor.ZerosLike(p.Tensor()))
		}
		_, err = d.Backward(x, y, crossEntropy)
		return err
	})
	require.ErrorContains(t, errs[0], "rank 0: 0.weight already has a gradient")
	require.ErrorContains(t, errs[1], "rank 1: 1 of 2 ranks failed")
}
