package tensor_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// TestScopeMembership: results and views of members join; creations do
// not; Keep takes a tensor out for good; nothing joins a closed scope;
// Close releases exactly the members.
func TestScopeMembership(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		testdevice.QuietGC(t, dev)
		r := rand.New(rand.NewPCG(3, 5))
		xs := randFloats(r, 7*3)
		outside := tensor.FromFloat32(dev, xs, 7, 3)
		defer outside.Release()
		base := dev.Stats().LiveBytes

		s := tensor.NewScope()
		x := s.Use(tensor.FromFloat32(dev, xs, 7, 3))
		require.Same(t, s, x.Scope())
		sum := x.Add(outside) // one member operand suffices
		view := sum.Transpose(0, 1)
		red := view.Sum([]int{1}, false)
		made := tensor.Zeros(dev, 4) // no operand: not a member
		defer made.Release()
		for _, m := range []*tensor.Tensor{sum, view, red} {
			require.Same(t, s, m.Scope())
		}
		require.Nil(t, made.Scope())
		require.Nil(t, outside.Scope())
		s.Keep(red)
		require.Nil(t, red.Scope())
		later := red.MulScalar(2)
		defer later.Release()
		require.Nil(t, later.Scope(), "computed from a kept tensor")
		s.Close()

		for _, gone := range []*tensor.Tensor{x, sum, view} {
			requireReleased(t, gone)
		}
		want := make([]float64, 3)
		for i := range 7 {
			for j := range 3 {
				want[j] += 2 * float64(xs[i*3+j])
			}
		}
		got := testdevice.Float64s(t, red)
		for j := range want {
			require.InDelta(t, want[j], got[j], 1e-4, "kept value %d", j)
		}
		require.Equal(t, []float64{0, 0, 0, 0}, testdevice.Float64s(t, made))
		red.Release()
		later.Release()
		made.Release()
		require.Equal(t, base, dev.Stats().LiveBytes, "Close released every member")

		require.Panics(t, func() { s.Use(tensor.Zeros(dev, 1)) }, "Use on a closed scope")
		s.Close() // idempotent
	})
}

func requireReleased(t *testing.T, x *tensor.Tensor) {
	t.Helper()
	err := tensor.Catch(func() { x.Shape(); x.Len(); _ = x.Err() })
	if err == nil {
		err = tensor.Catch(func() { x.Add(x).Release() })
	}
	require.Error(t, err, "%v should be released", x)
}

// TestScopeTidy: Tidy keeps the result, releases the rest, and still
// closes when f panics.
func TestScopeTidy(t *testing.T) {
	dev := testdevice.CPU(t)
	testdevice.QuietGC(t, dev)
	x := tensor.FromFloat32(dev, []float32{3, -4}, 2)
	defer x.Release()
	base := dev.Stats().LiveBytes
	norm := tensor.Tidy(func(s *tensor.Scope) *tensor.Tensor {
		v := s.Use(x.Reshape(2)) // a view: x stays ours
		return v.Square().Sum(nil, false).Sqrt()
	})
	require.Nil(t, norm.Scope())
	got, err := norm.Item()
	require.NoError(t, err)
	require.InDelta(t, 5, got, 1e-6)
	norm.Release()
	require.Equal(t, base, dev.Stats().LiveBytes)

	var inside *tensor.Tensor
	require.Panics(t, func() {
		tensor.Tidy(func(s *tensor.Scope) *tensor.Tensor {
			inside = s.Use(x.Reshape(2)).Exp()
			panic("f failed")
		})
	})
	requireReleased(t, inside)
	require.Equal(t, base, dev.Stats().LiveBytes)
}

// TestScopeOtherGoroutines: a scope closed while other goroutines compute
// from their own tensors frees none of theirs.
func TestScopeOtherGoroutines(t *testing.T) {
	dev := testdevice.CPU(t)
	x := tensor.FromFloat32(dev, []float32{1, 2, 3}, 3)
	defer x.Release()
	s := tensor.NewScope()
	m := s.Use(x.Reshape(3))
	var wg sync.WaitGroup
	results := make([]*tensor.Tensor, 8)
	for g := range results {
		wg.Go(func() {
			y := x.MulScalar(float64(g))
			for range 20 {
				z := y.AddScalar(1)
				y.Release()
				y = z
			}
			results[g] = y
		})
	}
	for range 20 {
		m = m.AddScalar(1)
	}
	s.Close()
	wg.Wait()
	for g, y := range results {
		require.Nil(t, y.Scope())
		got := testdevice.Float64s(t, y)
		for i, v := range []float64{1, 2, 3} {
			require.InDelta(t, v*float64(g)+20, got[i], 1e-5)
		}
		y.Release()
	}
	requireReleased(t, m)
}

// TestScopeChainStaysNearWorkingSet is the chain of 300 iterations of
// 512×512 ops (x ← ReLU(x·b + c)·½ …) with a scope per iteration and no
// Release by hand. Without scopes it held hundreds of MiB until the
// garbage collector ran; with them the device's live bytes, sampled before
// each Close (when every temporary of the iteration is still held), stay
// within a few times the 3 MiB working set, with the collector off. On
// WebGPU it runs again under Auto placement with the device capped at
// 64 MiB: no op runs out of memory and moves to the CPU. The first
// iteration's result is checked against float64 arithmetic.
func TestScopeChainStaysNearWorkingSet(t *testing.T) {
	const n, iterations = 512, 300
	const mib = 1 << 20
	r := rand.New(rand.NewPCG(512, 300))
	as, cs := randFloats(r, n*n), randFloats(r, n*n)
	bs := randFloats(r, n*n)
	for i := range bs {
		bs[i] *= float32(math.Sqrt(2.0 / n)) // keeps the chain's scale steady
	}
	working := int64(3 * n * n * 4)

	chain := func(t *testing.T, dev *tensor.Device) (peak int64) {
		a := tensor.FromFloat32(dev, as, n, n)
		b := tensor.FromFloat32(dev, bs, n, n)
		c := tensor.FromFloat32(dev, cs, n, n)
		defer a.Release()
		defer b.Release()
		defer c.Release()
		x := a.Reshape(n, n) // the chain's state: a view, so a stays ours
		base := dev.Stats().LiveBytes
		for it := range iterations {
			s := tensor.NewScope()
			y := s.Use(x).MatMul(b).Add(c).ReLU().MulScalar(0.5).Tanh().Add(c).Sub(c)
			s.Keep(y)
			if it == 0 {
				checkFirstIteration(t, as, bs, cs, n, y)
			}
			peak = max(peak, dev.Stats().LiveBytes-base)
			s.Close() // releases x (the previous state) and the temporaries
			x = y
		}
		require.NoError(t, x.Err())
		x.Release()
		require.NoError(t, dev.Sync())
		require.LessOrEqual(t, dev.Stats().LiveBytes, base, "the chain left tensors behind")
		return peak
	}

	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		testdevice.QuietGC(t, dev)
		peak := chain(t, dev)
		t.Logf("%s: peak %.1f MiB above the inputs (working set %.1f MiB)", dev.Name(), float64(peak)/mib, float64(working)/mib)
		require.LessOrEqual(t, peak, 4*working, "peak live bytes above the inputs")
	})
	testdevice.ForEachWebGPU(t, func(t *testing.T, gpu *tensor.Device) {
		testdevice.QuietGC(t, gpu)
		withPlacement(t, tensor.Auto, gpu)
		tensor.SetMemoryLimitForTest(t, gpu, 64*mib)
		t.Cleanup(func() { tensor.ForgetFailuresForTest(gpu) })
		chain(t, gpu)
		st := tensor.PlacementStats()
		require.Zero(t, st.OOMFallbacks, "ops that ran out of memory and moved to the CPU")
		require.Zero(t, st.Moves, "operands moved between devices")
		require.NoError(t, gpu.Sync())
	})
}

// checkFirstIteration compares y, the chain's first step, with the same
// arithmetic in float64.
func checkFirstIteration(t *testing.T, as, bs, cs []float32, n int, y *tensor.Tensor) {
	t.Helper()
	got := testdevice.Float64s(t, y)
	row := make([]float64, n)
	for i := range n {
		clear(row)
		for k := range n {
			aik := float64(as[i*n+k])
			for j := range n {
				row[j] += aik * float64(bs[k*n+j])
			}
		}
		for j := range n {
			c := float64(cs[i*n+j])
			want := math.Tanh(0.5*math.Max(row[j]+c, 0)) + c - c
			// float32 through a 512-term dot product, then tanh.
			require.InDelta(t, want, got[i*n+j], 1e-4*(1+math.Abs(row[j])), "element [%d %d]", i, j)
		}
	}
}
