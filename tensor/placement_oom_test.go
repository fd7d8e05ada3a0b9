package tensor_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// fullGPU puts rows×cols random values on gpu as x and y and caps its
// memory at what it then holds, so that every new buffer fails.
func fullGPU(t *testing.T, gpu *tensor.Device, rows, cols int) (x, y *tensor.Tensor, xs, ys []float32) {
	testdevice.QuietGC(t, gpu)
	r := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
	xs, ys = randFloats(r, rows*cols), randFloats(r, rows*cols)
	x, y = hostTensor(t, gpu, xs, rows, cols), hostTensor(t, gpu, ys, rows, cols)
	require.NoError(t, gpu.Sync())
	tensor.SetMemoryLimitForTest(t, gpu, gpu.Stats().LiveBytes)
	return x, y, xs, ys
}

// rbfRef is RBFKernel in float64.
func rbfRef(xs, ys []float32, n, m, d int, gamma float64) []float64 {
	out := make([]float64, n*m)
	for i := range n {
		for j := range m {
			var s float64
			for k := range d {
				diff := float64(xs[i*d+k]) - float64(ys[j*d+k])
				s += diff * diff
			}
			out[i*m+j] = math.Exp(-gamma * s)
		}
	}
	return out
}

// TestPlacementOOMComposite: under Auto and MinimizeTransfers a composite
// op that runs out of GPU memory reruns whole on the CPU, and the GPU
// forgets every failure it recorded (RBFKernel's two independent branches
// each run out); under Explicit and ForceGPU the failure stays, typed.
func TestPlacementOOMComposite(t *testing.T) {
	cpu, gpu := devices(t)
	const n, d, gamma = 3, 40, 0.02
	for _, p := range []tensor.Placement{tensor.Auto, tensor.MinimizeTransfers, tensor.Explicit, tensor.ForceGPU} {
		t.Run(p.String(), func(t *testing.T) {
			x, y, xs, ys := fullGPU(t, gpu, n, d)
			live := gpu.Stats().LiveBytes
			withPlacement(t, p, gpu)
			t.Cleanup(func() { tensor.ForgetFailuresForTest(gpu) })
			k := tensor.RBFKernel(x, y, gamma)
			defer k.Release()
			if p == tensor.Explicit || p == tensor.ForceGPU {
				err := k.Err()
				require.True(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)
				var te *tensor.Error
				require.ErrorAs(t, err, &te)
				require.Equal(t, "RBFKernel", te.Op)
				require.ErrorContains(t, err, gpu.Name())
				require.Zero(t, tensor.PlacementStats().OOMFallbacks)
				return
			}
			require.NoError(t, k.Err())
			require.Same(t, cpu, k.Device())
			want := rbfRef(xs, ys, n, n, d, gamma)
			got := testdevice.Float64s(t, k)
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-5, "element %d", i)
			}
			st := tensor.PlacementStats()
			require.Equal(t, int64(1), st.OOMFallbacks)
			require.Equal(t, int64(2), st.Moves, "x and y copied down")
			require.Equal(t, map[string]int64{gpu.Name(): 1, cpu.Name(): 1}, st.Ops, "the run that failed and the rerun")
			require.NoError(t, gpu.Sync(), "both branches' failures are retracted")
			require.Equal(t, live, gpu.Stats().LiveBytes, "nothing left behind on the GPU")
		})
	}
}
