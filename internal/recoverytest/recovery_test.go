package recoverytest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// The schedule: steps 1..steps, a checkpoint after every ckptEvery-th
// step, and (in the interrupted run) the device lost during step lossAt,
// between the backward pass and the optimizer update, so that the loop is
// caught with a half-done step and must redo steps 11, 12 and 13.
const (
	steps     = 30
	ckptEvery = 5
	lossAt    = 13
	rows, in  = 67, 7 // odd sizes: no kernel sees a neat multiple
	hidden    = 19
	out       = 3
)

// dataset is a fixed regression problem kept on the host, as a data loader
// keeps it: after a loss it is uploaded again.
func dataset() (x, y []float32) {
	rng := rand.New(rand.NewPCG(11, 12))
	x = make([]float32, rows*in)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y = make([]float32, rows*out)
	for r := range rows {
		for o := range out {
			s := 0.0
			for c := range in {
				s += math.Sin(float64(c+1)*float64(o+1)) * float64(x[r*in+c])
			}
			y[r*out+o] = float32(math.Tanh(s / 2))
		}
	}
	return x, y
}

type trainer struct {
	t     *testing.T
	dev   *tensor.Device
	model *nn.Sequential
	opt   optim.Optimizer
	x, y  *graph.Value
	hx    []float32
	hy    []float32
}

func newTrainer(t *testing.T, dev *tensor.Device) *trainer {
	gen := tensor.NewGenerator(5) // the same initial weights in both runs
	model := nn.NewSequential(nn.NewLinear(dev, in, hidden, true, gen), nn.Tanh{}, nn.NewLinear(dev, hidden, out, true, gen))
	tr := &trainer{t: t, dev: dev, model: model, opt: optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.02})}
	tr.hx, tr.hy = dataset()
	tr.upload()
	return tr
}

// upload puts the dataset on the device (again, after a loss).
func (tr *trainer) upload() {
	if tr.x != nil {
		tr.x.Release()
		tr.y.Release()
	}
	tr.x = graph.Constant(tensor.FromFloat32(tr.dev, tr.hx, rows, in))
	tr.y = graph.Constant(tensor.FromFloat32(tr.dev, tr.hy, rows, out))
}

func (tr *trainer) release() {
	tr.x.Release()
	tr.y.Release()
	nn.Release(tr.model)
}

// step runs one training step and returns its loss (before the update).
// lose, when set, loses the device between backward and the update.
func (tr *trainer) step(lose bool) (float64, error) {
	pred := tr.model.Forward(tr.x)
	loss := nn.MSELoss(pred, tr.y)
	pred.Release()
	defer loss.Release()
	if err := graph.Backward(loss); err != nil {
		return 0, err
	}
	if lose {
		require.NoError(tr.t, tr.dev.ForceLoss("recovery test: simulated driver reset"))
	}
	if err := tr.opt.Step(); err != nil {
		return 0, err
	}
	tr.opt.ZeroGrad()
	return loss.Tensor().Item() // the loop's one read-back per step
}

// run trains on the schedule and returns the loss of every step, in step
// order (a redone step's value replaces the first attempt's), and how many
// times it restored.
func run(t *testing.T, dev *tensor.Device, interrupt bool) (losses []float64, restores int, final map[string][]float32) {
	dir := t.TempDir()
	tr := newTrainer(t, dev)
	defer func() { tr.release() }()
	var lostFlag atomic.Int32
	remove := tensor.OnDeviceLost(func(e tensor.LostEvent) {
		if e.Device == dev {
			lostFlag.Add(1)
		}
	})
	defer remove()

	losses = make([]float64, steps+1)
	saved := 0 // the step of the last checkpoint; 0: none yet
	ckpt := func(s int) string { return filepath.Join(dir, fmt.Sprintf("step%d.safetensors", s)) }
	for s := 1; s <= steps; s++ {
		l, err := tr.step(interrupt && s == lossAt && restores == 0)
		if err != nil || lostFlag.Load() > 0 {
			// The loss shows both ways: the step's read-back fails with
			// the typed error, and the hook has fired, once.
			require.ErrorIs(t, err, hal.ErrDeviceLost, "step %d", s)
			var te *tensor.Error
			require.True(t, errors.As(err, &te), "%T: %v", err, err)
			require.Equal(t, int32(1), lostFlag.Swap(0))
			require.True(t, dev.Lost())
			require.Equal(t, restores+1, dev.Generation())
			// The model's tensors went with the device.
			_, perr := tr.model.Parameters()[0].Value.Tensor().Float32s()
			require.ErrorIs(t, perr, hal.ErrDeviceLost)

			require.NotZero(t, saved, "lost before the first checkpoint")
			require.NoError(t, checkpoint.Load(ckpt(saved), tr.model, tr.opt))
			tr.opt.ZeroGrad()
			tr.upload()
			restores++
			s = saved // the loop increments: step saved+1 is next
			continue
		}
		losses[s] = l
		if s%ckptEvery == 0 {
			require.NoError(t, checkpoint.Save(ckpt(s), tr.model, tr.opt))
			saved = s
		}
	}
	final = map[string][]float32{}
	for name, p := range nn.StateDict(tr.model) {
		v, err := p.Float32s()
		require.NoError(t, err)
		final[name] = v
	}
	return losses[1:], restores, final
}

// TestRecoveryTrainingLoop: the interrupted run restores once and then
// retraces the uninterrupted run step for step: every loss and the final
// parameters agree within float32 rounding. The uninterrupted run itself
// must have learned (its loss falls by more than half), so agreement is
// not the agreement of two runs that did nothing.
func TestRecoveryTrainingLoop(t *testing.T) { testdevice.ForEachWebGPU(t, testRecoveryTrainingLoop) }

func testRecoveryTrainingLoop(t *testing.T, dev *tensor.Device) {
	want, restores, wantParams := run(t, dev, false)
	require.Zero(t, restores)
	require.Less(t, want[steps-1], want[0]/2, "the reference run must learn: %v", want)

	generation := dev.Generation()
	got, restores, gotParams := run(t, dev, true)
	require.Equal(t, 1, restores)
	require.Equal(t, generation+1, dev.Generation())
	require.ErrorIs(t, dev.LostErr(), hal.ErrDeviceLost)
	require.Contains(t, dev.LostErr().Error(), "simulated driver reset")

	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-6*math.Max(1, math.Abs(want[i])), "loss of step %d", i+1)
	}
	require.Equal(t, len(wantParams), len(gotParams))
	for name, w := range wantParams {
		g := gotParams[name]
		require.Len(t, g, len(w), name)
		for i := range w {
			require.InDelta(t, w[i], g[i], 1e-5*math.Max(1, math.Abs(float64(w[i]))), "%s[%d]", name, i)
		}
	}
	// Sync reports the loss once (a loop that only syncs learns of it
	// too), then the recovered device is clean.
	require.ErrorIs(t, dev.Sync(), hal.ErrDeviceLost)
	require.NoError(t, dev.Sync())
}
