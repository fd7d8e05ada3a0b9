package nn

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// TransformerEncoder is torch.nn.TransformerEncoder: NumLayers copies of
// an encoder layer applied in turn, then an optional final norm, with
// state names "layers.0.self_attn.in_proj_weight" … "norm.weight".
type TransformerEncoder struct {
	Base
	Layers []*TransformerEncoderLayer
	Norm   *LayerNorm // nil: none
	// Checkpoint runs each layer under gradient checkpointing
	// (graph.Checkpoint, the layer's generators restored for the
	// recomputation): the stack's activations in memory are one layer's
	// and every layer's input, for a second forward pass in backward.
	Checkpoint bool
}

// NewTransformerEncoder returns a stack of numLayers independent copies
// of layer (PyTorch deep-copies it, so every copy starts from layer's
// weights; layer itself is not part of the stack) and the final norm
// (nil for none, which then belongs to the stack).
func NewTransformerEncoder(layer *TransformerEncoderLayer, numLayers int, norm *LayerNorm) *TransformerEncoder {
	if numLayers <= 0 {
		misuse("NewTransformerEncoder", "%d layers", numLayers)
	}
	e := &TransformerEncoder{}
	dev := layer.Linear1.Weight.Device()
	for i := range numLayers {
		c := NewTransformerEncoderLayer(dev, layer.SelfAttn.EmbedDim, layer.SelfAttn.NumHeads, layer.config(), tensor.NewGenerator(0))
		c.Dropout.Gen, c.Dropout1.Gen, c.Dropout2.Gen, c.SelfAttn.Gen = layer.Dropout.Gen, layer.Dropout1.Gen, layer.Dropout2.Gen, layer.SelfAttn.Gen
		copyState("NewTransformerEncoder", c, layer)
		e.Layers = append(e.Layers, Add(e, fmt.Sprintf("layers.%d", i), c))
	}
	if norm != nil {
		e.Norm = Add(e, "norm", norm)
	}
	e.SetTraining(layer.Training())
	return e
}

// copyState makes dst's parameters and buffers copies of src's (dst
// is built with src's config, so names, shapes and dtypes agree).
func copyState(op string, dst, src Module) {
	if err := LoadStateDict(dst, StateDict(src)); err != nil {
		misuse(op, "copying a layer: %v", err)
	}
}

// Forward is Encode(x) without masks.
func (e *TransformerEncoder) Forward(x *graph.Value) *graph.Value {
	return e.Encode(x, EncoderMasks{})
}

// Encode applies every layer under the same masks, then the norm, as
// TransformerEncoder(src, mask, src_key_padding_mask).
func (e *TransformerEncoder) Encode(src *graph.Value, o EncoderMasks) *graph.Value {
	x := src
	for _, l := range e.Layers {
		var next *graph.Value
		if e.Checkpoint {
			next = graph.Checkpoint(func(in []*graph.Value) *graph.Value { return l.Encode(in[0], o) }, []*graph.Value{x}, GeneratorsOf(l)...)
		} else {
			next = l.Encode(x, o)
		}
		if x != src {
			x.Release()
		}
		x = next
	}
	if e.Norm == nil {
		return x
	}
	defer x.Release()
	return e.Norm.Forward(x)
}

// TransformerDecoder is torch.nn.TransformerDecoder: NumLayers copies of a
// decoder layer, then an optional final norm ("layers.N.…", "norm.…").
type TransformerDecoder struct {
	Base
	Layers []*TransformerDecoderLayer
	Norm   *LayerNorm
	// Checkpoint runs each layer under gradient checkpointing, as
	// TransformerEncoder.Checkpoint; the memory is each layer's input too.
	Checkpoint bool
}

// NewTransformerDecoder returns a stack of numLayers copies of layer and
// the final norm (nil for none), as NewTransformerEncoder.
func NewTransformerDecoder(layer *TransformerDecoderLayer, numLayers int, norm *LayerNorm) *TransformerDecoder {
	if numLayers <= 0 {
		misuse("NewTransformerDecoder", "%d layers", numLayers)
	}
	d := &TransformerDecoder{}
	dev := layer.Linear1.Weight.Device()
	for i := range numLayers {
		c := NewTransformerDecoderLayer(dev, layer.SelfAttn.EmbedDim, layer.SelfAttn.NumHeads, layer.config(), tensor.NewGenerator(0))
		c.Dropout.Gen, c.Dropout1.Gen, c.Dropout2.Gen, c.Dropout3.Gen = layer.Dropout.Gen, layer.Dropout1.Gen, layer.Dropout2.Gen, layer.Dropout3.Gen
		c.SelfAttn.Gen, c.MultiheadAttn.Gen = layer.SelfAttn.Gen, layer.MultiheadAttn.Gen
		copyState("NewTransformerDecoder", c, layer)
		d.Layers = append(d.Layers, Add(d, fmt.Sprintf("layers.%d", i), c))
	}
	if norm != nil {
		d.Norm = Add(d, "norm", norm)
	}
	d.SetTraining(layer.Training())
	return d
}

// Forward panics: a decoder needs memory. Use Decode.
func (d *TransformerDecoder) Forward(*graph.Value) *graph.Value {
	misuse("TransformerDecoder.Forward", "a decoder needs memory: call Decode(tgt, memory, masks)")
	return nil
}

// Decode applies every layer to tgt with the same memory and masks, then
// the norm, as TransformerDecoder(tgt, memory, …).
func (d *TransformerDecoder) Decode(tgt, memory *graph.Value, o DecoderMasks) *graph.Value {
	x := tgt
	for _, l := range d.Layers {
		var next *graph.Value
		if d.Checkpoint {
			next = graph.Checkpoint(func(in []*graph.Value) *graph.Value { return l.Decode(in[0], in[1], o) }, []*graph.Value{x, memory}, GeneratorsOf(l)...)
		} else {
			next = l.Decode(x, memory, o)
		}
		if x != tgt {
			x.Release()
		}
		x = next
	}
	if d.Norm == nil {
		return x
	}
	defer x.Release()
	return d.Norm.Forward(x)
}
