package graph

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// scopedLoss is memMLP's loss written without a single Release: the batch
// and targets enter s, everything else joins by data flow.
func (m *memMLP) scopedLoss(s *Scope) *Value {
	x, y := s.Use(m.x.Detach()), s.Use(m.y.Detach())
	h := Tanh(Add(MatMul(x, m.w1), m.b1))
	d := Sub(Add(MatMul(h, m.w2), m.b2), y)
	return Mul(d, d).Mean(nil, false)
}

// TestScopeTrainingLoop: steps of forward, loss and Backward inside a
// scope, with no Release by hand, leave nothing live after Close but the
// parameters' gradients (which are not members) and the kept values; the
// gradients equal those of the careful hand-released forward pass.
func TestScopeTrainingLoop(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		quietGC(t, dev)
		m := newMemMLP(dev)
		defer m.release()
		base := liveBytes(dev)
		grads := m.gradBytes(dev)

		// The reference: the hand-released forward pass.
		loss := m.forward()
		require.NoError(t, Backward(loss))
		wantLoss := read(t, loss)
		loss.Release()
		var want [][]float64
		for _, p := range m.params() {
			want = append(want, read(t, p.Grad()))
		}
		ZeroGrad(m.params()...)
		require.Equal(t, base, liveBytes(dev))

		for step := range 3 {
			s := NewScope()
			loss := m.scopedLoss(s)
			require.Same(t, s, loss.scope.Load())
			require.NoError(t, Backward(loss))
			require.InDeltaSlice(t, wantLoss, read(t, loss), 1e-6)
			s.Close()
			require.Equal(t, base+grads, liveBytes(dev), "step %d: only the gradients outlive the scope", step)
			for k, p := range m.params() {
				require.Nil(t, p.scope.Load(), "parameters never join")
				require.InDeltaSlice(t, want[k], read(t, p.Grad()), 1e-5, "parameter %d", k)
			}
			ZeroGrad(m.params()...)
			require.Equal(t, base, liveBytes(dev))
		}

		// A kept loss outlives the scope, and so does its graph: Backward
		// after Close works, then releasing the loss frees everything.
		kept := Tidy(m.scopedLoss)
		require.True(t, kept.RequiresGrad())
		require.Nil(t, kept.scope.Load())
		require.NoError(t, Backward(kept))
		require.InDeltaSlice(t, wantLoss, read(t, kept), 1e-6)
		for k, p := range m.params() {
			require.InDeltaSlice(t, want[k], read(t, p.Grad()), 1e-5, "parameter %d after Tidy", k)
		}
		kept.Release()
		ZeroGrad(m.params()...)
		require.Equal(t, base, liveBytes(dev))
	})
}

// TestScopeOverTensorScope: values whose tensors belong to a tensor.Scope
// keep their graph when that scope closes (the graph's saved tensors are
// its own), so Backward still works.
func TestScopeOverTensorScope(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		w := param(dev, []float32{1, -2, 3}, 3)
		defer w.Release()
		ts := tensor.NewScope()
		x := Constant(ts.Use(tensor.FromFloat32(dev, []float32{0.5, 2, -1}, 3)))
		prod := Mul(x, w)
		loss := prod.Sum(nil, false)
		require.Same(t, ts, loss.Tensor().Scope(), "its tensor joined the tensor scope")
		ts.Keep(loss.Tensor())
		ts.Close()
		require.NoError(t, Backward(loss))
		require.Equal(t, []float64{0.5, 2, -1}, read(t, w.Grad()))
		loss.Release()
	})
}

// TestScopeTidyPanicsAndClosed: Tidy closes its scope when f panics; a
// closed scope takes no new member and its results join nothing.
func TestScopeTidyPanicsAndClosed(t *testing.T) {
	dev := cpuDevice(t)
	quietGC(t, dev)
	x := param(dev, []float32{1, 2}, 2)
	defer x.Release()
	base := liveBytes(dev)
	var inside *Value
	require.Panics(t, func() {
		Tidy(func(s *Scope) *Value {
			inside = Mul(s.Use(x.Detach()), x)
			panic("f failed")
		})
	})
	requireMisuse(t, tensor.Catch(func() { inside.Len() }), "released")
	require.Equal(t, base, liveBytes(dev))

	s := NewScope()
	v := s.Use(x.Detach())
	s.Keep(v)
	s.Close()
	defer v.Release()
	w := Mul(v, x)
	defer w.Release()
	require.Nil(t, w.Scope(), "computed from a kept value")
	requireMisuse(t, tensor.Catch(func() { s.Use(x.Detach()) }), "closed")
}
