package tensor_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// tinyThresholds make routing visible at test sizes: 100 elements, 1000
// multiply-adds, host data from 50 elements.
var tinyThresholds = tensor.Thresholds{Elementwise: 100, Reduction: 100, MatMul: 1000, Window: 100, Creation: 50}

// withPlacement runs the rest of the test under policy p with gpu as the
// accelerator and tinyThresholds, restoring everything afterwards.
func withPlacement(t *testing.T, p tensor.Placement, gpu *tensor.Device) {
	t.Helper()
	prev := tensor.SetPlacement(p)
	prevGPU := tensor.SetPlacementGPU(gpu)
	tensor.SetThresholds(tinyThresholds)
	tensor.ResetPlacementStats()
	t.Cleanup(func() {
		tensor.SetPlacement(prev)
		tensor.SetPlacementGPU(prevGPU)
		tensor.ResetThresholds()
	})
}

func randFloats(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

// hostTensor puts data on dev whatever the policy: the placement of new
// host data is tested on its own.
func hostTensor(t *testing.T, dev *tensor.Device, data []float32, shape ...int) *tensor.Tensor {
	t.Helper()
	prev := tensor.SetPlacement(tensor.Explicit)
	defer tensor.SetPlacement(prev)
	x := tensor.FromFloat32(dev, data, shape...)
	t.Cleanup(x.Release)
	return x
}

func requireClose(t *testing.T, want []float64, got *tensor.Tensor) {
	t.Helper()
	vals := testdevice.Float64s(t, got)
	require.Len(t, vals, len(want))
	for i := range want {
		require.InDelta(t, want[i], vals[i], 1e-4*(1+math.Abs(want[i])), "element %d", i)
	}
}

func addRef(a, b []float32) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = float64(a[i]) + float64(b[i])
	}
	return out
}

func matmulRef(a, b []float32, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			for p := range k {
				out[i*n+j] += float64(a[i*k+p]) * float64(b[p*n+j])
			}
		}
	}
	return out
}

// devices returns the CPU and the WebGPU adapter (llvmpipe here).
func devices(t *testing.T) (cpu, gpu *tensor.Device) {
	return testdevice.CPU(t), testdevice.WebGPU(t)
}

func TestPlacementAuto(t *testing.T) {
	cpu, gpu := devices(t)
	withPlacement(t, tensor.Auto, gpu)
	r := rand.New(rand.NewPCG(1, 2))

	// Small CPU work stays on the CPU; large goes to the GPU.
	for _, tc := range []struct {
		n    int
		want *tensor.Device
	}{{1, cpu}, {7, cpu}, {99, cpu}, {100, gpu}, {1025, gpu}} {
		a, b := randFloats(r, tc.n), randFloats(r, tc.n)
		ta, tb := hostTensor(t, cpu, a), hostTensor(t, cpu, b)
		tensor.ResetPlacementStats()
		y := tensor.Add(ta, tb)
		require.Same(t, tc.want, y.Device(), "n=%d", tc.n)
		requireClose(t, addRef(a, b), y)
		st := tensor.PlacementStats()
		require.Equal(t, int64(1), st.Ops[tc.want.Name()])
		if tc.want == gpu {
			require.Equal(t, int64(2), st.Moves)
			require.Equal(t, int64(8*tc.n), st.BytesMoved)
		} else {
			require.Zero(t, st.Moves)
		}
		y.Release()
	}

	// Work on the GPU stays there, however small.
	a, b := randFloats(r, 7), randFloats(r, 7)
	y := tensor.Add(hostTensor(t, gpu, a), hostTensor(t, gpu, b))
	require.Same(t, gpu, y.Device())
	requireClose(t, addRef(a, b), y)
	y.Release()

	// Mixed and small: the side with fewer bytes moves.
	big, one := randFloats(r, 7), randFloats(r, 1)
	y = tensor.Add(hostTensor(t, cpu, big, 7), hostTensor(t, gpu, one, 1))
	require.Same(t, cpu, y.Device())
	y.Release()
	y = tensor.Add(hostTensor(t, cpu, one, 1), hostTensor(t, gpu, big, 7))
	require.Same(t, gpu, y.Device())
	y.Release()
	// Mixed and large: the GPU.
	big = randFloats(r, 300)
	y = tensor.Add(hostTensor(t, cpu, big, 300), hostTensor(t, gpu, one, 1))
	require.Same(t, gpu, y.Device())
	want := make([]float64, 300)
	for i := range want {
		want[i] = float64(big[i]) + float64(one[0])
	}
	requireClose(t, want, y)
	y.Release()

	// MatMul by multiply-adds: 5·7·3 = 105 stays, 20·30·10 = 6000 moves.
	for _, s := range [][3]int{{5, 7, 3}, {20, 30, 10}} {
		m, k, n := s[0], s[1], s[2]
		a, b := randFloats(r, m*k), randFloats(r, k*n)
		y := tensor.MatMul(hostTensor(t, cpu, a, m, k), hostTensor(t, cpu, b, k, n))
		want := cpu
		if m*k*n >= 1000 {
			want = gpu
		}
		require.Same(t, want, y.Device(), "%v", s)
		requireClose(t, matmulRef(a, b, m, k, n), y)
		y.Release()
	}

	// Reductions by input elements.
	x := randFloats(r, 1025)
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	s := hostTensor(t, cpu, x).Sum(nil, false)
	require.Same(t, gpu, s.Device())
	requireClose(t, []float64{sum}, s)
	s.Release()

	// Host data for the accelerator below the creation threshold stays on
	// the CPU; data for the CPU is never moved at creation.
	tensor.ResetPlacementStats()
	small := tensor.FromFloat32(gpu, randFloats(r, 49))
	large := tensor.FromFloat32(gpu, randFloats(r, 50))
	onCPU := tensor.FromFloat32(cpu, randFloats(r, 5000))
	defer small.Release()
	defer large.Release()
	defer onCPU.Release()
	require.Same(t, cpu, small.Device())
	require.Same(t, gpu, large.Device())
	require.Same(t, cpu, onCPU.Device())
	require.Equal(t, int64(1), tensor.PlacementStats().KeptOnCPU)
}
