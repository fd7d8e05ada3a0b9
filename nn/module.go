package nn

import (
	"github.com/webtensor/webtensor/graph"
)

// Module is a layer, or a network of layers: something with a forward
// computation and named state.
//
// Layers with several inputs or outputs (masks, a decoder's memory,
// attention weights, recurrent state) keep Forward(x) as the single-input
// call with PyTorch's defaults (self-attention without masks, for
// example) and add a typed method for the rest, named for what it does,
// with an options struct for the optional arguments:
// MultiHeadAttention.Attend(q, k, v, AttentionOptions) (out, weights),
// TransformerEncoder.Encode(src, EncoderMasks),
// TransformerDecoder.Decode(tgt, memory, DecoderMasks). Where PyTorch has
// no default for a required input (a decoder's memory), Forward panics
// with an error naming the typed method.
type Module interface {
	// Forward computes the module's output for x, recording it for
	// autodiff when a parameter (or x) requires a gradient.
	Forward(x *graph.Value) *graph.Value
	// Parameters lists the trainable values, children's included, named
	// by dotted paths as PyTorch's state_dict names them ("0.weight",
	// "attn.q.bias"), in a stable order.
	Parameters() []Named
	// Buffers lists the state that is saved but not trained (BatchNorm's
	// running statistics), named and ordered as Parameters.
	Buffers() []Named
	// SetTraining switches training behaviour (Dropout, BatchNorm's batch
	// statistics) on or off, children included.
	SetTraining(training bool)
	// Training reports the mode.
	Training() bool
}

// Named is a module's value with its state-dict name. Parameters require a
// gradient; buffers are graph.Constant values.
type Named struct {
	Name  string
	Value *graph.Value
}
