// Package graph is reverse-mode automatic differentiation over tensor
// operations. The forward pass runs the tensor package's kernels; the
// backward pass runs more of them, on the device that holds the data, and
// never reads anything back to the host.
//
// # Values and the graph
//
// A Value wraps a tensor. Param makes a leaf that requires a gradient (a
// weight); Constant one that does not (a batch, a label). Every operation
// of this package mirrors the tensor operation of the same name; when an
// input requires a gradient, it also records a node: which rule
// differentiates it and the tensors that rule will read. The graph is
// these nodes, linked from each result back to its inputs, as in PyTorch:
// there is no tape object to manage.
//
//	w := graph.Param(tensor.FromFloat32(dev, weights, 784, 10))
//	logits := graph.MatMul(x, w)
//	loss := graph.LogSoftmax(logits, 1).Gather(1, labels).Mean(nil, false).Neg()
//	err := graph.Backward(loss) // w.Grad() now holds ∂loss/∂w
//
// Backward adds the gradient of a single-element loss to the Grad of every
// leaf it depends on (and of every value marked RetainGrad); gradients
// accumulate across calls until ZeroGrad. Grad returns the gradients of
// any outputs with respect to chosen inputs, weighted by seeds — the
// vector-Jacobian product — without touching Grad.
//
// # Functions and methods
//
// The API mirrors package tensor's: every recorded operation has the
// tensor operation's name, form (a package function or a method, by the
// rule stated in package tensor) and arguments, with *Value for *Tensor.
// The elementwise operations of hal's op table, their methods and their
// Scalar forms are generated from the table (zz_generated_ops.go, by
// cmd/opgen through go generate), so they cannot drift from tensor's.
// What only a graph has is both: Backward, Grad and ZeroGrad are functions
// and methods; Param and Constant make values; Detach, RequiresGrad,
// RetainGrad and the accessors are methods.
//
// # Rules
//
// Each primitive operation has one rule, and the rules are kept together in
// one table (rules.go; the elementwise kernels' rules are keyed by hal's op
// table in rules_elementwise.go, and a test checks that every kernel the
// table marks differentiable has one). A rule maps the gradient of an operation's result
// to the gradients of its inputs, undoing broadcasting where the forward
// pass broadcast. Composite operations (Mean, Var, Std, MatVec, Stack,
// Dropout …) are built from recorded primitives and need no rule of their
// own. Operations with no rule (comparisons, ArgMax, OneHot) are not
// differentiable: their results need no gradient, and Backward through one
// returns ErrNoGradient naming it. Where PyTorch has a convention at a
// kink or a tie (ReLU at 0, Maximum of equal values), the rules follow it.
//
// Rules compute with this package's operations, so with CreateGraph the
// backward pass is itself recorded and its results can be differentiated
// again: second derivatives, Hessian-vector products.
//
// # Memory
//
// A Value owns one reference to its tensor; Release it when done, as a
// tensor. The graph holds references of its own to what its rules will
// read, so an intermediate value can be released as soon as the next
// operation has consumed it. A backward pass releases each node's saved
// tensors as soon as its rule has run, unless RetainGraph (or CreateGraph)
// is given; a graph that no value reaches any more is freed at once, not at
// garbage collection. After Backward, releasing the loss and the gradients
// returns the device's memory to where it was before the forward pass.
//
// # Recording on and off
//
// NoGrad runs a function without recording, for evaluation. Go has no
// goroutine-local state, so the mode is process-wide; a goroutine that
// evaluates while another trains should compute on Detach-ed values
// instead.
//
// # Errors
//
// As in the tensor package, misuse (mismatched shapes, released values)
// panics with a *tensor.Error, and tensor.Catch recovers it. Backward and
// Grad return errors: ErrNoGradient when nothing reachable requires a
// gradient, ErrGraphFreed for a second pass through a freed graph, and
// device failures from the kernels.
// The readers (Float32s …) and Item return a released value's misuse,
// and Item tensor.ErrNotScalar, instead of panicking.
//
// # Printing
//
// A Value prints as its tensor (see the tensor package: fmt's %v, with a
// device sync) followed by ", requires_grad=True" for a Param and
// ", grad_fn=<MulBackward>" for a value computed while recording, as
// PyTorch prints them (PyTorch's node names differ: MulBackward0).
package graph

//go:generate go run ../cmd/opgen graph
