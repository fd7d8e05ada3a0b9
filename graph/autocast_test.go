package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// autocastNet is logits = relu(x·W1 + b1)·W2 + b2, a LogSoftmax and a
// mean: what a classifier's step computes.
func autocastNet(x, w1, b1, w2, b2 *Value) (hidden, logits, logp, loss *Value) {
	h := MatMul(x, w1)
	hb := Add(h, b1)
	h.Release()
	hidden = hb.ReLU()
	hb.Release()
	logits = Gemm(1, hidden, false, w2, false, 1, b2)
	logp = LogSoftmax(logits, 1)
	loss = logp.MeanAll().Neg()
	return hidden, logits, logp, loss
}

// TestAutocast: in an autocast scope the products run in float16 where
// the device runs float16 (float32 elsewhere), the softmax and the loss in
// float32, mixed operands promote to the wider dtype, the gradients reach
// the float32 parameters in float32, and the values agree with the
// float32 computation to float16's precision.
func TestAutocast(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		const n, d, hdim, k = 37, 19, 23, 7
		f16 := tensor.Supports(dev, "MatMul", tensor.Float16) && tensor.Supports(dev, "Cast", tensor.Float16)
		low := tensor.Float32
		if f16 {
			low = tensor.Float16
		}
		mk := func() []*Value {
			return []*Value{
				constant(dev, ckptRandn(1, n*d, 1), n, d),
				param(dev, ckptRandn(2, d*hdim, 0.3), d, hdim),
				param(dev, ckptRandn(3, hdim, 0.1), hdim),
				param(dev, ckptRandn(4, hdim*k, 0.3), hdim, k),
				param(dev, ckptRandn(5, k, 0.1), k),
			}
		}
		run := func(auto bool) (loss float64, grads [][]float64) {
			in := mk()
			defer releaseValues(in)
			s := NewScope()
			if auto {
				s = NewScope(Autocast)
			}
			defer s.Close()
			x := s.Use(in[0].Detach())
			hidden, logits, logp, l := autocastNet(x, in[1], in[2], in[3], in[4])
			if auto {
				assert.True(t, s.IsAutocast())
				assert.Equal(t, tensor.Float32, hidden.DType(), "float16 product + float32 bias promotes to float32")
				assert.Equal(t, low, logits.DType(), "Gemm runs in %v", low)
				assert.Equal(t, tensor.Float32, logp.DType(), "LogSoftmax runs in float32")
				assert.Equal(t, tensor.Float32, l.DType(), "the loss is float32")
			}
			require.NoError(t, Backward(l))
			loss = read(t, l)[0]
			for _, p := range in[1:] {
				require.Equal(t, tensor.Float32, p.Grad().DType(), "gradients reach the master weights in float32")
				grads = append(grads, read(t, p.Grad()))
			}
			return loss, grads
		}
		want, wantGrads := run(false)
		got, gotGrads := run(true)
		// Float16 rounding (u = 2⁻¹¹) of the inputs and weights and of
		// the products, summed in float32: a few u relative.
		tol := 4e-3
		if !f16 {
			tol = 1e-6
		}
		assert.InDelta(t, want, got, tol*(1+math.Abs(want)))
		for i := range wantGrads {
			scale := 0.0
			for _, v := range wantGrads[i] {
				scale = max(scale, math.Abs(v))
			}
			for j := range wantGrads[i] {
				require.InDelta(t, wantGrads[i][j], gotGrads[i][j], tol*(1+scale), "parameter %d element %d", i+1, j)
			}
		}
		t.Logf("%v: products in %v, loss %.6f (float32 %.6f)", dev, low, got, want)
	})
}

// TestAutocastFollowsTheData: operations outside the scope, and float64
// operands inside it, are not cast; a no-grad autocast scope records
// nothing.
func TestAutocastFollowsTheData(t *testing.T) {
	dev := cpuDevice(t)
	w := Param(tensor.FromFloat64(dev, []float64{1, 2, 3, 4}, 2, 2))
	defer w.Release()
	s := NewScope(NoGrad, Autocast)
	defer s.Close()
	x := s.Use(Constant(tensor.FromFloat64(dev, []float64{1, 0, 0, 1}, 2, 2)))
	y := MatMul(x, w)
	assert.Equal(t, tensor.Float64, y.DType(), "float64 is never cast")
	assert.False(t, y.RequiresGrad())
	h := s.Use(Constant(tensor.FromFloat32(dev, []float32{1, 2}, 2)))
	if tensor.Supports(dev, "Cast", tensor.Float16) {
		h16 := h.Cast(tensor.Float16)
		assert.Equal(t, tensor.Float32, h16.Exp().DType(), "Exp runs in float32")
		assert.Equal(t, tensor.Float32, h16.Sum(nil, false).DType(), "Sum runs in float32")
		assert.Equal(t, tensor.Float16, h16.Neg().DType(), "Neg runs as given")
	}
}
