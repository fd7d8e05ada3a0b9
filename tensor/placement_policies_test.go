package tensor_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

func TestPlacementForce(t *testing.T) {
	cpu, gpu := devices(t)
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randFloats(r, 7), randFloats(r, 7)

	withPlacement(t, tensor.ForceGPU, gpu)
	y := tensor.Add(hostTensor(t, cpu, a), hostTensor(t, cpu, b))
	require.Same(t, gpu, y.Device())
	requireClose(t, addRef(a, b), y)
	y.Release()
	x := tensor.FromFloat32(cpu, a)
	require.Same(t, gpu, x.Device(), "ForceGPU puts host data on the GPU")
	x.Release()
	if !tensor.Supports(gpu, "Add", tensor.Float64) {
		// A dtype the GPU cannot hold stays on the CPU.
		d := tensor.FromFloat64(cpu, []float64{1, 2})
		s := tensor.Add(d, d)
		require.Same(t, cpu, d.Device())
		require.Same(t, cpu, s.Device())
		requireClose(t, []float64{2, 4}, s)
		releaseAll(d, s)
	}

	tensor.SetPlacement(tensor.ForceCPU)
	y = tensor.Add(hostTensor(t, gpu, a), hostTensor(t, gpu, b))
	require.Same(t, cpu, y.Device())
	requireClose(t, addRef(a, b), y)
	y.Release()
	x = tensor.FromFloat32(gpu, a)
	require.Same(t, cpu, x.Device(), "ForceCPU puts host data on the CPU")
	x.Release()
}

func TestPlacementMinimizeTransfers(t *testing.T) {
	cpu, gpu := devices(t)
	withPlacement(t, tensor.MinimizeTransfers, gpu)
	r := rand.New(rand.NewPCG(5, 6))
	big, one := randFloats(r, 1025), randFloats(r, 1)
	// Operands that share a device never move, however large.
	y := tensor.Add(hostTensor(t, cpu, big), hostTensor(t, cpu, big))
	require.Same(t, cpu, y.Device())
	y.Release()
	// Mixed: the most bytes win, at any size.
	for _, home := range []*tensor.Device{cpu, gpu} {
		other := gpu
		if home == gpu {
			other = cpu
		}
		tensor.ResetPlacementStats()
		y := tensor.Mul(hostTensor(t, other, one, 1), hostTensor(t, home, big))
		require.Same(t, home, y.Device())
		want := make([]float64, len(big))
		for i := range big {
			want[i] = float64(one[0]) * float64(big[i])
		}
		requireClose(t, want, y)
		require.Equal(t, int64(4), tensor.PlacementStats().BytesMoved)
		y.Release()
	}
}

// Explicit, the default, moves nothing: mixed operands are a *tensor.Error
// naming the op and each side's shape, dtype and device, for every op
// family; host data stays where it was asked to go.
func TestPlacementExplicit(t *testing.T) {
	cpu, gpu := devices(t)
	withPlacement(t, tensor.Explicit, gpu)
	a := hostTensor(t, cpu, []float32{1, 2, 3, 4, 5, 6}, 1, 1, 2, 3)
	b := hostTensor(t, gpu, []float32{1, 2, 3, 4}, 1, 1, 2, 2)
	for _, tc := range []struct {
		op  string
		run func()
	}{
		{"Add", func() { tensor.Add(a, b) }},
		{"MatMul", func() { tensor.MatMul(a, b) }},
		{"Conv2d", func() { tensor.Conv2d(a, b, nil, tensor.ConvOptions{}) }},
		{"Concat", func() { tensor.Concat(0, a, b) }},
		{"LayerNorm", func() { tensor.LayerNorm(a, []int{3}, hostTensor(t, gpu, []float32{1, 1, 1}), nil, 1e-5) }},
	} {
		err := tensor.Catch(tc.run)
		var te *tensor.Error
		require.ErrorAs(t, err, &te, tc.op)
		require.Equal(t, tc.op, te.Op)
		require.ErrorContains(t, err, "tensors on different devices: [1 1 2 3] float32 on cpu vs [")
		require.ErrorContains(t, err, "float32 on "+gpu.Name())
	}
	// Explicit keeps host data where it was asked to go.
	x := tensor.FromFloat32(gpu, []float32{1})
	require.Same(t, gpu, x.Device())
	x.Release()
	require.Empty(t, tensor.PlacementStats().Ops)
	require.Zero(t, tensor.PlacementStats().KeptOnCPU)
}

// Mixed operands of the other routed op kinds meet on one device under
// every moving policy, with the values of the single-device result.
func TestPlacementMixedOps(t *testing.T) {
	cpu, gpu := devices(t)
	r := rand.New(rand.NewPCG(7, 8))
	a, b := randFloats(r, 6*4), randFloats(r, 4*5)
	for _, p := range []tensor.Placement{tensor.Auto, tensor.ForceGPU, tensor.ForceCPU, tensor.MinimizeTransfers} {
		t.Run(p.String(), func(t *testing.T) {
			withPlacement(t, p, gpu)
			ta, tb := hostTensor(t, cpu, a, 6, 4), hostTensor(t, gpu, b, 4, 5)
			y := tensor.MatMul(ta, tb)
			requireClose(t, matmulRef(a, b, 6, 4, 5), y)
			y.Release()

			c := tensor.Concat(0, ta, hostTensor(t, gpu, a, 6, 4))
			want := make([]float64, 0, 48)
			for range 2 {
				for _, v := range a {
					want = append(want, float64(v))
				}
			}
			requireClose(t, want, c)
			c.Release()

			mask := tensor.Gt(ta, hostTensor(t, gpu, make([]float32, 24), 6, 4))
			w := tensor.Where(mask, ta, hostTensor(t, gpu, make([]float32, 24), 6, 4))
			relu := make([]float64, 24)
			for i, v := range a {
				relu[i] = max(0, float64(v))
			}
			requireClose(t, relu, w)
			releaseAll(mask, w)

			// Step writes param in place, so the grad comes to it.
			param := hostTensor(t, cpu, []float32{1, 2, 3})
			grad := hostTensor(t, gpu, []float32{10, 20, 30})
			tensor.Step(tensor.SGD, param, grad, nil, nil, tensor.StepArgs{LR: 0.1})
			require.Same(t, cpu, param.Device())
			requireClose(t, []float64{0, 0, 0}, param)
		})
	}
}

// Autodiff gives the same gradients whatever the placement, including
// when Auto moves part of the graph to the GPU.
func TestPlacementAutodiff(t *testing.T) {
	cpu, gpu := devices(t)
	r := rand.New(rand.NewPCG(9, 10))
	xs, ws := randFloats(r, 16*12), randFloats(r, 12*8)
	grads := func(t *testing.T) (gx, gw []float64) {
		x := graph.Param(hostTensor(t, cpu, xs, 16, 12))
		w := graph.Param(hostTensor(t, cpu, ws, 12, 8))
		h := graph.MatMul(x, w)
		a := graph.Tanh(h)
		loss := a.Sum(nil, false)
		require.NoError(t, graph.Backward(loss))
		gx, gw = f64(t, x.Grad()), f64(t, w.Grad())
		for _, v := range []*graph.Value{x, w, h, a, loss} {
			v.Release()
		}
		return gx, gw
	}
	withPlacement(t, tensor.Explicit, gpu)
	wantX, wantW := grads(t)
	for _, p := range []tensor.Placement{tensor.Auto, tensor.ForceGPU, tensor.ForceCPU, tensor.MinimizeTransfers} {
		t.Run(p.String(), func(t *testing.T) {
			tensor.SetPlacement(p)
			t.Cleanup(func() { tensor.SetPlacement(tensor.Explicit) })
			tensor.ResetPlacementStats()
			gx, gw := grads(t)
			require.InDeltaSlice(t, wantX, gx, 1e-4)
			require.InDeltaSlice(t, wantW, gw, 1e-4)
			if p == tensor.Auto || p == tensor.ForceGPU {
				require.NotZero(t, tensor.PlacementStats().Ops[gpu.Name()], "some work ran on the GPU")
			}
		})
	}
}

func f64(t *testing.T, x interface{ Float64s() ([]float64, error) }) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

func releaseAll(ts ...*tensor.Tensor) {
	for _, x := range ts {
		x.Release()
	}
}

// Composite ops inside the package combine results through kernels that
// do not route; forcing a policy must not split them across devices.
func TestPlacementComposites(t *testing.T) {
	cpu, gpu := devices(t)
	withPlacement(t, tensor.ForceGPU, gpu)
	r := rand.New(rand.NewPCG(11, 12))
	x := hostTensor(t, cpu, randFloats(r, 4*300), 4, 300)
	y := tensor.LayerNorm(x, []int{300}, nil, nil, 1e-5)
	vals := f64(t, y)
	for row := range 4 {
		var mean float64
		for _, v := range vals[row*300 : (row+1)*300] {
			mean += v
		}
		require.InDelta(t, 0, mean/300, 1e-4)
	}
	y.Release()
	v := x.Var([]int{1}, 1, false)
	require.Len(t, f64(t, v), 4)
	v.Release()
}
