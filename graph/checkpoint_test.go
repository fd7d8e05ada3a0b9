package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// ckptRandn returns n values N(0, scale²) from a fixed-seed stream.
func ckptRandn(seed uint64, n int, scale float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 11))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * scale)
	}
	return out
}

// deepMLP is a stack of tanh layers x ← tanh(x·W + b) with dropout, each
// a block that Checkpoint may wrap.
type deepMLP struct {
	ws, bs []*Value
	gen    *tensor.Generator
	p      float64
}

func newDeepMLP(dev *tensor.Device, depth, width int, p float64) *deepMLP {
	m := &deepMLP{gen: tensor.NewGenerator(5), p: p}
	for i := range depth {
		m.ws = append(m.ws, param(dev, ckptRandn(uint64(10+i), width*width, 1/float64(width)*2), width, width))
		m.bs = append(m.bs, param(dev, ckptRandn(uint64(100+i), width, 0.1), width))
	}
	return m
}

func (m *deepMLP) params() []*Value { return append(append([]*Value{}, m.ws...), m.bs...) }

func (m *deepMLP) block(i int, x *Value) *Value {
	h := MatMul(x, m.ws[i])
	a := Add(h, m.bs[i])
	h.Release()
	t := a.Tanh()
	a.Release()
	if m.p == 0 {
		return t
	}
	d := Dropout(t, m.p, true, m.gen)
	t.Release()
	return d
}

// loss runs the stack (every block checkpointed when ckpt) and returns
// the mean square of the output.
func (m *deepMLP) loss(x *Value, ckpt bool) *Value {
	h := x
	for i := range m.ws {
		var next *Value
		if ckpt {
			next = Checkpoint(func(in []*Value) *Value { return m.block(i, in[0]) }, []*Value{h}, m.gen)
		} else {
			next = m.block(i, h)
		}
		if h != x {
			h.Release()
		}
		h = next
	}
	sq := h.Square()
	h.Release()
	defer sq.Release()
	return sq.MeanAll()
}

// gradsOf runs one forward and backward pass from the generator's offset
// 0 and returns the loss, every parameter's gradient and the peak of live
// bytes above what was live before the pass.
func (m *deepMLP) gradsOf(t *testing.T, dev *tensor.Device, x *Value, ckpt bool) (loss []float64, grads [][]float64, peak int64) {
	require.NoError(t, dev.Sync())
	m.gen.SetOffset(0)
	for _, p := range m.params() {
		p.ZeroGrad()
	}
	dev.ResetPeakLiveBytes()
	base := dev.Stats().LiveBytes
	l := m.loss(x, ckpt)
	require.NoError(t, Backward(l))
	require.NoError(t, dev.Sync())
	peak = dev.Stats().PeakLiveBytes - base
	loss = read(t, l)
	l.Release()
	for _, p := range m.params() {
		grads = append(grads, read(t, p.Grad()))
	}
	return loss, grads, peak
}

// TestCheckpointDeepMLP: a 16-block MLP with dropout gives the same loss
// and gradients with every block checkpointed as without (bitwise: the
// recomputation issues the same kernels on the same data and redraws the
// same dropout masks), and its peak of live bytes is lower — activations
// are 16 blocks' worth without, one block's plus the blocks' inputs with.
func TestCheckpointDeepMLP(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		const depth, width, batch = 16, 24, 67 // odd sizes
		m := newDeepMLP(dev, depth, width, 0.25)
		defer releaseValues(m.params())
		x := constant(dev, ckptRandn(1, batch*width, 1), batch, width)
		defer x.Release()

		lossPlain, gradsPlain, peakPlain := m.gradsOf(t, dev, x, false)
		lossCkpt, gradsCkpt, peakCkpt := m.gradsOf(t, dev, x, true)
		require.Equal(t, lossPlain, lossCkpt, "loss")
		for i := range gradsPlain {
			require.Equal(t, gradsPlain[i], gradsCkpt[i], "gradient of parameter %d", i)
		}
		// The generator ends where an unwrapped pass leaves it.
		m.gen.SetOffset(0)
		l := m.loss(x, false)
		want := m.gen.Offset()
		l.Release()
		m.gen.SetOffset(0)
		l = m.loss(x, true)
		require.NoError(t, Backward(l))
		l.Release()
		assert.Equal(t, want, m.gen.Offset(), "Checkpoint leaves the generator where the forward pass left it")

		t.Logf("%v: peak live bytes %d without checkpointing, %d with (%.1f×)", dev, peakPlain, peakCkpt, float64(peakPlain)/float64(peakCkpt))
		assert.Less(t, 2*peakCkpt, peakPlain, "checkpointing 16 blocks at least halves the peak")
	})
}

// TestCheckpointGradCheck: the gradients through a checkpoint, for its
// inputs and for the parameters it closes over, match finite differences,
// and an input that needs no gradient gets none.
func TestCheckpointGradCheck(t *testing.T) {
	dev := cpuDevice(t)
	w := Param(tensor.FromFloat64(dev, []float64{0.3, -0.7, 1.1, 0.2, -0.4, 0.9}, 3, 2))
	defer w.Release()
	f := func(in []*Value) *Value {
		return Checkpoint(func(xs []*Value) *Value {
			h := MatMul(xs[0], w)
			defer h.Release()
			s := Mul(h.Tanh(), xs[1])
			return s
		}, in)
	}
	x := Param(tensor.FromFloat64(dev, []float64{0.5, -1, 2, 0.1, 0.3, -0.8, 1.5, 0.6, -0.2, 0.4, 0.7, -1.2, 0.05, 0.9, -0.3}, 5, 3))
	scale := Constant(tensor.FromFloat64(dev, []float64{1.5, -0.5}, 2))
	defer x.Release()
	defer scale.Release()
	require.NoError(t, GradCheck(f, []*Value{x, scale}, GradCheckOptions{}))
	// A weight f closes over (a leaf Checkpoint finds, not an input).
	closing := func(in []*Value) *Value {
		wv := in[0]
		return Checkpoint(func(xs []*Value) *Value {
			h := MatMul(xs[0], wv)
			defer h.Release()
			return h.Sin()
		}, []*Value{x})
	}
	require.NoError(t, GradCheck(closing, []*Value{w}, GradCheckOptions{}))
	// And through Grad, for the closed-over weight alone.
	y := closing([]*Value{w})
	s := y.SumAll()
	y.Release()
	got, err := Grad([]*Value{s}, []*Value{w}, nil)
	s.Release()
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Nil(t, w.Grad(), "Grad leaves Grad alone through a checkpoint too")
	got[0].Release()
}

// TestCheckpointMisuse: a captured value that requires a gradient,
// CreateGraph and a no-grad scope.
func TestCheckpointMisuse(t *testing.T) {
	dev := cpuDevice(t)
	w := param(dev, []float32{1, 2, 3, 4}, 2, 2)
	defer w.Release()
	x := constant(dev, []float32{1, -1, 0.5, 2}, 2, 2)
	defer x.Release()

	w2 := w.MulScalar(2)
	defer w2.Release()
	err := tensor.Catch(func() {
		Checkpoint(func(in []*Value) *Value { return MatMul(in[0], w2) }, []*Value{x}).Release()
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Checkpoint")
	assert.Contains(t, err.Error(), "MulScalar")

	y := Checkpoint(func(in []*Value) *Value { return MatMul(in[0], w).Tanh() }, []*Value{x})
	s := y.SumAll()
	y.Release()
	_, err = Grad([]*Value{s}, []*Value{w}, nil, CreateGraph)
	s.Release()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Checkpoint")
	assert.Contains(t, err.Error(), "CreateGraph")

	ng := NewScope(NoGrad)
	z := Checkpoint(func(in []*Value) *Value { return MatMul(in[0], w) }, []*Value{ng.Use(x.Detach())})
	assert.False(t, z.RequiresGrad())
	assert.Equal(t, ng, z.Scope())
	ng.Close()
}

// TestCheckpointUnderAutocast: a checkpointed block in an autocast scope
// runs in mixed precision both times, and its gradients are the
// unwrapped block's.
func TestCheckpointUnderAutocast(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newDeepMLP(dev, 3, 8, 0)
		defer releaseValues(m.params())
		run := func(ckpt bool) (tensor.DType, [][]float64) {
			s := NewScope(Autocast)
			defer s.Close()
			x := s.Use(constant(dev, ckptRandn(3, 5*8, 1), 5, 8))
			for _, p := range m.params() {
				p.ZeroGrad()
			}
			var h *Value
			if ckpt {
				h = Checkpoint(func(in []*Value) *Value { return MatMul(in[0], m.ws[0]) }, []*Value{x})
			} else {
				h = MatMul(x, m.ws[0])
			}
			require.NoError(t, Backward(h.Square().MeanAll()))
			return h.DType(), [][]float64{read(t, m.ws[0].Grad())}
		}
		dtPlain, gPlain := run(false)
		dtCkpt, gCkpt := run(true)
		assert.Equal(t, dtPlain, dtCkpt)
		if tensor.Supports(dev, "MatMul", tensor.Float16) {
			assert.Equal(t, tensor.Float16, dtCkpt)
		}
		assert.Equal(t, gPlain, gCkpt)
	})
}
