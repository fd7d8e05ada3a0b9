package nn

import (
	"math"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// MultiHeadAttention is multi-head scaled dot-product attention over
// batch-first sequences, as torch.nn.MultiheadAttention with
// batch_first=True and its state names:
//
//	in_proj_weight  [3E, E]  query, key and value projections, stacked by rows
//	in_proj_bias    [3E]
//	out_proj.weight [E, E]
//	out_proj.bias   [E]
//
// Head h sees features h·E/H … (h+1)·E/H − 1 of each projection. There is
// no dropout on the attention weights.
type MultiHeadAttention struct {
	InProjWeight *graph.Value
	InProjBias   *graph.Value
	OutProj      *Linear
	Heads        int
	// Causal masks every key after the query's position (an
	// autoregressive decoder's mask); query and key lengths must then
	// agree.
	Causal   bool
	training bool
}

// NewMultiHeadAttention returns attention over embed features split into
// heads, initialized as PyTorch's: in_proj_weight Xavier-uniform, the
// output projection's weight U(±1/√embed), both biases 0.
func NewMultiHeadAttention(dev *tensor.Device, embed, heads int, gen *tensor.Generator) *MultiHeadAttention {
	if embed <= 0 || heads <= 0 || embed%heads != 0 {
		misuse("NewMultiHeadAttention", "embed size %d must be a positive multiple of the head count %d", embed, heads)
	}
	m := &MultiHeadAttention{
		InProjWeight: graph.Param(tensor.Zeros(dev, 3*embed, embed)),
		InProjBias:   fullParam(dev, 0, 3*embed),
		Heads:        heads,
		training:     true,
	}
	XavierUniform(m.InProjWeight, 1, gen)
	m.OutProj = NewLinear(dev, embed, embed, true, gen)
	Fill(m.OutProj.Bias, 0)
	return m
}

func (m *MultiHeadAttention) embed() int { return m.InProjWeight.Shape()[1] }

// Forward is self-attention: Attend(x, x, x) for x [N, L, E], with the
// three projections done as one matrix product.
func (m *MultiHeadAttention) Forward(x *graph.Value) *graph.Value {
	e := m.embed()
	m.checkInput("query", x)
	qkv := linear("MultiHeadAttention", x, m.InProjWeight, m.InProjBias)
	defer qkv.Release()
	parts := qkv.Split(2, e)
	defer releaseValues(parts...)
	return m.attend(parts[0], parts[1], parts[2])
}

// Attend returns the attention of queries q [N, Lq, E] over keys k and
// values v [N, Lk, E], as MultiheadAttention(q, k, v) with
// need_weights=False: [N, Lq, E].
func (m *MultiHeadAttention) Attend(q, k, v *graph.Value) *graph.Value {
	m.checkInput("query", q)
	m.checkInput("key", k)
	m.checkInput("value", v)
	if ks, vs := k.Shape(), v.Shape(); ks[0] != vs[0] || ks[1] != vs[1] || q.Shape()[0] != ks[0] {
		misuse("MultiHeadAttention", "query %v, key %v and value %v disagree in batch or key length", q.Shape(), ks, vs)
	}
	qp, kp, vp := m.project(q, 0), m.project(k, 1), m.project(v, 2)
	defer releaseValues(qp, kp, vp)
	return m.attend(qp, kp, vp)
}

func (m *MultiHeadAttention) checkInput(name string, x *graph.Value) {
	if s := x.Shape(); len(s) != 3 || s[2] != m.embed() {
		misuse("MultiHeadAttention", "%s %v is not [N, L, %d]", name, s, m.embed())
	}
}

// project applies projection i (0 query, 1 key, 2 value) to x.
func (m *MultiHeadAttention) project(x *graph.Value, i int) *graph.Value {
	e := m.embed()
	w := m.InProjWeight.Slice(0, i*e, (i+1)*e, 1)
	defer w.Release()
	var b *graph.Value
	if m.InProjBias != nil {
		b = m.InProjBias.Slice(0, i*e, (i+1)*e, 1)
		defer b.Release()
	}
	return linear("MultiHeadAttention", x, w, b)
}

// attend is the attention of projected q, k, v [N, L, E], through the
// output projection.
func (m *MultiHeadAttention) attend(q, k, v *graph.Value) *graph.Value {
	e, h := m.embed(), m.Heads
	d := e / h
	n, lq, lk := q.Shape()[0], q.Shape()[1], k.Shape()[1]
	heads := func(x *graph.Value, l int) *graph.Value { // [N, L, E] → [N, H, L, D]
		r := x.Reshape(n, l, h, d)
		defer r.Release()
		return r.Transpose(1, 2)
	}
	qh, kh, vh := heads(q, lq), heads(k, lk), heads(v, lk)
	defer releaseValues(qh, kh, vh)
	// Scaling q rather than the scores, as PyTorch, costs L·D products
	// instead of L².
	qs := qh.MulScalar(1 / math.Sqrt(float64(d)))
	defer qs.Release()
	khT := kh.Transpose(2, 3)
	defer khT.Release()
	scores := graph.MatMul(qs, khT) // [N, H, Lq, Lk]
	defer scores.Release()
	if m.Causal {
		if lq != lk {
			misuse("MultiHeadAttention", "a causal mask needs equal query and key lengths, got %d and %d", lq, lk)
		}
		mask := graph.Constant(causalMask(q.Device(), q.DType(), lq))
		defer mask.Release()
		masked := graph.Add(scores, mask)
		scores.Release()
		scores = masked
	}
	weights := scores.Softmax(-1)
	defer weights.Release()
	ctx := graph.MatMul(weights, vh) // [N, H, Lq, D]
	defer ctx.Release()
	ctxT := ctx.Transpose(1, 2)
	defer ctxT.Release()
	merged := ctxT.Reshape(n, lq, e)
	defer merged.Release()
	return m.OutProj.Forward(merged)
}

// causalMask is [L, L], 0 on and below the diagonal and a large negative
// number above it: finite, because WGSL leaves infinities to the
// implementation, and large enough that exp underflows to 0.
func causalMask(dev *tensor.Device, dtype tensor.DType, l int) *tensor.Tensor {
	data := make([]float32, l*l)
	for i := range l {
		for j := i + 1; j < l; j++ {
			data[i*l+j] = -1e9
		}
	}
	t := tensor.FromFloat32(dev, data, l, l)
	if dtype == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(dtype)
}

// Parameters returns "in_proj_weight", "in_proj_bias", "out_proj.weight"
// and "out_proj.bias".
func (m *MultiHeadAttention) Parameters() []Named {
	return append(named("in_proj_weight", m.InProjWeight, "in_proj_bias", m.InProjBias),
		prefixed("out_proj.", m.OutProj.Parameters())...)
}

// Buffers returns nothing.
func (m *MultiHeadAttention) Buffers() []Named { return nil }

// SetTraining sets the mode (attention itself behaves the same in both).
func (m *MultiHeadAttention) SetTraining(training bool) {
	m.training = training
	m.OutProj.SetTraining(training)
}

// Training reports the mode.
func (m *MultiHeadAttention) Training() bool { return m.training }

// TransformerEncoderBlock is a pre-norm Transformer encoder layer over
// [N, L, E], as torch.nn.TransformerEncoderLayer with norm_first=True and
// batch_first=True, and its state names ("self_attn.in_proj_weight",
// "linear1.weight", "norm2.bias" …):
//
//	x = x + Dropout1(SelfAttn(Norm1(x)))
//	x = x + Dropout2(Linear2(Dropout(Activation(Linear1(Norm2(x))))))
type TransformerEncoderBlock struct {
	SelfAttn                    *MultiHeadAttention
	Linear1, Linear2            *Linear
	Norm1, Norm2                *LayerNorm
	Dropout, Dropout1, Dropout2 *Dropout
	// Activation is ReLU, PyTorch's default; GELU{} is the other common
	// choice.
	Activation Module
	training   bool
}

// NewTransformerEncoderBlock returns a block with the given embedding
// size, head count, feed-forward width and dropout probability,
// initialized as PyTorch's layers (in the order PyTorch creates them).
// The dropout masks come from gen too.
func NewTransformerEncoderBlock(dev *tensor.Device, embed, heads, ffn int, dropout float64, gen *tensor.Generator) *TransformerEncoderBlock {
	b := &TransformerEncoderBlock{training: true, Activation: ReLU{}}
	b.SelfAttn = NewMultiHeadAttention(dev, embed, heads, gen)
	b.Linear1 = NewLinear(dev, embed, ffn, true, gen)
	b.Dropout = NewDropout(dropout, gen)
	b.Linear2 = NewLinear(dev, ffn, embed, true, gen)
	b.Norm1 = NewLayerNorm(dev, []int{embed})
	b.Norm2 = NewLayerNorm(dev, []int{embed})
	b.Dropout1 = NewDropout(dropout, gen)
	b.Dropout2 = NewDropout(dropout, gen)
	return b
}

// Forward applies the block to x [N, L, E].
func (b *TransformerEncoderBlock) Forward(x *graph.Value) *graph.Value {
	x1 := residual(x, b.Norm1, b.SelfAttn, b.Dropout1)
	defer x1.Release()
	return residual(x1, b.Norm2, b.Linear1, b.Activation, b.Dropout, b.Linear2, b.Dropout2)
}

// residual returns x + mods(x), releasing the intermediates.
func residual(x *graph.Value, mods ...Module) *graph.Value {
	h := x
	for _, m := range mods {
		next := m.Forward(h)
		if h != x && h != next {
			h.Release()
		}
		h = next
	}
	if h != x {
		defer h.Release()
	}
	return graph.Add(x, h)
}

func (b *TransformerEncoderBlock) children() []struct {
	name string
	m    Module
} {
	return []struct {
		name string
		m    Module
	}{
		{"self_attn.", b.SelfAttn}, {"linear1.", b.Linear1}, {"dropout.", b.Dropout}, {"linear2.", b.Linear2},
		{"norm1.", b.Norm1}, {"norm2.", b.Norm2}, {"dropout1.", b.Dropout1}, {"dropout2.", b.Dropout2},
		{"activation.", b.Activation},
	}
}

// Parameters returns the children's parameters in PyTorch's order.
func (b *TransformerEncoderBlock) Parameters() []Named {
	var out []Named
	for _, c := range b.children() {
		out = append(out, prefixed(c.name, c.m.Parameters())...)
	}
	return out
}

// Buffers returns the children's buffers (none, with the default
// activation).
func (b *TransformerEncoderBlock) Buffers() []Named {
	var out []Named
	for _, c := range b.children() {
		out = append(out, prefixed(c.name, c.m.Buffers())...)
	}
	return out
}

// SetTraining sets the mode of the block and its children (the dropouts
// act only in training).
func (b *TransformerEncoderBlock) SetTraining(training bool) {
	b.training = training
	for _, c := range b.children() {
		c.m.SetTraining(training)
	}
}

// Training reports the mode.
func (b *TransformerEncoderBlock) Training() bool { return b.training }

func releaseValues(vs ...*graph.Value) {
	for _, v := range vs {
		v.Release()
	}
}
