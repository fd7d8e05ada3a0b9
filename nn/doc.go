// Package nn builds neural networks from the differentiable operations of
// package graph: layers, losses and the Module interface that ties them
// together. Its subpackages hold the rest of training: optim (optimizers
// whose updates are one fused kernel per parameter on the device), data
// (datasets and batches), checkpoint (safetensors files and streams) and
// train (the training loop: metrics, evaluation, checkpoints, early
// stopping, cancellation).
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
