//go:build cgo

package wgpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// forEachFusionDevice runs f as a subtest on each WebGPU adapter
// (internal/testdevice), unless WEBTENSOR_FUSION=0 turns fusion off.
func forEachFusionDevice(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
	if os.Getenv("WEBTENSOR_FUSION") == "0" {
		t.Skip("WEBTENSOR_FUSION=0")
	}
	testdevice.ForEachWebGPU(t, f)
}

func randomF32(rng *rand.Rand, count int) []float32 {
	v := make([]float32, count)
	for i := range v {
		v[i] = float32(rng.Float64()*2 - 1)
	}
	return v
}

// linearReLU runs relu(x·W + b) as tensor ops, releasing the
// intermediates before the read (the group then emits with them freed),
// and checks it against float64.
func linearReLU(dev *tensor.Device, rng *rand.Rand, m, k, n int) error {
	xs, ws, bs := randomF32(rng, m*k), randomF32(rng, k*n), randomF32(rng, n)
	x := tensor.FromFloat32(dev, xs, m, k)
	w := tensor.FromFloat32(dev, ws, k, n)
	b := tensor.FromFloat32(dev, bs, n)
	xw := tensor.MatMul(x, w)
	pre := tensor.Add(xw, b)
	y := tensor.ReLU(pre)
	xw.Release()
	pre.Release()
	got, err := y.Float64s()
	for _, v := range []*tensor.Tensor{x, w, b, y} {
		v.Release()
	}
	if err != nil {
		return err
	}
	for i := range m {
		for j := range n {
			s := float64(bs[j])
			for l := range k {
				s += float64(xs[i*k+l]) * float64(ws[l*n+j])
			}
			want := math.Max(s, 0)
			if d := math.Abs(got[i*n+j] - want); d > 1e-5*(1+math.Abs(want))*float64(k) {
				return fmt.Errorf("relu(x·W+b) %dx%d·%dx%d element (%d, %d): got %v, want %v", m, k, k, n, i, j, got[i*n+j], want)
			}
		}
	}
	return nil
}

// chain runs exp(a·b) - a as elementwise ops on a fresh buffer and checks
// it against float64.
func chain(dev *tensor.Device, rng *rand.Rand, n int) error {
	as, bs := randomF32(rng, n), randomF32(rng, n)
	a := tensor.FromFloat32(dev, as, n)
	b := tensor.FromFloat32(dev, bs, n)
	p := tensor.Mul(a, b)
	e := tensor.Exp(p)
	y := tensor.Sub(e, a)
	p.Release()
	e.Release()
	got, err := y.Float64s()
	for _, v := range []*tensor.Tensor{a, b, y} {
		v.Release()
	}
	if err != nil {
		return err
	}
	for i := range n {
		want := math.Exp(float64(as[i])*float64(bs[i])) - float64(as[i])
		if math.Abs(got[i]-want) > 1e-5*(1+math.Abs(want)) {
			return fmt.Errorf("exp(a·b)-a of %d element %d: got %v, want %v", n, i, got[i], want)
		}
	}
	return nil
}

// TestFusionSplitKEpilogue: a split-K MatMul (small M·N, long K) whose
// epilogue is fused frees its scratch during the emission; the pool then
// hands that memory out again, and later work must see its own values.
func TestFusionSplitKEpilogue(t *testing.T) { forEachFusionDevice(t, testFusionSplitKEpilogue) }

func testFusionSplitKEpilogue(t *testing.T, dev *tensor.Device) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{4, 1025, 8}, {7, 2048, 33}, {4, 1025, 8}} {
		require.NoError(t, dev.Sync())
		before := dev.Stats().Dispatches
		require.NoError(t, linearReLU(dev, rng, sz[0], sz[1], sz[2]))
		// Partial sums, then the reduction carrying the epilogue.
		require.Equal(t, int64(2), dev.Stats().Dispatches-before, "split-K relu(x·W + b) %v", sz)
		require.NoError(t, chain(dev, rng, sz[0]*sz[2]*4))
	}
}

// TestFusionConcurrent runs fused chains and matmuls from several
// goroutines on their own buffers: an emission must not let another
// goroutine's dispatch or Free slip in before the group it depends on.
func TestFusionConcurrent(t *testing.T) { forEachFusionDevice(t, testFusionConcurrent) }

func testFusionConcurrent(t *testing.T, dev *tensor.Device) {
	const workers, rounds = 4, 6
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for r := range rounds {
				var err error
				switch (w + r) % 3 {
				case 0:
					err = linearReLU(dev, rng, 4, 1025, 8) // split-K
				case 1:
					err = linearReLU(dev, rng, 1+rng.IntN(20), 1+rng.IntN(40), 2+rng.IntN(40))
				default:
					err = chain(dev, rng, 1+rng.IntN(1000))
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestFusionReleasedChain: a chain that releases each result gets the
// freed buffer back as the next dst; it still fuses (24 ops a group) and
// every step sees the previous value.
func TestFusionReleasedChain(t *testing.T) { forEachFusionDevice(t, testFusionReleasedChain) }

func testFusionReleasedChain(t *testing.T, dev *tensor.Device) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, steps = 7, 50
	xs, ys := randomF32(rng, n), randomF32(rng, n)
	x := tensor.FromFloat32(dev, xs, n)
	y := tensor.FromFloat32(dev, ys, n)
	defer x.Release()
	defer y.Release()
	require.NoError(t, dev.Sync())
	before := dev.Stats().Dispatches
	h := tensor.Add(x, y)
	for range steps - 1 {
		s := tensor.Add(h, y)
		next := tensor.Mul(s, x)
		s.Release()
		h.Release()
		h = next
	}
	got, err := h.Float64s()
	h.Release()
	require.NoError(t, err)
	require.LessOrEqual(t, dev.Stats().Dispatches-before, int64(6), "%d released steps", steps)
	for i := range n {
		want := float64(xs[i] + ys[i])
		for range steps - 1 {
			want = float64(float32(float32(want)+ys[i]) * xs[i])
		}
		require.InDelta(t, want, got[i], 1e-4*(1+math.Abs(want)), "element %d", i)
	}
}
