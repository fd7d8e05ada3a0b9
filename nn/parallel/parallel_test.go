package parallel_test

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

const (
	inputs  = 5
	hidden  = 9
	classes = 3
)

// newMLP is the factory: a seeded Linear-Tanh-Linear, so the reference
// model and the primary replica start equal.
func newMLP(dev *tensor.Device) (nn.Module, error) {
	gen := tensor.NewGenerator(7)
	return nn.NewSequential(
		nn.NewLinear(dev, inputs, hidden, true, gen),
		nn.Tanh{},
		nn.NewLinear(dev, hidden, classes, true, gen),
	), nil
}

func crossEntropy(out, y *graph.Value) *graph.Value { return nn.CrossEntropy(out, y, 0) }

// batch returns random inputs and labels on the CPU.
func batch(t *testing.T, n int, seed uint64) (*tensor.Tensor, *tensor.Tensor) {
	t.Helper()
	cpu := testdevice.CPU(t)
	x := tensor.NewGenerator(seed).Randn(cpu, n, inputs)
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32((i*7 + int(seed)) % classes)
	}
	return x, tensor.FromInt32(cpu, labels, n)
}

// params reads a module's parameters as float64, by name.
func params(t *testing.T, m nn.Module) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, p := range m.Parameters() {
		out[p.Name] = testdevice.Float64s(t, p.Value.Tensor())
	}
	return out
}

// TestMatchesSingleDevice trains N steps data-parallel and on one device
// with the whole batch and compares parameters and losses. Both sum the
// same products in a different order (per shard, then weighted), so each
// step differs by float32 rounding: a few ulps of the gradient, which the
// momentum and the following steps carry on. The tolerance allows 64 ulps
// (float32 epsilon 2⁻²³) per step, relative to the values, a bound the
// rounding of ≤ 16-term sums cannot reach, while any wrong weighting (an
// unweighted mean of uneven shards differs by ~10%) fails by far.
func TestMatchesSingleDevice(t *testing.T) {
	cpu := testdevice.CPU(t)
	cases := []struct {
		name    string
		devices func(t *testing.T) []*tensor.Device
		batch   int
	}{
		{"cpu+cpu even", func(*testing.T) []*tensor.Device { return []*tensor.Device{cpu, cpu} }, 8},
		{"cpu+cpu uneven", func(*testing.T) []*tensor.Device { return []*tensor.Device{cpu, cpu} }, 7},
		{"cpu×3 uneven", func(*testing.T) []*tensor.Device { return []*tensor.Device{cpu, cpu, cpu} }, 11},
		{"more devices than samples", func(*testing.T) []*tensor.Device { return []*tensor.Device{cpu, cpu, cpu} }, 2},
		{"webgpu+cpu", func(t *testing.T) []*tensor.Device { return []*tensor.Device{testdevice.WebGPU(t), cpu} }, 7},
		{"cpu+webgpu", func(t *testing.T) []*tensor.Device { return []*tensor.Device{cpu, testdevice.WebGPU(t)} }, 9},
	}
	const steps, lr = 4, 0.2
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			devices := c.devices(t)
			dp, err := parallel.New(devices, newMLP)
			require.NoError(t, err)
			defer dp.Release()
			ref, err := newMLP(devices[0])
			require.NoError(t, err)
			defer nn.Release(ref)
			dpOpt := optim.NewSGD(dp.Module().Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})
			refOpt := optim.NewSGD(ref.Parameters(), optim.SGDConfig{LR: lr, Momentum: 0.9})

			for step := range steps {
				x, y := batch(t, c.batch, uint64(step+1))
				loss, err := dp.Backward(x, y, crossEntropy)
				require.NoError(t, err)
				require.NoError(t, dp.Step(dpOpt))

				xv := graph.Constant(x.To(devices[0]))
				yv := graph.Constant(y.To(devices[0]))
				out := ref.Forward(xv)
				refLoss := crossEntropy(out, yv)
				require.NoError(t, graph.Backward(refLoss))
				require.NoError(t, refOpt.Step())
				refOpt.ZeroGrad()

				got, err := loss.Item()
				require.NoError(t, err)
				want, err := refLoss.Item()
				require.NoError(t, err)
				require.InDelta(t, want, got, 64*0x1p-23*math.Abs(want)+1e-7, "step %d loss", step)
				for _, v := range []interface{ Release() }{loss, x, y, xv, yv, out, refLoss} {
					v.Release()
				}
			}
			want := params(t, ref)
			for i, replica := range dp.Replicas() {
				for name, got := range params(t, replica) {
					for k := range got {
						tol := steps * 64 * 0x1p-23 * (math.Abs(want[name][k]) + 1)
						require.InDelta(t, want[name][k], got[k], tol, "replica %d %s[%d]", i, name, k)
					}
				}
			}
			// The gradients are the primary's alone, dropped by Step.
			for _, r := range dp.Replicas() {
				for _, p := range r.Parameters() {
					require.Nil(t, p.Value.Grad(), p.Name)
				}
			}
		})
	}
}

func TestShards(t *testing.T) {
	require.Equal(t, [][2]int{{0, 3}, {3, 5}, {5, 7}}, parallel.Shards(7, 3))
	require.Equal(t, [][2]int{{0, 4}, {4, 8}}, parallel.Shards(8, 2))
	require.Equal(t, [][2]int{{0, 1}, {1, 2}, {2, 2}}, parallel.Shards(2, 3))
}

// TestBuffersFromPrimary checks DDP's broadcast_buffers rule: after a
// step, every replica holds the primary's running statistics, computed
// from the primary's shard alone.
func TestBuffersFromPrimary(t *testing.T) {
	cpu := testdevice.CPU(t)
	dp, err := parallel.New([]*tensor.Device{cpu, cpu}, func(dev *tensor.Device) (nn.Module, error) {
		gen := tensor.NewGenerator(3)
		return nn.NewSequential(nn.NewBatchNorm1d(dev, inputs), nn.NewLinear(dev, inputs, classes, true, gen)), nil
	})
	require.NoError(t, err)
	defer dp.Release()
	opt := optim.NewSGD(dp.Module().Parameters(), optim.SGDConfig{LR: 0.1})
	x, y := batch(t, 7, 5) // shards of 4 and 3 rows
	defer x.Release()
	defer y.Release()
	loss, err := dp.Backward(x, y, crossEntropy)
	require.NoError(t, err)
	loss.Release()
	require.NoError(t, dp.Step(opt))

	xs := testdevice.Float64s(t, x)
	want := make([]float64, inputs) // 0.9·0 + 0.1·mean of the first 4 rows
	for r := range 4 {
		for c := range inputs {
			want[c] += 0.1 * xs[r*inputs+c] / 4
		}
	}
	for i, r := range dp.Replicas() {
		for _, b := range r.Buffers() {
			if b.Name == "0.running_mean" {
				got := testdevice.Float64s(t, b.Value.Tensor())
				require.InDeltaSlice(t, want, got, 1e-6, "replica %d", i)
			}
		}
	}
}

// TestReplicaError makes the second replica's loss misuse an op: the error
// names the replica and its device, the primary's gradients stay as they
// were, and no goroutine or device memory is left behind.
func TestReplicaError(t *testing.T) {
	cpu := testdevice.CPU(t)
	testdevice.QuietGC(t, cpu)
	dp, err := parallel.New([]*tensor.Device{cpu, cpu}, newMLP)
	require.NoError(t, err)
	defer dp.Release()
	x, y := batch(t, 7, 9) // shards of 4 and 3 rows
	defer x.Release()
	defer y.Release()
	// A first step starts whatever the backend starts lazily (worker
	// pools), so that the counts below move only by the failed step.
	loss, err := dp.Backward(x, y, crossEntropy)
	require.NoError(t, err)
	loss.Release()
	nn.ZeroGrad(dp.Module())
	goroutines := runtime.NumGoroutine()
	live := cpu.Stats().LiveBytes

	failing := func(out, y *graph.Value) *graph.Value {
		if out.Shape()[0] == 3 {
			return out.Reshape(5, 5) // 9 elements: misuse
		}
		return crossEntropy(out, y)
	}
	loss, err = dp.Backward(x, y, failing)
	require.Nil(t, loss)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "replica 1 on cpu"), err.Error())
	for _, r := range dp.Replicas() {
		for _, p := range r.Parameters() {
			require.Nil(t, p.Value.Grad(), p.Name)
		}
	}
	require.Equal(t, live, cpu.Stats().LiveBytes, "device memory after the failed step")
	// Backward waits for its goroutines, so the count is back at once
	// (testify's Eventually would count its own).
	require.Equal(t, goroutines, runtime.NumGoroutine(), "goroutines after the failed step")

	// The wrapper still works after the failure.
	loss, err = dp.Backward(x, y, crossEntropy)
	require.NoError(t, err)
	loss.Release()
}

// TestAccumulates: two Backward calls before a step add up, as two
// backward passes on one device do.
func TestAccumulates(t *testing.T) {
	cpu := testdevice.CPU(t)
	dp, err := parallel.New([]*tensor.Device{cpu, cpu}, newMLP)
	require.NoError(t, err)
	defer dp.Release()
	ref, err := newMLP(cpu)
	require.NoError(t, err)
	defer nn.Release(ref)
	for seed := uint64(1); seed <= 2; seed++ {
		x, y := batch(t, 5, seed)
		loss, err := dp.Backward(x, y, crossEntropy)
		require.NoError(t, err)
		xv, yv := graph.Constant(x), graph.Constant(y)
		out := ref.Forward(xv)
		l := crossEntropy(out, yv)
		require.NoError(t, graph.Backward(l))
		for _, v := range []interface{ Release() }{loss, xv, yv, out, l} {
			v.Release()
		}
	}
	refParams := ref.Parameters()
	for j, p := range dp.Module().Parameters() {
		want := testdevice.Float64s(t, refParams[j].Value.Grad().Tensor())
		got := testdevice.Float64s(t, p.Value.Grad().Tensor())
		require.InDeltaSlice(t, want, got, 1e-6, p.Name)
	}
}

func TestNewErrors(t *testing.T) {
	cpu := testdevice.CPU(t)
	_, err := parallel.New(nil, newMLP)
	require.Error(t, err)
	calls := 0
	_, err = parallel.New([]*tensor.Device{cpu, cpu}, func(dev *tensor.Device) (nn.Module, error) {
		calls++
		if calls == 2 { // a different architecture
			return nn.NewLinear(dev, inputs, classes, true, tensor.NewGenerator(1)), nil
		}
		return newMLP(dev)
	})
	require.ErrorContains(t, err, "replica 1 on cpu")
	require.ErrorContains(t, err, "missing")
}
