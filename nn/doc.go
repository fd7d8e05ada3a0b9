// Package nn builds neural networks from the differentiable operations of
// package graph: layers, losses and the Module interface that ties them
// together. Its subpackages hold the rest of training: optim (optimizers
// whose updates are one fused kernel per parameter on the device), data
// (datasets and batches), checkpoint (safetensors files and streams),
// train (the training loop: metrics, evaluation, checkpoints, early
// stopping, cancellation) and parallel (data parallelism over several
// devices, and over processes and machines on MPI).
//
// # Modules
//
// A Module has a Forward computation and named state: Parameters, which
// require gradients, and Buffers (BatchNorm's running statistics), which
// are saved but not trained. Names follow PyTorch's state_dict ("0.weight",
// "1.running_mean"), so checkpoints line up with PyTorch models of the same
// shape. Layers are plain structs with exported fields; Sequential chains
// them.
//
// Constructors initialize as PyTorch does by default (Linear and Conv2d:
// Kaiming-uniform with a = √5, so U(±1/√fan_in) for weights and biases),
// drawing from a *tensor.Generator, so the same seed gives the same network
// on every device.
//
// # Several inputs or outputs
//
// Forward takes one input. A layer with more (masks, a decoder's memory)
// or more results (attention weights) has a typed method beside it, with
// an options struct whose zero value is PyTorch's defaults; Forward is
// that method with the defaults:
//
//	out, w := mha.Attend(q, k, v, nn.AttentionOptions{KeyPaddingMask: pad, NeedWeights: true})
//	y := enc.Encode(src, nn.EncoderMasks{Mask: causal})
//	z := dec.Decode(tgt, memory, nn.DecoderMasks{TgtMask: causal})
//
// # Attention and Transformers
//
// MultiHeadAttention, TransformerEncoderLayer, TransformerEncoder,
// TransformerDecoderLayer and TransformerDecoder are PyTorch 1.13's
// layers with its state-dict names, options (batch_first, norm_first,
// kdim/vdim, add_bias_kv, activation, layer_norm_eps) and mask semantics,
// checked against PyTorch's outputs and gradients. A mask is a floating
// tensor added to the attention scores, or an Int32 tensor where nonzero
// means "masked" (PyTorch's bool True). Masked scores are MaskedScore, a
// finite number, not −∞: a query whose every key is masked gets uniform
// weights where PyTorch gives NaN.
//
// # Printing and Summary
//
// Every layer prints its structure as PyTorch does (fmt's %v, or
// [Format]): "Linear(in_features=784, out_features=512, bias=True)", and
// containers their children nested, "(0): …". A layer says what it prints
// by methods that Format looks for: [ExtraRepr] for its arguments
// (PyTorch's extra_repr), [Parent] for its named children ([Base]
// provides it, and String, for every module built on it) and, rarely,
// [TypeNamer] for a name other than its Go type's. A new layer adds
//
//	func (l *MyLayer) ExtraRepr() string { return fmt.Sprintf("features=%d", l.N) }
//	func (l *MyLayer) String() string    { return nn.Format(l) }
//
// and, if its children are not registered on Base, a Children method.
// [Summary] runs one sample batch through a model and tabulates each
// module's output shape and parameter count (see there for which
// containers it sees into).
//
// # A training step
//
//	logits := model.Forward(x)
//	loss := nn.CrossEntropy(logits, labels, 0)
//	graph.Backward(loss)      // gradients on the device
//	opt.Step()                // one fused update kernel per parameter
//	opt.ZeroGrad()
//	logits.Release(); loss.Release()
//
// Nothing in that loop reads from the device: read the loss (loss.Item())
// only when you want to print it.
//
// # Memory
//
// Parameters live as long as the module: Release frees them. Forward
// releases the intermediates it makes; the caller releases what Forward
// returns. Checkpoint wraps a module so that its activations are
// recomputed in the backward pass instead of kept (graph.Checkpoint), and
// TransformerEncoder.Checkpoint does it for every layer of a stack.
//
// # Normalization, 1-D convolution and recurrent layers
//
// GroupNorm, RMSNorm (PyTorch 2.4's; eps 0 is its eps=None, the dtype's
// machine epsilon), Conv1d (run as Conv2d over a height axis of 1), Conv3d
// (graph.Conv3d: Conv2d over the gathered depth slices) and the
// recurrent LSTM and GRU take PyTorch's arguments and state-dict names
// ("weight_ih_l0", "bias_hh_l1_reverse") and are composed of graph ops,
// so their gradients, through time included, come from the graph engine.
// An RNN's Forward returns the output sequence from zero states; Run takes
// initial states and also returns the final ones:
//
//	out, final := lstm.Run(x, &nn.LSTMState{H: h0, C: c0}) // or nil
//	out, hN := gru.Run(x, h0)                            // or nil
package nn
