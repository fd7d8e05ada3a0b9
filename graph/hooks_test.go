package graph

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// hookLog records every gradient-ready hook call: which leaf, in what
// order, and the gradient it saw (read at once, as a hook would send it).
type hookLog struct {
	order []int
	grads map[int][][]float64
}

func watch(t *testing.T, ps []*Value) *hookLog {
	h := &hookLog{grads: map[int][][]float64{}}
	for i, p := range ps {
		remove := p.OnGradReady(func(g *Value) error {
			h.order = append(h.order, i)
			h.grads[i] = append(h.grads[i], read(t, g))
			return nil
		})
		t.Cleanup(remove)
	}
	return h
}

// position is where leaf i fired first in the log (-1: never).
func (h *hookLog) position(i int) int {
	for k, j := range h.order {
		if j == i {
			return k
		}
	}
	return -1
}

// A stack of layers, plain and checkpointed: every parameter fires once per
// pass with the gradient Backward leaves in its Grad, and the last layer's
// parameters (ready first) fire before the first layer's.
func TestOnGradReadyFiresOncePerPassWithTheFinalGradient(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		for _, ckpt := range []bool{false, true} {
			const depth, width = 3, 5
			m := newDeepMLP(dev, depth, width, 0)
			ps := m.params() // ws[0..2], bs[0..2]
			log := watch(t, ps)
			x := constant(dev, ckptRandn(7, 3*width, 1), 3, width)
			for pass := 1; pass <= 2; pass++ {
				l := m.loss(x, ckpt)
				require.NoError(t, Backward(l))
				l.Release()
				require.Len(t, log.order, pass*len(ps), "ckpt %v pass %d: one call per parameter per pass", ckpt, pass)
				for i, p := range ps {
					require.Len(t, log.grads[i], pass, "ckpt %v: parameter %d", ckpt, i)
					// The hook sees Grad as Backward leaves it (the
					// second pass's includes the first's).
					assert.Equal(t, read(t, p.Grad()), log.grads[i][pass-1], "ckpt %v pass %d parameter %d", ckpt, pass, i)
				}
			}
			first := read(t, ps[0].Grad())
			for k, v := range log.grads[0][0] {
				assert.InDelta(t, 2*v, first[k], 1e-5*(1+abs(v)), "the second pass accumulates")
			}
			// The last block's weight and bias before the first block's.
			assert.Less(t, log.position(depth-1), log.position(0), "ckpt %v: last layer's weight before the first's: %v", ckpt, log.order)
			assert.Less(t, log.position(2*depth-1), log.position(depth), "ckpt %v: last layer's bias before the first's: %v", ckpt, log.order)
			x.Release()
			for _, p := range ps {
				p.Release()
			}
		}
	})
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// A weight used by two operations fires once, after both, with the sum of
// both contributions: loss = Σ w·a + Σ w², so ∂loss/∂w = a + 2w. A
// parameter the loss does not use never fires.
func TestOnGradReadySharedAndUnusedParameters(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		const n = 7
		wd, ad := ckptRandn(1, n, 1), ckptRandn(2, n, 1)
		w := param(dev, wd, n)
		unused := param(dev, ckptRandn(3, n, 1), n)
		a := constant(dev, ad, n)
		defer func() { w.Release(); unused.Release(); a.Release() }()
		log := watch(t, []*Value{w, unused})

		wa := Mul(w, a)
		ww := Mul(w, w)
		s1, s2 := wa.SumAll(), ww.SumAll()
		l := Add(s1, s2)
		require.NoError(t, Backward(l))
		for _, v := range []*Value{wa, ww, s1, s2, l} {
			v.Release()
		}

		assert.Equal(t, []int{0}, log.order, "w once, unused never")
		assert.Nil(t, unused.Grad())
		want := make([]float64, n)
		for i := range want {
			want[i] = float64(ad[i]) + 2*float64(wd[i])
		}
		require.Len(t, log.grads[0], 1)
		assert.InDeltaSlice(t, want, log.grads[0][0], 1e-5)
	})
}

// Grad does not fire hooks; removed hooks do not fire; a hook's error is
// Backward's, after the pass has still accumulated every gradient.
func TestOnGradReadyGradRemoveAndErrors(t *testing.T) {
	dev := cpuDevice(t)
	w := param(dev, []float32{1, 2, 3}, 3)
	b := param(dev, []float32{-1, 0.5, 4}, 3)
	defer func() { w.Release(); b.Release() }()
	calls := 0
	remove := w.OnGradReady(func(*Value) error { calls++; return nil })
	boom := errors.New("boom")
	removeB := b.OnGradReady(func(*Value) error { return boom })

	loss := func() *Value {
		p := Mul(w, b)
		defer p.Release()
		return p.SumAll()
	}
	l := loss()
	gs, err := Grad([]*Value{l}, []*Value{w, b}, nil)
	require.NoError(t, err)
	for _, g := range gs {
		g.Release()
	}
	l.Release()
	assert.Equal(t, 0, calls, "Grad fires no hooks")

	l = loss()
	err = Backward(l)
	l.Release()
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []float64{-1, 0.5, 4}, read(t, w.Grad()), "the pass completes despite the hook error")
	assert.Equal(t, []float64{1, 2, 3}, read(t, b.Grad()))

	before := calls
	remove()
	remove() // idempotent
	removeB()
	ZeroGrad(w, b)
	l = loss()
	require.NoError(t, Backward(l))
	l.Release()
	assert.Equal(t, before, calls, "a removed hook does not fire")

	assert.Panics(t, func() {
		Constant(tensor.FromFloat32(dev, []float32{1}, 1)).OnGradReady(func(*Value) error { return nil })
	})
}
