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

// TestAutocastOpLists: each operation of the three lists, on float32 and
// float16 operands in an autocast scope, gives the dtype its list says
// and the float32 computation's values to float16's precision, on every
// device (float16 where the device runs it).
func TestAutocastOpLists(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		if !tensor.Supports(dev, "Cast", tensor.Float16) {
			t.Skipf("%v has no float16", dev)
		}
		low := func(op string) tensor.DType {
			if tensor.Supports(dev, op, tensor.Float16) {
				return tensor.Float16
			}
			return tensor.Float32
		}
		img := ckptRandn(7, 2*3*5*5, 1)
		cases := []struct {
			name string
			want tensor.DType
			f    func(x16, x32, w *Value) *Value
		}{
			{"MatMul", low("MatMul"), func(_, x32, w *Value) *Value { return MatMul(x32, w) }},
			{"Gemm", low("Gemm"), func(_, x32, w *Value) *Value { return Gemm(1, x32, false, w, false, 0, nil) }},
			{"Conv2d", low("Conv2d"), func(_, x32, _ *Value) *Value {
				// An image of its own, in x32's scope (autocast or none).
				x := Constant(tensor.FromFloat32(dev, img, 2, 3, 5, 5))
				if s := x32.Scope(); s != nil {
					s.Use(x)
				} else {
					defer x.Release()
				}
				k := Constant(tensor.FromFloat32(dev, ckptRandn(8, 4*3*3*3, 0.3), 4, 3, 3, 3))
				defer k.Release()
				return Conv2d(x, k, nil, tensor.ConvOptions{})
			}},
			{"Softmax", tensor.Float32, func(x16, _, _ *Value) *Value { return Softmax(x16, 1) }},
			{"LogSoftmax", tensor.Float32, func(x16, _, _ *Value) *Value { return LogSoftmax(x16, 1) }},
			{"Sum", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.Sum([]int{1}, false) }},
			{"Mean", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.Mean(nil, false) }},
			{"LogSumExp", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.LogSumExp([]int{0}, false) }},
			{"Exp", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.Exp() }},
			{"PowScalar", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.Abs().PowScalar(1.5) }},
			{"LayerNorm", tensor.Float32, func(x16, _, _ *Value) *Value { return LayerNorm(x16, []int{6}, nil, nil, 1e-5) }},
			{"Add (promotes)", tensor.Float32, func(x16, x32, _ *Value) *Value { return Add(x16, x32) }},
			{"Where (promotes)", tensor.Float32, func(x16, x32, _ *Value) *Value {
				return Where(x32.GtScalar(0).Cast(tensor.Int32), x16, x32)
			}},
			{"Concat (promotes)", tensor.Float32, func(x16, x32, _ *Value) *Value { return Concat(0, x16, x32) }},
			{"Neg (as given)", tensor.Float16, func(x16, _, _ *Value) *Value { return x16.Neg() }},
			{"Cumsum", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.Cumsum(1) }},
			{"LogCumSumExp", tensor.Float32, func(x16, _, _ *Value) *Value { return x16.LogCumSumExp(0) }},
		}
		if dev.Name() == "cpu" { // linear algebra runs on the CPU only
			cases = append(cases, struct {
				name string
				want tensor.DType
				f    func(x16, x32, w *Value) *Value
			}{"SVDVals", tensor.Float32, func(x16, _, _ *Value) *Value { return SVDVals(x16) }})
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				data := ckptRandn(3, 5*6, 1)
				w := Param(tensor.FromFloat32(dev, ckptRandn(4, 6*4, 0.5), 6, 4))
				defer w.Release()
				// The reference: float32 everywhere, no scope.
				r32 := constant(dev, data, 5, 6)
				r16 := r32.Cast(tensor.Float16).Cast(tensor.Float32) // the same rounded values
				want := c.f(r16, r32, w)
				wantVals := read(t, want)
				want.Release()
				r16.Release()
				r32.Release()

				s := NewScope(Autocast)
				defer s.Close()
				x32 := s.Use(constant(dev, data, 5, 6))
				x16 := x32.Cast(tensor.Float16)
				got := c.f(x16, x32, w)
				require.Equal(t, c.want, got.DType())
				gotVals := read(t, got)
				scale := 0.0
				for _, v := range wantVals {
					scale = max(scale, math.Abs(v))
				}
				for i := range wantVals {
					require.InDelta(t, wantVals[i], gotVals[i], 4e-3*(1+scale), "element %d", i)
				}
			})
		}
	})
}

// TestAutocastCastCache: a parameter read by several products in one
// autocast scope is cast once, its gradient is the uncached one's, and a
// second backward pass in the same scope (gradient accumulation) casts
// afresh instead of going through the freed cast.
func TestAutocastCastCache(t *testing.T) {
	dev := cpuDevice(t)
	if !tensor.Supports(dev, "MatMul", tensor.Float16) {
		t.Skip("no float16 products")
	}
	w := param(dev, ckptRandn(1, 6*6, 0.4), 6, 6)
	defer w.Release()
	// A recurrence h ← tanh(h·W), five steps: W is read five times.
	unroll := func(h *Value) *Value {
		for range 5 {
			p := MatMul(h, w)
			next := p.Tanh()
			p.Release()
			h = next
		}
		return h.Cast(tensor.Float32).SumAll()
	}
	gradOf := func(cached bool) []float64 {
		w.ZeroGrad()
		s := NewScope(Autocast)
		defer s.Close()
		h := s.Use(constant(dev, ckptRandn(2, 3*6, 1), 3, 6))
		if !cached {
			// The cast by hand, once per product, as without a cache.
			h16 := h.Cast(tensor.Float16)
			for range 5 {
				w16 := w.Cast(tensor.Float16)
				p := MatMul(h16, w16)
				w16.Release()
				h16 = p.Tanh()
			}
			require.NoError(t, Backward(h16.Cast(tensor.Float32).SumAll()))
			return read(t, w.Grad())
		}
		before := nodeSeq.Load()
		loss := unroll(h)
		// Nodes recorded: one cast of W (h's cast records none: h needs
		// no gradient), 5 × (MatMul, Tanh), the cast back and the sum.
		assert.Equal(t, uint64(1+10+2), nodeSeq.Load()-before, "W is cast once")
		require.NoError(t, Backward(loss))
		first := read(t, w.Grad())
		// Again in the same scope: the gradient doubles.
		require.NoError(t, Backward(unroll(h)))
		second := read(t, w.Grad())
		for i := range first {
			require.InDelta(t, 2*first[i], second[i], 1e-6*(1+math.Abs(first[i])))
		}
		return first
	}
	// The five products' gradients meet at the one cast, in float16, and
	// reach W rounded once to float16 (as PyTorch's cached cast); cast by
	// hand, each is widened before the sum.
	want, got := gradOf(false), gradOf(true)
	for i := range want {
		require.InDelta(t, want[i], got[i], 2e-3*(1+math.Abs(want[i])), "element %d", i)
	}
}
