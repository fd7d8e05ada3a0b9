package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// mhaRef is multi-head attention in float64 with MultiHeadAttention's
// projection layout: q [n, lq, e], k and v [n, lk, e], inW [3e, e] stacked
// query/key/value rows, head h on features h·d … (h+1)·d − 1.
func mhaRef(q, k, v []float64, n, lq, lk, e, heads int, inW, inB, outW, outB []float64, causal bool) []float64 {
	d := e / heads
	qp := matmulT(q, n*lq, e, inW[:e*e], e, inB[:e])
	kp := matmulT(k, n*lk, e, inW[e*e:2*e*e], e, inB[e:2*e])
	vp := matmulT(v, n*lk, e, inW[2*e*e:], e, inB[2*e:])
	ctx := make([]float64, n*lq*e)
	for b := range n {
		for h := range heads {
			scores := make([]float64, lq*lk)
			for i := range lq {
				for j := range lk {
					s := 0.0
					for f := h * d; f < (h+1)*d; f++ {
						s += qp[(b*lq+i)*e+f] * kp[(b*lk+j)*e+f]
					}
					scores[i*lk+j] = s / math.Sqrt(float64(d))
					if causal && j > i {
						scores[i*lk+j] = math.Inf(-1)
					}
				}
			}
			softmaxRows(scores, lk)
			for i := range lq {
				for f := h * d; f < (h+1)*d; f++ {
					s := 0.0
					for j := range lk {
						s += scores[i*lk+j] * vp[(b*lk+j)*e+f]
					}
					ctx[(b*lq+i)*e+f] = s
				}
			}
		}
	}
	return matmulT(ctx, n*lq, e, outW, e, outB)
}

func TestMultiHeadAttention(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, l, lk, emb, heads = 2, 3, 4, 8, 2
		m := NewMultiHeadAttention(e.dev, emb, heads, MultiHeadAttentionConfig{BatchFirst: true}, tensor.NewGenerator(14))
		defer Release(m)
		require.Equal(t, []string{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}, names(m.Parameters()))
		require.Equal(t, []int{3 * emb, emb}, m.InProjWeight.Shape())
		require.Equal(t, []int{3 * emb}, m.InProjBias.Shape())
		require.Equal(t, []int{emb, emb}, m.OutProj.Weight.Shape())
		require.Equal(t, make([]float64, 3*emb), read(t, m.InProjBias))
		require.Equal(t, make([]float64, emb), read(t, m.OutProj.Bias))
		xb := math.Sqrt(6.0 / (4 * emb))
		for _, v := range read(t, m.InProjWeight) {
			require.LessOrEqual(t, math.Abs(v), xb)
		}
		for _, v := range read(t, m.OutProj.Weight) {
			require.LessOrEqual(t, math.Abs(v), 1/math.Sqrt(emb))
		}
		randomize(e, m, 110)
		inW, inB := read(t, m.InProjWeight), read(t, m.InProjBias)
		outW, outB := read(t, m.OutProj.Weight), read(t, m.OutProj.Bias)

		xd := randn(111, n*l*emb, 1)
		x := e.constant(xd, n, l, emb)
		defer x.Release()
		causalMask := graph.Constant(SquareSubsequentMask(e.dev, e.dt, l))
		defer causalMask.Release()
		for _, causal := range []bool{false, true} {
			y := m.Forward(x)
			if causal {
				y.Release()
				y, _ = m.Attend(x, x, x, AttentionOptions{AttnMask: causalMask})
			}
			require.Equal(t, []int{n, l, emb}, y.Shape())
			near(t, mhaRef(xd, xd, xd, n, l, l, emb, heads, inW, inB, outW, outB, causal), read(t, y), e.tol*10)
			backwardSum(t, y)
			y.Release()
			requireGrads(t, m)
			ZeroGrad(m)
		}

		kd, vd := randn(112, n*lk*emb, 1), randn(113, n*lk*emb, 1)
		k, v := e.constant(kd, n, lk, emb), e.constant(vd, n, lk, emb)
		defer releaseValues(k, v)
		y, _ := m.Attend(x, k, v, AttentionOptions{})
		require.Equal(t, []int{n, l, emb}, y.Shape())
		near(t, mhaRef(xd, kd, vd, n, l, lk, emb, heads, inW, inB, outW, outB, false), read(t, y), e.tol*10)
		backwardSum(t, y)
		y.Release()
		requireGrads(t, m)

		require.ErrorContains(t, tensor.Catch(func() { m.Attend(x, k, v, AttentionOptions{AttnMask: causalMask}) }), "attn_mask [3 3] is neither [L, S] = [3, 4]")
		flat := k.Reshape(n*lk, emb)
		defer flat.Release()
		require.ErrorContains(t, tensor.Catch(func() { m.Forward(flat) }), "is not [N, L, 8]")
		require.ErrorContains(t, tensor.Catch(func() { NewMultiHeadAttention(e.dev, 6, 4, MultiHeadAttentionConfig{}, nil) }), "multiple of the head count")
	})
}

func TestTransformerEncoderBlock(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, l, emb, heads, ffn = 2, 3, 4, 2, 6
		b := NewTransformerEncoderBlock(e.dev, emb, heads, ffn, 0.5, tensor.NewGenerator(15))
		defer Release(b)
		// PyTorch's state_dict order for TransformerEncoderLayer.
		require.Equal(t, []string{
			"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
			"linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
			"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
		}, names(b.Parameters()))
		require.Empty(t, b.Buffers())
		randomize(e, b, 120)
		xd := randn(121, n*l*emb, 1)
		x := e.constant(xd, n, l, emb)
		defer x.Release()

		// Evaluation: no dropout, so a float64 composition of the parts.
		b.SetTraining(false)
		require.False(t, b.Dropout1.Training())
		p := func(v interface{ Tensor() *tensor.Tensor }) []float64 { return readTensor(t, v.Tensor()) }
		a := b.SelfAttn
		h := layerNormRef(xd, emb, p(b.Norm1.Weight), p(b.Norm1.Bias), 1e-5)
		att := mhaRef(h, h, h, n, l, l, emb, heads, p(a.InProjWeight), p(a.InProjBias), p(a.OutProj.Weight), p(a.OutProj.Bias), false)
		x1 := make([]float64, len(xd))
		for i := range xd {
			x1[i] = xd[i] + att[i]
		}
		h2 := layerNormRef(x1, emb, p(b.Norm2.Weight), p(b.Norm2.Bias), 1e-5)
		f := matmulT(h2, n*l, emb, p(b.Linear1.Weight), ffn, p(b.Linear1.Bias))
		for i := range f {
			f[i] = math.Max(f[i], 0)
		}
		f = matmulT(f, n*l, ffn, p(b.Linear2.Weight), emb, p(b.Linear2.Bias))
		want := make([]float64, len(xd))
		for i := range want {
			want[i] = x1[i] + f[i]
		}
		y := b.Forward(x)
		near(t, want, read(t, y), e.tol*20)
		sq := y.Square()
		backwardSum(t, sq)
		sq.Release()
		y.Release()
		requireGrads(t, b)
		ZeroGrad(b)

		// Training: dropout changes the output.
		b.SetTraining(true)
		require.True(t, b.Dropout.Training())
		y = b.Forward(x)
		got := read(t, y)
		y.Release()
		differs := false
		for i := range got {
			differs = differs || math.Abs(got[i]-want[i]) > 1e-3
		}
		require.True(t, differs)
	})
}
