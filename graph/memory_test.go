package graph

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// Memory: a graph holds device memory only as long as the program can
// still use it. The checks count live bytes (buffers handed out and not
// freed; on WebGPU the pool's cached buffers are not live), exactly, with
// automatic garbage collection off, so that every byte comes back through
// an explicit Release or through Backward, never through a tensor's
// cleanup.

var quietGC = testdevice.QuietGC

func liveBytes(dev *tensor.Device) int64 { return dev.Stats().LiveBytes }

// allocSize is how many live bytes a float32 tensor of shape takes on dev
// (backends round allocations up).
func allocSize(dev *tensor.Device, shape ...int) int64 {
	before := liveBytes(dev)
	z := tensor.Zeros(dev, shape...)
	n := liveBytes(dev) - before
	z.Release()
	return n
}

// memMLP is a 4-5-3 tanh network with an MSE loss on a batch of 6.
type memMLP struct {
	w1, b1, w2, b2 *Value // parameters
	x, y           *Value // batch and targets
}

func ramp(n int, scale, shift float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = scale*float32((i*7)%n)/float32(n) + shift
	}
	return out
}

func newMemMLP(dev *tensor.Device) *memMLP {
	return &memMLP{
		w1: param(dev, ramp(20, 1, -0.5), 4, 5),
		b1: param(dev, ramp(5, 0.4, -0.2), 5),
		w2: param(dev, ramp(15, 1.2, -0.6), 5, 3),
		b2: param(dev, ramp(3, 0.2, 0), 3),
		x:  constant(dev, ramp(24, 2, -1), 6, 4),
		y:  constant(dev, ramp(18, 1, -0.5), 6, 3),
	}
}

func (m *memMLP) params() []*Value { return []*Value{m.w1, m.b1, m.w2, m.b2} }

func (m *memMLP) release() { releaseValues([]*Value{m.w1, m.b1, m.w2, m.b2, m.x, m.y}) }

// gradBytes is what the parameters' gradients take.
func (m *memMLP) gradBytes(dev *tensor.Device) int64 {
	var n int64
	for _, p := range m.params() {
		n += allocSize(dev, p.Shape()...)
	}
	return n
}

// forward computes the loss as a careful user does: each intermediate
// value is released as soon as the next operation has consumed it.
func (m *memMLP) forward() *Value { return m.forwardOn(m.x) }

// forwardIn runs forward on the batch as a member of s.
func (m *memMLP) forwardIn(s *Scope) *Value { return m.forwardOn(s.Use(m.x.Detach())) }

func (m *memMLP) forwardOn(x *Value) *Value {
	z1 := MatMul(x, m.w1)
	a1 := Add(z1, m.b1)
	z1.Release()
	h := Tanh(a1)
	a1.Release()
	z2 := MatMul(h, m.w2)
	h.Release()
	o := Add(z2, m.b2)
	z2.Release()
	d := Sub(o, m.y)
	o.Release()
	sq := Mul(d, d)
	d.Release()
	loss := sq.Mean(nil, false)
	sq.Release()
	return loss
}

func TestMemoryBackwardFreesGraph(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newMemMLP(dev)
		defer m.release()
		quietGC(t, dev)
		lossBytes, gradBytes := allocSize(dev, 1), m.gradBytes(dev)
		base := liveBytes(dev)

		loss := m.forward()
		require.True(t, loss.RequiresGrad())
		require.Greater(t, liveBytes(dev), base+lossBytes, "the graph holds saved tensors")
		require.NoError(t, Backward(loss))
		require.Equal(t, base+lossBytes+gradBytes, liveBytes(dev),
			"after Backward only the loss and the gradients are left")
		loss.Release()
		require.Equal(t, base+gradBytes, liveBytes(dev))
		ZeroGrad(m.params()...)
		require.Equal(t, base, liveBytes(dev), "back to the level before the graph")

		// A second step in the same state ends at the same level: nothing
		// accumulates from one step to the next.
		loss = m.forward()
		require.NoError(t, Backward(loss))
		loss.Release()
		ZeroGrad(m.params()...)
		require.Equal(t, base, liveBytes(dev))
	})
}

func TestMemoryRetainGraph(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newMemMLP(dev)
		defer m.release()
		quietGC(t, dev)
		lossBytes, gradBytes := allocSize(dev, 1), m.gradBytes(dev)
		base := liveBytes(dev)

		loss := m.forward()
		require.NoError(t, Backward(loss, RetainGraph))
		retained := liveBytes(dev)
		require.Greater(t, retained, base+lossBytes+gradBytes, "RetainGraph keeps the saved tensors")
		require.NoError(t, Backward(loss, RetainGraph))
		require.Equal(t, retained, liveBytes(dev),
			"a second pass replaces the gradients: it adds nothing that stays")
		loss.Release()
		require.Equal(t, base+gradBytes, liveBytes(dev), "releasing the loss frees the retained graph")
		ZeroGrad(m.params()...)
		require.Equal(t, base, liveBytes(dev))
	})
}

// Two losses share the network's trunk: the trunk lives while either can
// still go backward through it.
func TestMemorySharedTrunk(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newMemMLP(dev)
		defer m.release()
		quietGC(t, dev)
		lossBytes, w1Bytes := allocSize(dev, 1), allocSize(dev, 4, 5)
		base := liveBytes(dev)

		z := MatMul(m.x, m.w1)
		h := Tanh(z)
		z.Release()
		sq := Mul(h, h)
		l1 := sq.Sum(nil, false)
		sq.Release()
		e := Exp(h)
		h.Release()
		l2 := e.Mean(nil, false)
		e.Release()

		require.NoError(t, Backward(l1, RetainGraph))
		l1.Release()
		require.Greater(t, liveBytes(dev), base+lossBytes+w1Bytes,
			"l2's graph, trunk included, is still there")
		require.NoError(t, Backward(l2), "the trunk outlived l1")
		require.Equal(t, base+lossBytes+w1Bytes, liveBytes(dev),
			"only l2 and w1's gradient are left")
		l2.Release()
		m.w1.ZeroGrad()
		require.Equal(t, base, liveBytes(dev))
	})
}

// A long chain (an unrolled recurrence) is differentiated, or freed
// unused, link by link without running out of stack or leaving any link
// behind.
func TestMemoryLongChain(t *testing.T) {
	dev := cpuDevice(t)
	quietGC(t, dev)
	const links = 20000
	chain := func(x *Value) *Value {
		y := x.MulScalar(1)
		for range links - 1 {
			next := y.MulScalar(-1) // exact in float32: the gradient is ±1
			y.Release()
			y = next
		}
		return y
	}
	x := param(dev, []float32{2}, 1)
	defer x.Release()
	base := liveBytes(dev)

	y := chain(x)
	require.NoError(t, Backward(y))
	require.Equal(t, []float64{-1}, read(t, x.Grad()))
	y.Release()
	x.ZeroGrad()
	require.Equal(t, base, liveBytes(dev))

	y = chain(x)
	y.Release()
	require.Equal(t, base, liveBytes(dev), "releasing the end frees the whole chain")
}

func TestMemoryForwardOnly(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newMemMLP(dev)
		defer m.release()
		quietGC(t, dev)
		lossBytes := allocSize(dev, 1)
		base := liveBytes(dev)

		// An evaluation that never calls Backward: releasing the output
		// frees the whole graph at once, without a collection.
		loss := m.forward()
		require.Greater(t, liveBytes(dev), base+lossBytes)
		loss.Release()
		require.Equal(t, base, liveBytes(dev))

		// Under no-grad nothing is saved in the first place.
		func() {
			s := NewScope(NoGrad)
			defer s.Close()
			loss = m.forwardIn(s)
			require.False(t, loss.RequiresGrad())
			require.Equal(t, base+lossBytes, liveBytes(dev))
		}()
		require.Equal(t, base, liveBytes(dev), "Close released the loss")

		// Outputs released in any order, parameters first included.
		m2 := newMemMLP(dev)
		loss = m2.forward()
		m2.release()
		require.NoError(t, Backward(loss), "the graph keeps released parameters' places")
		loss.Release()
		require.Equal(t, base, liveBytes(dev), "the gradients of released parameters go with them")
	})
}

func TestMemoryCreateGraph(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newMemMLP(dev)
		defer m.release()
		quietGC(t, dev)
		base := liveBytes(dev)

		// A Hessian-vector product: the first gradient is recorded, then
		// differentiated again.
		loss := m.forward()
		gs, err := Grad([]*Value{loss}, m.params(), nil, CreateGraph)
		require.NoError(t, err)
		var terms []*Value
		var dot *Value
		for _, g := range gs {
			v := Constant(tensor.OnesLike(g.Tensor()))
			p := Mul(g, v)
			v.Release()
			s := p.Sum(nil, false)
			p.Release()
			terms = append(terms, s)
			if dot == nil {
				dot = s
			} else {
				dot = Add(dot, s)
				terms = append(terms, dot)
			}
		}
		hv, err := Grad([]*Value{dot}, m.params(), nil)
		require.NoError(t, err)
		require.Greater(t, liveBytes(dev), base)
		releaseValues(hv)
		releaseValues(terms)
		releaseValues(gs)
		loss.Release()
		require.Equal(t, base, liveBytes(dev))

		// The same through Backward into Grad, then ZeroGrad.
		loss = m.forward()
		require.NoError(t, Backward(loss, CreateGraph))
		norm := Mul(m.w1.Grad(), m.w1.Grad())
		total := norm.Sum(nil, false)
		norm.Release()
		require.True(t, total.RequiresGrad(), "with CreateGraph a Grad is differentiable")
		ZeroGrad(m.params()...)
		require.NoError(t, Backward(total))
		total.Release()
		loss.Release()
		ZeroGrad(m.params()...)
		require.Equal(t, base, liveBytes(dev))
	})
}

func TestMemoryFailedPassesLeakNothing(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newMemMLP(dev)
		defer m.release()
		quietGC(t, dev)
		base := liveBytes(dev)
		unused := param(dev, []float32{1, 2}, 2)
		defer unused.Release()
		withUnused := liveBytes(dev)

		loss := m.forward()
		_, err := Grad([]*Value{loss}, []*Value{m.w1, unused}, nil)
		require.ErrorIs(t, err, ErrNoGradient)
		require.ErrorIs(t, Backward(loss), ErrGraphFreed)
		loss.Release()
		require.Equal(t, withUnused, liveBytes(dev))

		// A vector loss is refused before anything runs.
		z := MatMul(m.x, m.w1)
		require.Error(t, Backward(z))
		z.Release()
		require.Equal(t, withUnused, liveBytes(dev))

		// Misuse inside Grad, after seeds were made for the outputs.
		loss = m.forward()
		_, err = Grad([]*Value{loss}, []*Value{m.x}, nil)
		var te *tensor.Error
		require.True(t, errors.As(err, &te))
		loss.Release()
		require.Equal(t, withUnused, liveBytes(dev))
		unused.Release()
		require.Equal(t, base, liveBytes(dev))
	})
}

// TestConv2dStepAllocationsFlat: a convolution's forward and backward pass
// on the CPU (implicit GEMM forward, the flipped-weight convolution for
// the input's gradient, the pixelwise one for the weight's) allocates as
// much on the fiftieth step as on the third: scratch is pooled per worker
// and nothing grows with the steps.
func TestConv2dStepAllocationsFlat(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(3)
	x := Param(gen.Randn(dev, 4, 8, 17, 17))
	w := Param(gen.Randn(dev, 16, 8, 3, 3))
	b := Param(gen.Randn(dev, 16))
	defer func() { x.Release(); w.Release(); b.Release() }()
	step := func() {
		y := Conv2d(x, w, b, tensor.ConvOptions{Padding: [2]int{1, 1}})
		loss := y.Sum(nil, false)
		y.Release()
		require.NoError(t, Backward(loss))
		loss.Release()
		ZeroGrad(x, w, b)
	}
	step()
	early := testing.AllocsPerRun(3, step)
	late := testing.AllocsPerRun(50, step)
	t.Logf("allocations per step: %.0f over 3 steps, %.0f over 50", early, late)
	require.LessOrEqual(t, late, early+2, "allocations per step grow with the steps")
}
