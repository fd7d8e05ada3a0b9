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
// A leaf's OnGradReady hooks run during Backward as soon as its gradient
// for the pass is final (the last node consuming it has run), as
// PyTorch's post-accumulate-grad hooks: data-parallel training
// (nn/parallel) starts sending the last layers' gradients while the
// first layers' are still being computed.
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
// # Custom functions and GradCheck
//
// A [Function] is an operation with a hand-written gradient, as
// torch.autograd.Function: Forward computes the result from the inputs'
// tensors, saving what Backward needs (the inputs, the result, tensors of
// its own); Backward maps the gradient of the result to one gradient per
// input (nil for an input that needs none), with this package's
// operations, so that with CreateGraph it is differentiated again like a
// built-in rule. Apply records it with the machinery of the built-in
// rules; a Backward that returns the wrong number of gradients, or one of
// the wrong shape or dtype, makes Backward return an error naming the
// Function. A Function has one result.
//
// [GradCheck] compares the gradients of any function of values — custom
// Functions included — with central finite differences in float64, to
// first and optionally second order, and names the input, the element and
// both values of the first mismatch. The package's own tests check every
// built-in rule with it.
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
// # Scopes
//
// A [Scope] releases, when closed, every value computed inside it except
// those kept (TensorFlow's tf.tidy): Use puts a value in, every value
// computed from a member joins, Keep (or returning it from [Tidy]) takes
// one out. Membership follows the data, not the goroutine, so a scope
// never frees values another goroutine computed from its own operands;
// parameters never join. A training step in a scope needs no Release
// calls; the gradients Backward accumulates into parameters are not
// members and survive Close. The backward pass keeps each rule's
// temporaries in a scope of its own.
//
// # Recording on and off
//
// A scope made with the [NoGrad] option records nothing for its members:
// an operation with any operand in it records no node, even when another
// operand is a parameter, as under torch.no_grad. The mode belongs to the
// computation, not to the process: a goroutine evaluating a model in a
// no-grad scope while another trains the same parameters leaves the
// trainer's recording alone. Detach gives a value that needs no gradient
// without a scope.
//
// # Mixed precision
//
// A scope made with the [Autocast] option runs its members' matrix
// products and convolutions in float16 where the device runs them in
// float16, and their reductions, norms, softmax and losses in float32, as
// torch.autocast; the casts are recorded, so float32 parameters get
// float32 gradients. package nn/amp has the loss scaler that goes with it.
//
// # Checkpointing
//
// [Checkpoint] runs a function keeping only its inputs, and runs it again
// in the backward pass to differentiate it (torch.utils.checkpoint): less
// memory for activations, one more forward pass, the same gradients.
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
