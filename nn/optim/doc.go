// Package optim updates a model's parameters from their gradients: the
// optimizers of torch.optim (SGD, Adam, AdamW, RMSProp, Adagrad) with
// PyTorch 1.13's arithmetic, gradient clipping by global norm, and
// learning-rate schedules.
//
// # One kernel per parameter
//
// [Optimizer.Step] issues one fused tensor.Step kernel per parameter that
// has a gradient: it reads the gradient and the optimizer's state and
// writes the parameter and the state in place, on the parameter's device.
// What depends on the step number (Adam's bias corrections, Adagrad's
// decayed rate) is computed on the host from counters kept there, so a
// training loop never reads from the device:
//
//	for step := 0; step < steps; step++ {
//		opt.SetLR(schedule.LR(step))
//		logits := model.Forward(x)
//		loss := nn.CrossEntropy(logits, labels, 0)
//		graph.Backward(loss)
//		optim.ClipGradNorm(model.Parameters(), 1).Release() // optional
//		opt.Step()
//		opt.ZeroGrad()
//		logits.Release(); loss.Release()
//	}
//
// The state tensors (momentum buffers, moment estimates) are allocated on
// the parameter's device the first time the parameter is stepped, as
// PyTorch's lazy state, and each parameter counts its own steps: one that
// had no gradient in a step keeps its count, as in PyTorch.
//
// # Configuration
//
// Each optimizer takes a config struct. Fields whose PyTorch default is
// not zero (Adam's betas 0.9 and 0.999, say) are pointers: nil means the
// default, which each config's comment gives, and any value, zero
// included, is set with new: AdamConfig{Beta1: new(0.0)}. Fields whose
// default is zero (momentum, most weight decays) are plain float64s. The
// learning rate is a plain float64 too: zero means the default (SGD has
// none and requires one); a zero rate is set with SetLR(0). Invalid values (a
// negative rate, a β outside [0, 1)) panic with a *tensor.Error, as
// PyTorch raises ValueError, so [tensor.Catch] recovers them.
//
// # Checkpoints
//
// [Optimizer.State] lists the state as tensors named
// "<parameter name>.<state name>" with PyTorch's state names ("0.weight.exp_avg",
// "0.weight.momentum_buffer") and metadata strings (the optimizer's kind,
// its hyperparameters, and each parameter's step count as
// "<parameter name>.step"); [Optimizer.LoadState] restores both, as
// torch.optim.Optimizer.load_state_dict restores state and param_groups.
// Package nn/checkpoint stores them in a safetensors stream or file of
// their own, beside the model's (checkpoint.WriteOptimizer, SaveOptimizer).
package optim
