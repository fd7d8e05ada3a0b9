package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// TransformerLayerConfig holds the keyword arguments of PyTorch's
// TransformerEncoderLayer and TransformerDecoderLayer. Zero fields take
// PyTorch's defaults, except Dropout: its zero value means no dropout
// (PyTorch's default is 0.1).
type TransformerLayerConfig struct {
	DimFeedforward int     // 0: 2048
	Dropout        float64 // on the attention weights and after each block
	// Activation sits between linear1 and linear2: nil is ReLU{}, GELU{}
	// is activation="gelu", any other Module is used as given (and, with
	// parameters, registered as the child "activation" as in PyTorch, but
	// shared by the clones of a stack, where PyTorch deep-copies it).
	Activation   Module
	LayerNormEps float64      // 0: 1e-5
	BatchFirst   bool         // [N, L, E] instead of [L, N, E]
	NormFirst    bool         // pre-norm; PyTorch's default is post-norm
	DType        tensor.DType // of the parameters; Float32 is the zero value
}

func (c TransformerLayerConfig) withDefaults() TransformerLayerConfig {
	if c.DimFeedforward == 0 {
		c.DimFeedforward = 2048
	}
	if c.Activation == nil {
		c.Activation = ReLU{}
	}
	if c.LayerNormEps == 0 {
		c.LayerNormEps = 1e-5
	}
	return c
}

// EncoderMasks are the masks of a Transformer encoder: src_mask and
// src_key_padding_mask, as AttentionOptions' AttnMask and KeyPaddingMask.
type EncoderMasks struct {
	Mask, KeyPaddingMask *graph.Value
}

// DecoderMasks are the masks of a Transformer decoder, as PyTorch's
// tgt_mask, memory_mask, tgt_key_padding_mask and
// memory_key_padding_mask (see AttentionOptions for their kinds).
type DecoderMasks struct {
	TgtMask, MemoryMask                     *graph.Value
	TgtKeyPaddingMask, MemoryKeyPaddingMask *graph.Value
}

// TransformerEncoderLayer is torch.nn.TransformerEncoderLayer (1.13), with
// its state names ("self_attn.in_proj_weight", "linear1.weight",
// "norm2.bias" …). Post-norm (PyTorch's default):
//
//	x = Norm1(x + Dropout1(SelfAttn(x)))
//	x = Norm2(x + Dropout2(Linear2(Dropout(Activation(Linear1(x))))))
//
// and with NormFirst, pre-norm:
//
//	x = x + Dropout1(SelfAttn(Norm1(x)))
//	x = x + Dropout2(Linear2(Dropout(Activation(Linear1(Norm2(x))))))
type TransformerEncoderLayer struct {
	Base
	SelfAttn                    *MultiHeadAttention
	Linear1, Linear2            *Linear
	Dropout, Dropout1, Dropout2 *Dropout
	Norm1, Norm2                *LayerNorm
	Activation                  Module
	NormFirst                   bool
}

// TransformerEncoderBlock is the pre-norm, batch-first encoder layer this
// package had before TransformerEncoderLayer.
//
// Deprecated: use TransformerEncoderLayer with NormFirst and BatchFirst.
type TransformerEncoderBlock = TransformerEncoderLayer

// NewTransformerEncoderBlock returns NewTransformerEncoderLayer with
// NormFirst and BatchFirst.
//
// Deprecated: use NewTransformerEncoderLayer.
func NewTransformerEncoderBlock(dev *tensor.Device, embed, heads, ffn int, dropout float64, gen *tensor.Generator) *TransformerEncoderBlock {
	return NewTransformerEncoderLayer(dev, embed, heads, TransformerLayerConfig{
		DimFeedforward: ffn, Dropout: dropout, NormFirst: true, BatchFirst: true}, gen)
}

// NewTransformerEncoderLayer returns an encoder layer of dModel features
// and nhead heads, its children created (and initialized from gen) in
// PyTorch's order; gen also draws the dropout masks.
func NewTransformerEncoderLayer(dev *tensor.Device, dModel, nhead int, cfg TransformerLayerConfig, gen *tensor.Generator) *TransformerEncoderLayer {
	cfg = cfg.withDefaults()
	l := &TransformerEncoderLayer{NormFirst: cfg.NormFirst}
	l.SelfAttn = Add(l, "self_attn", NewMultiHeadAttention(dev, dModel, nhead,
		MultiHeadAttentionConfig{Dropout: cfg.Dropout, BatchFirst: cfg.BatchFirst, DType: cfg.DType}, gen))
	l.Linear1 = Add(l, "linear1", castLinear(NewLinear(dev, dModel, cfg.DimFeedforward, true, gen), cfg.DType))
	l.Dropout = Add(l, "dropout", NewDropout(cfg.Dropout, gen))
	l.Linear2 = Add(l, "linear2", castLinear(NewLinear(dev, cfg.DimFeedforward, dModel, true, gen), cfg.DType))
	l.Norm1 = Add(l, "norm1", newLayerNormEps(dev, dModel, cfg.LayerNormEps, cfg.DType))
	l.Norm2 = Add(l, "norm2", newLayerNormEps(dev, dModel, cfg.LayerNormEps, cfg.DType))
	l.Dropout1 = Add(l, "dropout1", NewDropout(cfg.Dropout, gen))
	l.Dropout2 = Add(l, "dropout2", NewDropout(cfg.Dropout, gen))
	l.Activation = Add(l, "activation", cfg.Activation)
	return l
}

// config is the configuration of a layer like l as it is now: what a
// stack's copies are built with.
func (l *TransformerEncoderLayer) config() TransformerLayerConfig {
	return layerConfig(l.SelfAttn, l.Linear1, l.Dropout, l.Norm1, l.Activation, l.NormFirst)
}

func (l *TransformerDecoderLayer) config() TransformerLayerConfig {
	return layerConfig(l.SelfAttn, l.Linear1, l.Dropout, l.Norm1, l.Activation, l.NormFirst)
}

func layerConfig(a *MultiHeadAttention, l1 *Linear, d *Dropout, n *LayerNorm, act Module, normFirst bool) TransformerLayerConfig {
	return TransformerLayerConfig{DimFeedforward: l1.Weight.Shape()[0], Dropout: d.P, Activation: act,
		LayerNormEps: n.Eps, BatchFirst: a.BatchFirst, NormFirst: normFirst, DType: l1.Weight.DType()}
}

func newLayerNormEps(dev *tensor.Device, d int, eps float64, dtype tensor.DType) *LayerNorm {
	n := NewLayerNorm(dev, []int{d})
	n.Eps = eps
	n.Weight, n.Bias = castParam(n.Weight, dtype), castParam(n.Bias, dtype)
	return n
}

// Forward is Encode(x) without masks.
func (l *TransformerEncoderLayer) Forward(x *graph.Value) *graph.Value {
	return l.Encode(x, EncoderMasks{})
}

// Encode applies the layer to src ([L, N, E], or [N, L, E] with
// BatchFirst) under the masks, as TransformerEncoderLayer(src, src_mask,
// src_key_padding_mask).
func (l *TransformerEncoderLayer) Encode(src *graph.Value, o EncoderMasks) *graph.Value {
	sa := func(x *graph.Value) *graph.Value {
		a, _ := l.SelfAttn.Attend(x, x, x, AttentionOptions{AttnMask: o.Mask, KeyPaddingMask: o.KeyPaddingMask})
		defer a.Release()
		return l.Dropout1.Forward(a)
	}
	x1 := sublayer(src, l.NormFirst, l.Norm1, sa)
	defer x1.Release()
	return sublayer(x1, l.NormFirst, l.Norm2, l.feedForward(l.Dropout2))
}

// feedForward is _ff_block: out(Linear2(Dropout(Activation(Linear1(x))))).
func (l *TransformerEncoderLayer) feedForward(out *Dropout) func(*graph.Value) *graph.Value {
	return feedForward(l.Linear1, l.Activation, l.Dropout, l.Linear2, out)
}

func feedForward(mods ...Module) func(*graph.Value) *graph.Value {
	return func(x *graph.Value) *graph.Value {
		h := x
		for _, m := range mods {
			next := m.Forward(h)
			if h != x && h != next {
				h.Release()
			}
			h = next
		}
		return h
	}
}

// sublayer is one residual block: x + f(norm(x)) pre-norm, norm(x + f(x))
// post-norm.
func sublayer(x *graph.Value, normFirst bool, norm *LayerNorm, f func(*graph.Value) *graph.Value) *graph.Value {
	if normFirst {
		h := norm.Forward(x)
		defer h.Release()
		y := f(h)
		defer y.Release()
		return graph.Add(x, y)
	}
	y := f(x)
	defer y.Release()
	s := graph.Add(x, y)
	defer s.Release()
	return norm.Forward(s)
}

// TransformerDecoderLayer is torch.nn.TransformerDecoderLayer (1.13), with
// its state names ("self_attn.…", "multihead_attn.…", "linear1.…",
// "norm1.…" to "norm3.…"). Post-norm (PyTorch's default):
//
//	x = Norm1(x + Dropout1(SelfAttn(x, x, x, tgt masks)))
//	x = Norm2(x + Dropout2(MultiheadAttn(x, memory, memory, memory masks)))
//	x = Norm3(x + Dropout3(Linear2(Dropout(Activation(Linear1(x))))))
//
// and with NormFirst each block is x + Block(Norm(x)).
type TransformerDecoderLayer struct {
	Base
	SelfAttn, MultiheadAttn               *MultiHeadAttention
	Linear1, Linear2                      *Linear
	Dropout, Dropout1, Dropout2, Dropout3 *Dropout
	Norm1, Norm2, Norm3                   *LayerNorm
	Activation                            Module
	NormFirst                             bool
}

// NewTransformerDecoderLayer returns a decoder layer of dModel features
// and nhead heads, its children created in PyTorch's order.
func NewTransformerDecoderLayer(dev *tensor.Device, dModel, nhead int, cfg TransformerLayerConfig, gen *tensor.Generator) *TransformerDecoderLayer {
	cfg = cfg.withDefaults()
	l := &TransformerDecoderLayer{NormFirst: cfg.NormFirst}
	mha := MultiHeadAttentionConfig{Dropout: cfg.Dropout, BatchFirst: cfg.BatchFirst, DType: cfg.DType}
	l.SelfAttn = Add(l, "self_attn", NewMultiHeadAttention(dev, dModel, nhead, mha, gen))
	l.MultiheadAttn = Add(l, "multihead_attn", NewMultiHeadAttention(dev, dModel, nhead, mha, gen))
	l.Linear1 = Add(l, "linear1", castLinear(NewLinear(dev, dModel, cfg.DimFeedforward, true, gen), cfg.DType))
	l.Dropout = Add(l, "dropout", NewDropout(cfg.Dropout, gen))
	l.Linear2 = Add(l, "linear2", castLinear(NewLinear(dev, cfg.DimFeedforward, dModel, true, gen), cfg.DType))
	l.Norm1 = Add(l, "norm1", newLayerNormEps(dev, dModel, cfg.LayerNormEps, cfg.DType))
	l.Norm2 = Add(l, "norm2", newLayerNormEps(dev, dModel, cfg.LayerNormEps, cfg.DType))
	l.Norm3 = Add(l, "norm3", newLayerNormEps(dev, dModel, cfg.LayerNormEps, cfg.DType))
	l.Dropout1 = Add(l, "dropout1", NewDropout(cfg.Dropout, gen))
	l.Dropout2 = Add(l, "dropout2", NewDropout(cfg.Dropout, gen))
	l.Dropout3 = Add(l, "dropout3", NewDropout(cfg.Dropout, gen))
	l.Activation = Add(l, "activation", cfg.Activation)
	return l
}

// Forward panics: a decoder layer needs the encoder's memory, which has no
// default in PyTorch either. Use Decode.
func (l *TransformerDecoderLayer) Forward(*graph.Value) *graph.Value {
	misuse("TransformerDecoderLayer.Forward", "a decoder needs memory: call Decode(tgt, memory, masks)")
	return nil
}

// Decode applies the layer to tgt ([T, N, E], or [N, T, E] with
// BatchFirst) attending to memory ([S, N, E] or [N, S, E]), as
// TransformerDecoderLayer(tgt, memory, tgt_mask, memory_mask,
// tgt_key_padding_mask, memory_key_padding_mask).
func (l *TransformerDecoderLayer) Decode(tgt, memory *graph.Value, o DecoderMasks) *graph.Value {
	sa := func(x *graph.Value) *graph.Value {
		a, _ := l.SelfAttn.Attend(x, x, x, AttentionOptions{AttnMask: o.TgtMask, KeyPaddingMask: o.TgtKeyPaddingMask})
		defer a.Release()
		return l.Dropout1.Forward(a)
	}
	ca := func(x *graph.Value) *graph.Value {
		a, _ := l.MultiheadAttn.Attend(x, memory, memory, AttentionOptions{AttnMask: o.MemoryMask, KeyPaddingMask: o.MemoryKeyPaddingMask})
		defer a.Release()
		return l.Dropout2.Forward(a)
	}
	x1 := sublayer(tgt, l.NormFirst, l.Norm1, sa)
	defer x1.Release()
	x2 := sublayer(x1, l.NormFirst, l.Norm2, ca)
	defer x2.Release()
	return sublayer(x2, l.NormFirst, l.Norm3, feedForward(l.Linear1, l.Activation, l.Dropout, l.Linear2, l.Dropout3))
}
