package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// encoderPass runs one training step's forward and backward pass of enc
// on x from the generator's offset off, and returns the loss, every
// parameter's gradient (in Parameters order) and the peak of live bytes
// above what was live before the pass.
func encoderPass(t *testing.T, dev *tensor.Device, enc *TransformerEncoder, gen *tensor.Generator, off uint64, x *graph.Value) (loss []float64, grads [][]float64, peak int64) {
	require.NoError(t, dev.Sync())
	gen.SetOffset(off)
	for _, p := range enc.Parameters() {
		p.Value.ZeroGrad()
	}
	dev.ResetPeakLiveBytes()
	base := dev.Stats().LiveBytes
	y := enc.Forward(x)
	sq := y.Square()
	y.Release()
	l := sq.MeanAll()
	sq.Release()
	require.NoError(t, graph.Backward(l))
	require.NoError(t, dev.Sync())
	peak = dev.Stats().PeakLiveBytes - base
	loss = testdevice.Float64s(t, l.Tensor())
	l.Release()
	for _, p := range enc.Parameters() {
		grads = append(grads, testdevice.Float64s(t, p.Value.Grad().Tensor()))
	}
	return loss, grads, peak
}

// TestCheckpointTransformerStack: a 12-block transformer encoder with
// dropout, every block checkpointed, gives the loss and gradients of the
// plain stack exactly (the dropout masks redrawn from the restored
// generator), and needs less than half its peak of live bytes.
func TestCheckpointTransformerStack(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		const blocks, n, l, emb, heads, ffn = 12, 3, 13, 16, 2, 40
		gen := tensor.NewGenerator(3)
		layer := NewTransformerEncoderLayer(dev, emb, heads, TransformerLayerConfig{DimFeedforward: ffn, Dropout: 0.1, BatchFirst: true}, gen)
		enc := NewTransformerEncoder(layer, blocks, newLayerNormEps(dev, emb, 1e-5, tensor.Float32))
		Release(layer)
		defer Release(enc)
		x := graph.Constant(tensor.FromFloat32(dev, ckptFloat32s(randn(9, n*l*emb, 1)), n, l, emb))
		defer x.Release()
		off := gen.Offset()

		lossPlain, gradsPlain, peakPlain := encoderPass(t, dev, enc, gen, off, x)
		enc.Checkpoint = true
		lossCkpt, gradsCkpt, peakCkpt := encoderPass(t, dev, enc, gen, off, x)
		require.Equal(t, lossPlain, lossCkpt, "loss")
		names := enc.Parameters()
		for i := range gradsPlain {
			require.Equal(t, gradsPlain[i], gradsCkpt[i], "gradient of %s", names[i].Name)
		}
		t.Logf("%v: peak live bytes %d without checkpointing, %d with (%.1f×)", dev, peakPlain, peakCkpt, float64(peakPlain)/float64(peakCkpt))
		assert.Less(t, 2*peakCkpt, peakPlain, "checkpointing the 12 blocks at least halves the peak")
	})
}

// TestCheckpointedModule: nn.Checkpoint wraps a module transparently
// (names, parameters, mode) and finds the generators its dropouts draw
// from; its gradients are the module's.
func TestCheckpointedModule(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(7)
	mlp := NewSequential(NewLinear(dev, 9, 17, true, gen), ReLU{}, NewDropout(0.3, gen), NewLinear(dev, 17, 5, true, gen))
	defer Release(mlp)
	c := Checkpoint(mlp)
	assert.Equal(t, []*tensor.Generator{gen}, c.Generators)
	assert.Equal(t, mlp.Parameters(), c.Parameters())
	c.SetTraining(false)
	assert.False(t, mlp.Training())
	c.SetTraining(true)

	x := graph.Constant(tensor.FromFloat32(dev, ckptFloat32s(randn(4, 11*9, 1)), 11, 9))
	defer x.Release()
	run := func(m Module) [][]float64 {
		gen.SetOffset(1000)
		for _, p := range mlp.Parameters() {
			p.Value.ZeroGrad()
		}
		y := m.Forward(x)
		s := y.SumAll()
		y.Release()
		require.NoError(t, graph.Backward(s))
		s.Release()
		var gs [][]float64
		for _, p := range mlp.Parameters() {
			gs = append(gs, testdevice.Float64s(t, p.Value.Grad().Tensor()))
		}
		return gs
	}
	assert.Equal(t, run(mlp), run(c))
}

func ckptFloat32s(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, v := range xs {
		out[i] = float32(v)
	}
	return out
}

// TestCheckpointTransformerDecoder: a checkpointed decoder stack gives
// the plain stack's loss and gradients exactly, the memory's (an input
// of every layer) included.
func TestCheckpointTransformerDecoder(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		const blocks, n, l, s, emb, heads, ffn = 4, 2, 7, 5, 8, 2, 12
		gen := tensor.NewGenerator(4)
		layer := NewTransformerDecoderLayer(dev, emb, heads, TransformerLayerConfig{DimFeedforward: ffn, Dropout: 0.2, BatchFirst: true}, gen)
		dec := NewTransformerDecoder(layer, blocks, nil)
		Release(layer)
		defer Release(dec)
		tgt := graph.Constant(tensor.FromFloat32(dev, ckptFloat32s(randn(5, n*l*emb, 1)), n, l, emb))
		memory := graph.Param(tensor.FromFloat32(dev, ckptFloat32s(randn(6, n*s*emb, 1)), n, s, emb))
		proj := graph.Constant(tensor.FromFloat32(dev, ckptFloat32s(randn(7, n*l*emb, 1)), n, l, emb))
		defer tgt.Release()
		defer memory.Release()
		defer proj.Release()
		off := gen.Offset()
		pass := func() [][]float64 {
			gen.SetOffset(off)
			ZeroGrad(dec)
			memory.ZeroGrad()
			y := dec.Decode(tgt, memory, DecoderMasks{})
			// A random projection: the layers end in a norm, whose
			// outputs' sum and square sum are constants.
			sq := graph.Mul(y, proj)
			y.Release()
			loss := sq.SumAll()
			sq.Release()
			require.NoError(t, graph.Backward(loss))
			grads := [][]float64{testdevice.Float64s(t, loss.Tensor()), testdevice.Float64s(t, memory.Grad().Tensor())}
			loss.Release()
			for _, p := range dec.Parameters() {
				grads = append(grads, testdevice.Float64s(t, p.Value.Grad().Tensor()))
			}
			return grads
		}
		plain := pass()
		dec.Checkpoint = true
		ckpt := pass()
		require.Equal(t, len(plain), len(ckpt))
		require.Equal(t, plain[0], ckpt[0], "loss")
		// The memory feeds every layer: its gradient is the sum of the
		// layers' parts, which the plain pass adds one use at a time and
		// the checkpointed one layer by layer, so they agree to rounding
		// (as in PyTorch), not bitwise.
		scale := 0.0
		for _, v := range plain[1] {
			scale = max(scale, math.Abs(v))
		}
		require.Greater(t, scale, 1e-4, "the memory gets a gradient")
		for j := range plain[1] {
			require.InDelta(t, plain[1][j], ckpt[1][j], 1e-6*scale, "memory's gradient, element %d", j)
		}
		names := dec.Parameters()
		for i := range plain[2:] {
			require.Equal(t, plain[2+i], ckpt[2+i], "gradient of %s", names[i].Name)
		}
	})
}
