// Package amp is mixed-precision training's loss scaling: GradScaler,
// torch.cuda.amp.GradScaler's dynamic loss-scaling rule.
//
// Float16 gradients underflow: a gradient below 2⁻²⁴ is zero in float16.
// Multiplying the loss by a large scale before Backward lifts every
// gradient by the same factor; Unscale divides it out of the float32
// gradients before the optimizer steps. A scale too large overflows
// instead, to Inf or NaN: Step then skips the update, and Update halves
// the scale (backoff); after GrowthInterval steps in a row without
// overflow it doubles it (growth). A step of mixed-precision training in a
// graph.Autocast scope reads:
//
//	loss := nn.CrossEntropy(model.Forward(s.Use(x)), y, 0) // s: graph.NewScope(graph.Autocast)
//	scaled := scaler.Scale(loss)
//	graph.Backward(scaled)
//	stepped, err := scaler.Step(opt) // unscales, checks, steps unless Inf/NaN
//	scaler.Update()
//	opt.ZeroGrad()
//
// The rule is PyTorch 1.13's (torch._amp_update_scale_ and
// torch._amp_foreach_non_finite_check_and_unscale_): the scale is a
// float32, the gradients are multiplied by the float32 reciprocal of the
// scale, growth is skipped when it would make the scale infinite.
// testdata/golden/gen_amp.py replays the rule for the tests (PyTorch 1.13
// has no CPU kernel for those two operations, so the script states the
// rule in Python, as the CUDA kernels compute it).
package amp
