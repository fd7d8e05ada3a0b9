package graph

// gradHook is one function registered by OnGradReady; its address tells
// it apart for removal.
type gradHook struct {
	f func(grad *Value) error
}

// OnGradReady registers f to be called during every Backward through x, a
// leaf that requires a gradient (a Param), as soon as x's gradient for
// that pass is final: every node of the pass that consumes x has run, and
// their contributions have been added to x's Grad. It is PyTorch's
// register_post_accumulate_grad_hook, and what lets data-parallel training
// send the last layers' gradients (ready first, since the pass runs from
// the loss back) while the first layers' are still being computed.
//
// f is called on the goroutine running Backward, once per pass, with x's
// Grad after the addition (owned by x: read it, do not release it; it
// includes what earlier passes accumulated, as Grad does). Hooks of one
// leaf run in the order they were registered. The order between leaves is
// the order in which they become ready: a leaf used by several
// operations (a shared weight) fires after the earliest-recorded of
// them has been differentiated.
//
//   - A leaf the pass does not reach, or reaches only through operations
//     that give it no gradient, does not fire (as in PyTorch): code that
//     waits for every parameter must treat those left after Backward
//     returns as unused (zero gradient), as DDP's find_unused_parameters.
//   - Only Backward fires hooks; Grad, which does not touch Grad(), does
//     not (nor the nested pass of a Checkpoint: a leaf used inside one
//     fires once, in the outer Backward, after the checkpoint's node).
//   - A hook that returns an error stops the hooks of the pass; the pass
//     still completes (every Grad is accumulated) and Backward returns
//     the first hook error.
//
// The returned function removes the hook; calling it again does nothing.
func (x *Value) OnGradReady(f func(grad *Value) error) (remove func()) {
	const op = "OnGradReady"
	x.checkLive(op)
	if f == nil {
		misuse(op, "nil hook")
	}
	if x.v == nil {
		misuse(op, "%v does not require a gradient", x.t.String())
	}
	if x.v.node != nil {
		misuse(op, "%v is computed, not a leaf: gradient-ready hooks are for leaves (parameters)", x.t.String())
	}
	h := &gradHook{f: f}
	v := x.v
	v.mu.Lock()
	v.hooks = append(v.hooks, h)
	v.mu.Unlock()
	return func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		for i, o := range v.hooks {
			if o == h {
				v.hooks = append(v.hooks[:i:i], v.hooks[i+1:]...)
				return
			}
		}
	}
}

// fireHooks calls v's gradient-ready hooks with its Grad; it returns the
// first error.
func (v *vertex) fireHooks() error {
	v.mu.Lock()
	hooks := v.hooks
	g := v.grad
	v.mu.Unlock()
	for _, h := range hooks {
		if err := h.f(g); err != nil {
			return err
		}
	}
	return nil
}

// hasHooks reports whether v has gradient-ready hooks.
func (v *vertex) hasHooks() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.hooks) > 0
}
