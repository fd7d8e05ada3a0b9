// Package nn builds neural networks from the differentiable operations of
// package graph: layers, losses and the Module interface that ties them
// together. Its subpackages hold the rest of training: optim (optimizers
// whose updates are one fused kernel per parameter on the device), data
// (datasets and batches) and checkpoint (safetensors files).
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
// returns.
package nn
