package nn

import (
	"math"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// MultiHeadAttention is torch.nn.MultiheadAttention (PyTorch 1.13): scaled
// dot-product attention of queries over keys and values, split into
// NumHeads heads, with PyTorch's state names, in state_dict order:
//
//	in_proj_weight  [3E, E]      query, key and value projections stacked by rows
//	                             (when key and value have E features), or
//	q_proj_weight   [E, E]       separate projections (KDim or VDim ≠ E)
//	k_proj_weight   [E, KDim]
//	v_proj_weight   [E, VDim]
//	in_proj_bias    [3E]         (absent with NoBias)
//	bias_k, bias_v  [1, 1, E]    (AddBiasKV only)
//	out_proj.weight [E, E]
//	out_proj.bias   [E]          (absent with NoBias)
//
// Head h sees features h·E/H … (h+1)·E/H − 1 of each projection. Inputs
// are [L, N, E] (sequence first, PyTorch's default) or, with BatchFirst,
// [N, L, E]; 2-D inputs are one unbatched sequence, as in PyTorch.
//
// Forward is self-attention without masks; Attend takes distinct query,
// key and value, masks, and returns the attention weights.
type MultiHeadAttention struct {
	Base
	InProjWeight                          *graph.Value
	QProjWeight, KProjWeight, VProjWeight *graph.Value
	InProjBias                            *graph.Value
	BiasK, BiasV                          *graph.Value
	OutProj                               *Linear

	EmbedDim, NumHeads, KDim, VDim int
	// Dropout is the probability of dropping an attention weight in
	// training; Gen draws the masks.
	Dropout float64
	Gen     *tensor.Generator
	// BatchFirst makes inputs and outputs [N, L, E] instead of [L, N, E].
	BatchFirst bool
	// AddZeroAttn appends a zero key and value to every sequence.
	AddZeroAttn bool
}

// MultiHeadAttentionConfig holds torch.nn.MultiheadAttention's keyword
// arguments. Its zero value is PyTorch's defaults: bias, no extra keys,
// key and value of the embedding size, sequence-first layout, no dropout.
type MultiHeadAttentionConfig struct {
	Dropout     float64
	NoBias      bool // bias=False
	AddBiasKV   bool
	AddZeroAttn bool
	KDim, VDim  int // 0: the embedding size
	BatchFirst  bool
	// DType is the parameters' dtype (PyTorch's dtype=; Float32 is the
	// zero value).
	DType tensor.DType
}

// NewMultiHeadAttention returns attention over embed features split into
// heads, initialized as PyTorch's: the input projections Xavier-uniform,
// the output projection's weight U(±1/√embed), both biases 0, bias_k and
// bias_v Xavier-normal. gen draws the weights and the dropout masks.
func NewMultiHeadAttention(dev *tensor.Device, embed, heads int, cfg MultiHeadAttentionConfig, gen *tensor.Generator) *MultiHeadAttention {
	const op = "NewMultiHeadAttention"
	if embed <= 0 || heads <= 0 || embed%heads != 0 {
		misuse(op, "embed size %d must be a positive multiple of the head count %d", embed, heads)
	}
	if cfg.KDim < 0 || cfg.VDim < 0 {
		misuse(op, "negative kdim %d or vdim %d", cfg.KDim, cfg.VDim)
	}
	if !(cfg.Dropout >= 0 && cfg.Dropout <= 1) {
		misuse(op, "dropout probability %v is outside [0, 1]", cfg.Dropout)
	}
	m := &MultiHeadAttention{EmbedDim: embed, NumHeads: heads, KDim: cfg.KDim, VDim: cfg.VDim,
		Dropout: cfg.Dropout, Gen: gen, BatchFirst: cfg.BatchFirst, AddZeroAttn: cfg.AddZeroAttn}
	if m.KDim == 0 {
		m.KDim = embed
	}
	if m.VDim == 0 {
		m.VDim = embed
	}
	// Registration order is PyTorch's state_dict order: the module's own
	// parameters, then out_proj.
	if m.KDim == embed && m.VDim == embed {
		m.InProjWeight = AddParam(m, "in_proj_weight", graph.Param(tensor.Full(dev, cfg.DType, 0, 3*embed, embed)))
		XavierUniform(m.InProjWeight, 1, gen)
	} else {
		m.QProjWeight = AddParam(m, "q_proj_weight", graph.Param(tensor.Full(dev, cfg.DType, 0, embed, embed)))
		m.KProjWeight = AddParam(m, "k_proj_weight", graph.Param(tensor.Full(dev, cfg.DType, 0, embed, m.KDim)))
		m.VProjWeight = AddParam(m, "v_proj_weight", graph.Param(tensor.Full(dev, cfg.DType, 0, embed, m.VDim)))
		for _, w := range []*graph.Value{m.QProjWeight, m.KProjWeight, m.VProjWeight} {
			XavierUniform(w, 1, gen)
		}
	}
	if !cfg.NoBias {
		m.InProjBias = AddParam(m, "in_proj_bias", graph.Param(tensor.Full(dev, cfg.DType, 0, 3*embed)))
	}
	if cfg.AddBiasKV {
		m.BiasK = AddParam(m, "bias_k", graph.Param(tensor.Full(dev, cfg.DType, 0, 1, 1, embed)))
		m.BiasV = AddParam(m, "bias_v", graph.Param(tensor.Full(dev, cfg.DType, 0, 1, 1, embed)))
	}
	m.OutProj = Add(m, "out_proj", castLinear(NewLinear(dev, embed, embed, !cfg.NoBias, gen), cfg.DType))
	if m.OutProj.Bias != nil {
		Fill(m.OutProj.Bias, 0)
	}
	if cfg.AddBiasKV {
		XavierNormal(m.BiasK, 1, gen)
		XavierNormal(m.BiasV, 1, gen)
	}
	return m
}

// AttentionOptions are the optional arguments of MultiHeadAttention.Attend
// (torch.nn.MultiheadAttention.forward's keywords).
//
// A mask is either additive, of the attention's floating dtype (added to
// the scores before the softmax), or Int32, where a nonzero element means
// "not allowed", as PyTorch's True in a bool mask: such a position's score
// becomes MaskedScore (finite, see there) where PyTorch's is −∞.
type AttentionOptions struct {
	// AttnMask is [L, S] (the same for every batch element and head) or
	// [N·NumHeads, L, S] (batch-major, as PyTorch's attn_mask).
	AttnMask *graph.Value
	// KeyPaddingMask is [N, S]: the keys each batch element ignores.
	KeyPaddingMask *graph.Value
	// NeedWeights makes Attend return the attention weights (after
	// dropout, as PyTorch's): [N, L, S] averaged over heads, or
	// [N, NumHeads, L, S] with PerHeadWeights (average_attn_weights=False).
	// PyTorch's need_weights defaults to True; here the zero value skips
	// the weights, which most callers (the Transformer layers) discard.
	NeedWeights    bool
	PerHeadWeights bool
}

// MaskedScore is the score of a position an Int32 mask masks (and the
// masked value of SquareSubsequentMask): finite, because WGSL leaves
// infinities to the implementation, and so low that its softmax weight is
// exactly 0 next to any unmasked score. A query whose every key is masked
// by Int32 masks therefore gets uniform weights over its keys (and the
// mean of the values), where PyTorch 1.13's −∞ gives NaN — a deliberate
// difference: one padded row does not poison a whole batch. Additive
// masks are added as given: an additive −∞ mask gives PyTorch's NaN on
// the CPU (and is undefined on WebGPU).
const MaskedScore = -1e9

// Forward is self-attention with PyTorch's defaults: Attend(x, x, x) with
// no mask, the weights not computed.
func (m *MultiHeadAttention) Forward(x *graph.Value) *graph.Value {
	out, _ := m.Attend(x, x, x, AttentionOptions{})
	return out
}

// Attend returns the attention of queries q over keys k and values v,
// as MultiheadAttention(q, k, v, ...): q is [L, N, E] and k, v are
// [S, N, KDim] and [S, N, VDim] ([N, L, E] … with BatchFirst), or one
// unbatched sequence: q [L, E], k [S, KDim], v [S, VDim], with
// key_padding_mask [S] and attn_mask [L, S] or [NumHeads, L, S]. out has
// q's layout; weights is nil unless o.NeedWeights (unbatched: [L, S] or
// [NumHeads, L, S]). Passing the same value as q, k and v projects it
// with one matrix product.
func (m *MultiHeadAttention) Attend(q, k, v *graph.Value, o AttentionOptions) (out, weights *graph.Value) {
	if len(q.Shape()) == 2 {
		return m.attendUnbatched(q, k, v, o)
	}
	return m.attendBatched(q, k, v, o)
}

// attendUnbatched is Attend of one sequence, as PyTorch's unbatched
// inputs: q [L, E], k [S, KDim], v [S, VDim], key_padding_mask [S],
// attn_mask [L, S] or [NumHeads, L, S]; out [L, E], weights [L, S] or
// [NumHeads, L, S]. It runs as a batch of one.
func (m *MultiHeadAttention) attendUnbatched(q, k, v *graph.Value, o AttentionOptions) (out, weights *graph.Value) {
	const op = "MultiHeadAttention"
	if len(k.Shape()) != 2 || len(v.Shape()) != 2 {
		misuse(op, "unbatched query %v needs unbatched key and value, got %v and %v", q.Shape(), k.Shape(), v.Shape())
	}
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	if qs[1] != m.EmbedDim || ks[1] != m.KDim || vs[1] != m.VDim || ks[0] != vs[0] {
		misuse(op, "unbatched query %v, key %v and value %v are not [L, %d], [S, %d] and [S, %d]", qs, ks, vs, m.EmbedDim, m.KDim, m.VDim)
	}
	ax := m.batchAxis()
	batch := func(x *graph.Value) *graph.Value { return x.Unsqueeze(ax) }
	// Batch each distinct input once, so that self-attention keeps its
	// fused projection.
	bq := batch(q)
	made := []*graph.Value{bq}
	bk, bv := bq, bq
	if k != q {
		bk = batch(k)
		made = append(made, bk)
	}
	switch {
	case v == k:
		bv = bk
	case v != q:
		bv = batch(v)
		made = append(made, bv)
	}
	defer releaseValues(made...)
	if o.KeyPaddingMask != nil {
		if sh := o.KeyPaddingMask.Shape(); len(sh) != 1 {
			misuse(op, "unbatched key_padding_mask %v is not [S]", sh)
		}
		o.KeyPaddingMask = o.KeyPaddingMask.Unsqueeze(0)
		defer o.KeyPaddingMask.Release()
	}
	bo, bw := m.attendBatched(bq, bk, bv, o)
	defer releaseValues(bo, bw)
	out = bo.Squeeze(ax)
	if bw != nil {
		weights = bw.Squeeze(0)
	}
	return out, weights
}

func (m *MultiHeadAttention) attendBatched(q, k, v *graph.Value, o AttentionOptions) (out, weights *graph.Value) {
	const op = "MultiHeadAttention"
	m.checkInput("query", q, m.EmbedDim)
	m.checkInput("key", k, m.KDim)
	m.checkInput("value", v, m.VDim)
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	if ks[0] != vs[0] || ks[1] != vs[1] || qs[m.batchAxis()] != ks[m.batchAxis()] {
		misuse(op, "query %v, key %v and value %v disagree in batch or key length (batch_first=%v)", qs, ks, vs, m.BatchFirst)
	}
	if q.DType() != m.OutProj.Weight.DType() || k.DType() != q.DType() || v.DType() != q.DType() {
		misuse(op, "query %v, key %v and value %v must have the weights' dtype %v", q.DType(), k.DType(), v.DType(), m.OutProj.Weight.DType())
	}
	var qp, kp, vp *graph.Value
	if m.InProjWeight != nil && q == k && k == v {
		// Self-attention: the three projections as one matrix product.
		qkv := linear(op, q, m.InProjWeight, m.InProjBias)
		parts := qkv.Split(2, m.EmbedDim)
		qkv.Release()
		qp, kp, vp = parts[0], parts[1], parts[2]
	} else {
		qp, kp, vp = m.project(q, 0), m.project(k, 1), m.project(v, 2)
	}
	defer func() { releaseValues(qp, kp, vp) }()
	if !m.BatchFirst { // [L, N, E] → [N, L, E]
		qp, kp, vp = swapReleasing(qp), swapReleasing(kp), swapReleasing(vp)
	}
	n, l, s := qp.Shape()[0], qp.Shape()[1], kp.Shape()[1]
	mask := m.mask(o, n, l, s, qp.DType())
	extra := 0
	if m.BiasK != nil {
		kp, vp = appendKey(kp, m.BiasK, n), appendKey(vp, m.BiasV, n)
		extra++
	}
	if m.AddZeroAttn {
		z := graph.Constant(tensor.Full(qp.Device(), qp.DType(), 0, 1, 1, m.EmbedDim))
		kp, vp = appendKey(kp, z, n), appendKey(vp, z, n)
		z.Release()
		extra++
	}
	if extra > 0 {
		mask.pad(extra)
	}
	defer mask.release()
	ctx, w := m.scaledDotProduct(qp, kp, vp, mask)
	defer ctx.Release()
	merged := ctx.Reshape(n, l, m.EmbedDim)
	defer merged.Release()
	if !m.BatchFirst {
		t := merged.Transpose(0, 1)
		defer t.Release()
		out = m.OutProj.Forward(t)
	} else {
		out = m.OutProj.Forward(merged)
	}
	if !o.NeedWeights {
		w.Release()
		return out, nil
	}
	if o.PerHeadWeights {
		return out, w
	}
	defer w.Release()
	return out, w.Mean([]int{1}, false)
}

func (m *MultiHeadAttention) batchAxis() int {
	if m.BatchFirst {
		return 0
	}
	return 1
}

func (m *MultiHeadAttention) checkInput(name string, x *graph.Value, features int) {
	if s := x.Shape(); len(s) != 3 || s[2] != features {
		layout := "[L, N, %d]"
		if m.BatchFirst {
			layout = "[N, L, %d]"
		}
		misuse("MultiHeadAttention", "%s %v is not "+layout, name, s, features)
	}
}

// project applies projection i (0 query, 1 key, 2 value) to x.
func (m *MultiHeadAttention) project(x *graph.Value, i int) *graph.Value {
	e := m.EmbedDim
	var b *graph.Value
	if m.InProjBias != nil {
		b = m.InProjBias.Slice(0, i*e, (i+1)*e, 1)
		defer b.Release()
	}
	w := [3]*graph.Value{m.QProjWeight, m.KProjWeight, m.VProjWeight}[i]
	if m.InProjWeight != nil {
		w = m.InProjWeight.Slice(0, i*e, (i+1)*e, 1)
		defer w.Release()
	}
	return linear("MultiHeadAttention", x, w, b)
}

// swapReleasing returns x with its first two axes swapped and releases x.
func swapReleasing(x *graph.Value) *graph.Value {
	defer x.Release()
	return x.Transpose(0, 1)
}

// appendKey returns x [N, S, E] with extra [1, 1, E] appended to every
// sequence, and releases x.
func appendKey(x, extra *graph.Value, n int) *graph.Value {
	defer x.Release()
	e := extra.Expand(n, 1, extra.Shape()[2])
	defer e.Release()
	return graph.Concat(1, x, e)
}

// scaledDotProduct returns the heads' context [N, L, H, D] and the weights [N, H, L, S] of projected q [N, L, E] and
// k, v [N, S, E], with mask applied to the scores.
func (m *MultiHeadAttention) scaledDotProduct(q, k, v *graph.Value, mask scoreMask) (ctx, weights *graph.Value) {
	h, d := m.NumHeads, m.EmbedDim/m.NumHeads
	n, l, s := q.Shape()[0], q.Shape()[1], k.Shape()[1]
	heads := func(x *graph.Value, l int) *graph.Value { // [N, L, E] → [N, H, L, D]
		r := x.Reshape(n, l, h, d)
		defer r.Release()
		return r.Transpose(1, 2)
	}
	qh, kh, vh := heads(q, l), heads(k, s), heads(v, s)
	defer releaseValues(qh, kh, vh)
	// Scaling q rather than the scores, as PyTorch, costs L·D products
	// instead of L·S.
	qs := qh.MulScalar(1 / math.Sqrt(float64(d)))
	defer qs.Release()
	khT := kh.Transpose(2, 3)
	defer khT.Release()
	scores := mask.apply(graph.MatMul(qs, khT)) // [N, H, L, S]
	weights = scores.Softmax(-1)
	scores.Release()
	if m.Dropout > 0 && m.Training() {
		dropped := graph.Dropout(weights, m.Dropout, true, m.Gen)
		weights.Release()
		weights = dropped
	}
	c := graph.MatMul(weights, vh) // [N, H, L, D]
	defer c.Release()
	return c.Transpose(1, 2), weights
}

// castLinear gives l's parameters dtype and returns l.
func castLinear(l *Linear, dtype tensor.DType) *Linear {
	l.Weight, l.Bias = castParam(l.Weight, dtype), castParam(l.Bias, dtype)
	return l
}

// castParam returns p as a parameter of dtype, releasing p if it had
// another.
func castParam(p *graph.Value, dtype tensor.DType) *graph.Value {
	if p == nil || p.DType() == dtype {
		return p
	}
	defer p.Release()
	return graph.Param(p.Tensor().Cast(dtype))
}

func releaseValues(vs ...*graph.Value) {
	for _, v := range vs {
		if v != nil {
			v.Release()
		}
	}
}
