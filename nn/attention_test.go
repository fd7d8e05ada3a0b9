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
		wide := k.Reshape(1, n, lk, emb)
		defer wide.Release()
		require.ErrorContains(t, tensor.Catch(func() { m.Forward(wide) }), "query [1 2 4 8] is not [N, L, 8]")
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

// A query whose every key is masked gets uniform weights (MaskedScore is
// finite), where PyTorch 1.13 gives NaN: the documented difference.
func TestAttentionFullyMaskedRow(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, l, s, emb, heads = 2, 3, 5, 6, 3
		m := NewMultiHeadAttention(e.dev, emb, heads, MultiHeadAttentionConfig{BatchFirst: true, DType: e.dt}, tensor.NewGenerator(4))
		defer Release(m)
		q := e.constant(randn(40, n*l*emb, 1), n, l, emb)
		kv := e.constant(randn(41, n*s*emb, 1), n, s, emb)
		mask := make([]int32, l*s)
		for j := range s {
			mask[1*s+j] = 1 // query 1 sees no key
		}
		mask[0*s+2] = 1
		am := e.labels(mask, l, s)
		defer releaseValues(q, kv, am)
		out, w := m.Attend(q, kv, kv, AttentionOptions{AttnMask: am, NeedWeights: true, PerHeadWeights: true})
		defer releaseValues(out, w)
		ws := read(t, w) // [N, H, L, S]
		for b := range n * heads {
			for j := range s {
				require.InDelta(t, 1.0/s, ws[(b*l+1)*s+j], e.tol, "fully masked row")
				require.False(t, math.IsNaN(read(t, out)[0]))
			}
			require.Zero(t, ws[(b*l+0)*s+2], "masked key")
		}
	})
}

// In training, dropout zeroes attention weights and scales the others by
// 1/(1−p), as PyTorch's (the returned weights are after dropout).
func TestAttentionDropout(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, l, emb, heads = 2, 4, 6, 2
		m := NewMultiHeadAttention(e.dev, emb, heads, MultiHeadAttentionConfig{Dropout: 0.5, DType: e.dt}, tensor.NewGenerator(5))
		defer Release(m)
		x := e.constant(randn(50, l*n*emb, 1), l, n, emb)
		defer x.Release()
		opts := AttentionOptions{NeedWeights: true, PerHeadWeights: true}
		m.SetTraining(false)
		outEval, wEval := m.Attend(x, x, x, opts)
		m.SetTraining(true)
		outTrain, wTrain := m.Attend(x, x, x, opts)
		defer releaseValues(outEval, wEval, outTrain, wTrain)
		we, wt := read(t, wEval), read(t, wTrain)
		zeros, kept := 0, 0
		for i := range we {
			if wt[i] == 0 {
				zeros++
				continue
			}
			kept++
			require.InDelta(t, 2*we[i], wt[i], e.tol*10)
		}
		require.Positive(t, zeros)
		require.Positive(t, kept)
	})
}

func TestAttentionErrors(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(6)
	m := NewMultiHeadAttention(dev, 6, 2, MultiHeadAttentionConfig{KDim: 4}, gen)
	defer Release(m)
	q := graph.Constant(tensor.Zeros(dev, 3, 2, 6))
	k := graph.Constant(tensor.Zeros(dev, 5, 2, 4))
	v := graph.Constant(tensor.Zeros(dev, 5, 2, 6))
	bad := graph.Constant(tensor.Zeros(dev, 5, 3))
	kpm := graph.Constant(tensor.FromInt32(dev, make([]int32, 10), 2, 5))
	defer releaseValues(q, k, v, bad, kpm)
	catch := func(f func()) error { return tensor.Catch(f) }
	require.ErrorContains(t, catch(func() { m.Attend(q, v, v, AttentionOptions{}) }), "key [5 2 6] is not [L, N, 4]")
	require.ErrorContains(t, catch(func() { m.Attend(q, k, v, AttentionOptions{AttnMask: bad}) }),
		"attn_mask [5 3] is neither [L, S] = [3, 5] nor [N·heads, L, S] = [4, 3, 5]")
	require.ErrorContains(t, catch(func() { m.Attend(q, k, v, AttentionOptions{KeyPaddingMask: bad}) }), "key_padding_mask [5 3] is not [N, S] = [2, 5]")
	require.ErrorContains(t, catch(func() { m.Forward(q) }), "key [3 2 6] is not [L, N, 4]")
	require.NoError(t, catch(func() {
		out, _ := m.Attend(q, k, v, AttentionOptions{KeyPaddingMask: kpm})
		out.Release()
	}))
	q2, k2, v2 := graph.Constant(tensor.Zeros(dev, 3, 6)), graph.Constant(tensor.Zeros(dev, 5, 4)), graph.Constant(tensor.Zeros(dev, 5, 6))
	defer releaseValues(q2, k2, v2)
	require.ErrorContains(t, catch(func() { m.Attend(q2, k, v, AttentionOptions{}) }), "unbatched query [3 6] needs unbatched key and value")
	require.ErrorContains(t, catch(func() { m.Attend(q2, k2, k2, AttentionOptions{}) }), "unbatched query [3 6], key [5 4] and value [5 4] are not [L, 6], [S, 4] and [S, 6]")
	require.ErrorContains(t, catch(func() { m.Attend(q2, k2, v2, AttentionOptions{KeyPaddingMask: kpm}) }), "unbatched key_padding_mask [2 5] is not [S]")
	kShort := graph.Constant(tensor.Zeros(dev, 5, 1, 4))
	defer kShort.Release()
	require.ErrorContains(t, catch(func() { m.Attend(q, kShort, v, AttentionOptions{}) }), "disagree in batch or key length")

	dec := NewTransformerDecoderLayer(dev, 6, 2, TransformerLayerConfig{DimFeedforward: 8}, gen)
	defer Release(dec)
	require.ErrorContains(t, catch(func() { dec.Forward(v) }), "a decoder needs memory: call Decode")
	require.ErrorContains(t, catch(func() { NewTransformerDecoder(dec, 0, nil) }), "0 layers")
	require.ErrorContains(t, catch(func() { SquareSubsequentMask(dev, tensor.Float32, 0) }), "size 0 is not positive")
}

// A stack holds independent copies of its layer, as PyTorch's deep copies.
func TestTransformerStackClones(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(7)
		layer := NewTransformerEncoderLayer(e.dev, 6, 2, TransformerLayerConfig{DimFeedforward: 10, NormFirst: true, DType: e.dt}, gen)
		defer Release(layer)
		enc := NewTransformerEncoder(layer, 3, nil)
		defer Release(enc)
		want := layer.Parameters()
		require.Len(t, enc.Parameters(), 3*len(want))
		require.Equal(t, "layers.2.norm2.bias", enc.Parameters()[3*len(want)-1].Name)
		for i, l := range enc.Layers {
			require.True(t, l.NormFirst)
			require.Equal(t, e.dt, l.Linear1.Weight.DType())
			for j, p := range l.Parameters() {
				require.NotSame(t, want[j].Value, p.Value)
				require.Equal(t, read(t, want[j].Value), read(t, p.Value), "layer %d %s", i, p.Name)
			}
		}
		Fill(enc.Layers[0].Linear1.Bias, 3)
		require.NotEqual(t, read(t, enc.Layers[0].Linear1.Bias), read(t, enc.Layers[1].Linear1.Bias))
		enc.SetTraining(false)
		require.False(t, enc.Layers[2].SelfAttn.Training())

		dl := NewTransformerDecoderLayer(e.dev, 6, 2, TransformerLayerConfig{DimFeedforward: 10, DType: e.dt}, gen)
		defer Release(dl)
		dec := NewTransformerDecoder(dl, 2, NewLayerNorm(e.dev, []int{6}))
		defer Release(dec)
		require.Equal(t, read(t, dl.MultiheadAttn.InProjWeight), read(t, dec.Layers[1].MultiheadAttn.InProjWeight))
		require.Equal(t, "norm.bias", dec.Parameters()[len(dec.Parameters())-1].Name)
	})
}

// Attend, Encode and Decode release every intermediate they make, masks
// and extra keys included.
func TestAttentionReleases(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, l, s, emb, heads = 2, 3, 4, 6, 2
		gen := tensor.NewGenerator(8)
		mha := NewMultiHeadAttention(e.dev, emb, heads, MultiHeadAttentionConfig{AddBiasKV: true, AddZeroAttn: true, KDim: 5, DType: e.dt}, gen)
		defer Release(mha)
		lc := TransformerLayerConfig{DimFeedforward: 8, DType: e.dt, Activation: GELU{}}
		encLayer := NewTransformerEncoderLayer(e.dev, emb, heads, lc, gen)
		defer Release(encLayer)
		enc := NewTransformerEncoder(encLayer, 2, newLayerNormEps(e.dev, emb, 1e-5, e.dt))
		defer Release(enc)
		decLayer := NewTransformerDecoderLayer(e.dev, emb, heads, lc, gen)
		defer Release(decLayer)
		dec := NewTransformerDecoder(decLayer, 2, nil)
		defer Release(dec)

		q := e.constant(randn(80, l*n*emb, 1), l, n, emb)
		k := e.constant(randn(81, s*n*5, 1), s, n, 5)
		v := e.constant(randn(82, s*n*emb, 1), s, n, emb)
		mem := e.constant(randn(83, s*n*emb, 1), s, n, emb)
		floatMask := e.constant(randn(84, n*heads*l*s, 1), n*heads, l, s)
		boolMask := e.labels([]int32{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, l, s)
		selfMask := graph.Constant(SquareSubsequentMask(e.dev, e.dt, l))
		pad := e.labels([]int32{0, 0, 0, 1, 0, 0, 0, 0}, n, s)
		tgtPad := e.labels([]int32{0, 0, 1, 0, 0, 0}, n, l)
		defer releaseValues(q, k, v, mem, floatMask, boolMask, selfMask, pad, tgtPad)
		quietGC(t, e.dev)
		base := e.dev.Stats().LiveBytes
		for range 2 {
			for _, am := range []*graph.Value{floatMask, boolMask} {
				out, w := mha.Attend(q, k, v, AttentionOptions{AttnMask: am, KeyPaddingMask: pad, NeedWeights: true})
				y := enc.Encode(q, EncoderMasks{Mask: selfMask, KeyPaddingMask: tgtPad})
				z := dec.Decode(q, mem, DecoderMasks{TgtMask: selfMask, MemoryMask: boolMask, TgtKeyPaddingMask: tgtPad, MemoryKeyPaddingMask: pad})
				parts := []*graph.Value{out.Sum(nil, false), w.Sum(nil, false), y.Sum(nil, false), z.Sum(nil, false)}
				loss := graph.Add(parts[0], parts[1])
				for _, p := range parts[2:] {
					next := graph.Add(loss, p)
					loss.Release()
					loss = next
				}
				require.NoError(t, graph.Backward(loss))
				releaseValues(append(parts, loss, out, w, y, z)...)
			}
			for _, m := range []Module{mha, enc, dec} {
				ZeroGrad(m)
			}
			require.Equal(t, base, e.dev.Stats().LiveBytes)
		}
	})
}
