package graph

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/tensor"
)

// Value is a tensor as autodiff sees it: the tensor, and, when it requires
// a gradient, its place in the graph of the operations that computed it.
//
// A Value owns one reference to its tensor: Release it when done, as a
// tensor. The graph keeps its own references to whatever the backward pass
// will read, so releasing an intermediate Value as soon as the next
// operation has consumed it is always safe and frees memory early.
type Value struct {
	t *tensor.Tensor
	v *vertex // nil unless the value requires a gradient

	// nondiff names the non-differentiable operation this value came
	// from when some input required a gradient, so that Backward can say
	// why no gradient reaches it.
	nondiff string

	// scope is the Scope x belongs to (nil for none): values computed
	// from x join it. Backward rules' temporaries are in one too.
	scope atomic.Pointer[Scope]
	// borrowed values do not own their tensor (the graph's saved tensors
	// as a backward rule sees them): Release leaves it alone.
	borrowed bool

	released atomic.Bool
}

// vertex is a value's identity in the graph: where its gradient
// accumulates and, for a computed value, the node that computed it.
// Several Value handles may share one vertex (the user's, and those a
// backward rule sees with CreateGraph); refs counts them and the nodes
// that take the vertex as an input, so that a graph nobody can reach any
// more frees its saved tensors at once instead of at garbage collection.
type vertex struct {
	node *node // nil for a leaf
	refs atomic.Int64

	mu     sync.Mutex
	grad   *Value // accumulated gradient of a leaf or of a RetainGrad value
	retain bool
	hooks  []*gradHook // OnGradReady's, for a leaf
}

func newVertex(n *node) *vertex {
	v := &vertex{node: n}
	v.refs.Store(1)
	return v
}

func (v *vertex) ref() { v.refs.Add(1) }

// unref drops a reference; the last one frees the node that computed the
// vertex (and, through it, whatever only that node kept alive) and the
// accumulated gradient. The inputs a freed node lets go of are unreferenced
// from a worklist rather than by recursion: releasing the end of a chain
// of n operations would otherwise nest n calls, more than a browser's
// call stack holds under js/wasm (graph's TestMemoryLongChain: 20,000).
func (v *vertex) unref() {
	pending := []*vertex{v}
	for len(pending) > 0 {
		v := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if v.refs.Add(-1) != 0 {
			continue
		}
		if v.node != nil {
			pending = append(pending, v.node.free()...)
		}
		v.mu.Lock()
		g := v.grad
		v.grad = nil
		v.mu.Unlock()
		g.Release()
	}
}

// Constant wraps t as a value that needs no gradient: an input, a label,
// a batch. The value takes over the caller's reference to t.
func Constant(t *tensor.Tensor) *Value {
	checkTensor("Constant", t)
	return &Value{t: t}
}

// Param wraps t as a leaf that requires a gradient: a weight, or any input
// to differentiate with respect to. Backward accumulates into its Grad.
// The value takes over the caller's reference to t. t must hold a floating
// dtype.
func Param(t *tensor.Tensor) *Value {
	const op = "Param"
	checkTensor(op, t)
	if !t.DType().IsFloat() {
		misuse(op, "%v has dtype %v: only floating tensors can require a gradient", t.String(), t.DType())
	}
	return &Value{t: t, v: newVertex(nil)}
}

func checkTensor(op string, t *tensor.Tensor) {
	if t == nil {
		misuse(op, "nil tensor")
	}
	if t.Released() {
		misuse(op, "%v", t.Err())
	}
}

// Tensor returns the value's tensor. It stays owned by the value: do not
// release it, and do not use it after releasing the value.
func (x *Value) Tensor() *tensor.Tensor {
	x.checkLive("Tensor")
	return x.t
}

// RequiresGrad reports whether gradients flow to x: it is a Param or was
// computed, while recording, from one.
func (x *Value) RequiresGrad() bool {
	x.checkLive("RequiresGrad")
	return x.v != nil
}

// IsLeaf reports whether x was made by Constant or Param (or Detach)
// rather than computed by a recorded operation.
func (x *Value) IsLeaf() bool {
	x.checkLive("IsLeaf")
	return x.v == nil || x.v.node == nil
}

// Grad returns the gradient accumulated into x by Backward, or nil when
// none has been: a leaf's always accumulates, a computed value's only
// after RetainGrad. The gradient is owned by x; it is replaced (not
// modified) by the next Backward, so a caller that keeps it across one must
// hold it through Detach.
func (x *Value) Grad() *Value {
	x.checkLive("Grad")
	if x.v == nil {
		return nil
	}
	x.v.mu.Lock()
	defer x.v.mu.Unlock()
	return x.v.grad
}

// SetGrad replaces x's accumulated gradient by g (nil drops it), taking
// over the caller's reference, as assigning p.grad in PyTorch: for code
// that transforms gradients between Backward and an optimizer step
// (clipping, averaging across devices). g must have x's shape, dtype and
// device; x must require a gradient.
func (x *Value) SetGrad(g *tensor.Tensor) {
	const op = "SetGrad"
	x.checkLive(op)
	if x.v == nil {
		misuse(op, "%v does not require a gradient", x.t.String())
	}
	if g != nil {
		checkTensor(op, g)
		if !slices.Equal(g.Shape(), x.t.Shape()) || g.DType() != x.t.DType() || g.Device() != x.t.Device() {
			misuse(op, "gradient %v does not match %v in shape, dtype and device", g.String(), x.t.String())
		}
	}
	var next *Value
	if g != nil {
		next = Constant(g)
	}
	x.v.mu.Lock()
	prev := x.v.grad
	x.v.grad = next
	x.v.mu.Unlock()
	prev.Release()
}

// SetTensor replaces the tensor of x, a leaf, by t, taking over the
// caller's reference and releasing x's old one: for loading weights into a
// parameter or moving it to another device. t must have x's shape and
// dtype (an integer leaf may change integer width: Int64 moved to a
// WebGPU device is Int32 there). A gradient on another device than t is
// dropped. Graphs recorded before keep the old values they saved.
func (x *Value) SetTensor(t *tensor.Tensor) {
	const op = "SetTensor"
	x.checkLive(op)
	checkTensor(op, t)
	if x.v != nil && x.v.node != nil {
		misuse(op, "%v is computed, not a leaf", x.t.String())
	}
	sameType := t.DType() == x.t.DType() || (t.DType().IsInteger() && x.t.DType().IsInteger())
	if !slices.Equal(t.Shape(), x.t.Shape()) || !sameType {
		misuse(op, "%v does not match %v in shape and dtype", t.String(), x.t.String())
	}
	old := x.t
	x.t = t
	old.Release()
	if x.v != nil && t.Device() != old.Device() {
		x.v.mu.Lock()
		g := x.v.grad
		x.v.grad = nil
		x.v.mu.Unlock()
		g.Release()
	}
}

// RetainGrad makes Backward keep the gradient of x, a computed value, as
// it keeps a leaf's. It has no effect on a leaf or a value that needs no
// gradient.
func (x *Value) RetainGrad() {
	x.checkLive("RetainGrad")
	if x.v != nil {
		x.v.mu.Lock()
		x.v.retain = true
		x.v.mu.Unlock()
	}
}

// ZeroGrad drops x's accumulated gradient, giving its memory back, so that
// the next Backward starts from zero (PyTorch's zero_grad(set_to_none)).
func (x *Value) ZeroGrad() {
	x.checkLive("ZeroGrad")
	if x.v == nil {
		return
	}
	x.v.mu.Lock()
	g := x.v.grad
	x.v.grad = nil
	x.v.mu.Unlock()
	g.Release()
}

// ZeroGrad drops the accumulated gradients of every value.
func ZeroGrad(xs ...*Value) {
	for _, x := range xs {
		x.ZeroGrad()
	}
}

// Detach returns x's data as a leaf that needs no gradient and shares x's
// memory: nothing computed from it is recorded back to x. It joins x's
// Scope, if any; scope.Use(x.Detach()) puts a view of a value in a scope
// while the value itself stays the caller's.
func (x *Value) Detach() *Value {
	x.checkLive("Detach")
	d := &Value{t: x.t.Reshape(x.t.Shape()...)}
	join(d, x)
	return d
}

// Release drops x's reference to its tensor and to its place in the graph.
// The graph's saved tensors live until the graph is freed (by Backward, or
// when no value can reach it any more). Release is idempotent.
func (x *Value) Release() {
	if x == nil || !x.released.CompareAndSwap(false, true) {
		return
	}
	if !x.borrowed {
		x.t.Release()
		if x.v != nil {
			x.v.unref()
		}
	}
}

// Shape returns a copy of x's dimensions.
func (x *Value) Shape() []int { x.checkLive("Shape"); return x.t.Shape() }

// DType returns x's element type.
func (x *Value) DType() tensor.DType { x.checkLive("DType"); return x.t.DType() }

// Rank returns x's number of axes.
func (x *Value) Rank() int { x.checkLive("Rank"); return x.t.Rank() }

// Len returns x's number of elements.
func (x *Value) Len() int { x.checkLive("Len"); return x.t.Len() }

// Device returns the device that holds x.
func (x *Value) Device() *tensor.Device { x.checkLive("Device"); return x.t.Device() }

// Float32s reads x back to the host; see tensor.Tensor.Float32s.
func (x *Value) Float32s() ([]float32, error) {
	if err := x.liveErr("Float32s"); err != nil {
		return nil, err
	}
	return x.t.Float32s()
}

// Float64s reads x back to the host; see tensor.Tensor.Float64s.
func (x *Value) Float64s() ([]float64, error) {
	if err := x.liveErr("Float64s"); err != nil {
		return nil, err
	}
	return x.t.Float64s()
}

// Int32s reads x back to the host; see tensor.Tensor.Int32s.
func (x *Value) Int32s() ([]int32, error) {
	if err := x.liveErr("Int32s"); err != nil {
		return nil, err
	}
	return x.t.Int32s()
}

// Int64s reads x back to the host; see tensor.Tensor.Int64s.
func (x *Value) Int64s() ([]int64, error) {
	if err := x.liveErr("Int64s"); err != nil {
		return nil, err
	}
	return x.t.Int64s()
}

// Item reads the single element of x; see tensor.Tensor.Item. Like the
// readers above, it returns (does not panic with) the *tensor.Error of a
// released or nil value, and tensor.ErrNotScalar for another size.
func (x *Value) Item() (float64, error) {
	if err := x.liveErr("Item"); err != nil {
		return 0, err
	}
	return x.t.Item()
}

// String describes x without reading it from the device.
func (x *Value) String() string {
	if x == nil {
		return "value <nil>"
	}
	if x.released.Load() {
		return "value (released)"
	}
	s := x.t.String()
	switch {
	case x.v == nil:
	case x.v.node != nil:
		s += fmt.Sprintf(" (grad: %s)", x.v.node.op)
	default:
		s += " (requires grad)"
	}
	return s
}

func (x *Value) checkLive(op string) {
	if err := x.liveErr(op); err != nil {
		panic(err)
	}
}

// liveErr is checkLive's finding as an error, for the methods with an
// error result, which return it.
func (x *Value) liveErr(op string) *tensor.Error {
	if x == nil {
		return &tensor.Error{Op: "graph." + op, Msg: "nil value"}
	}
	if x.released.Load() {
		return &tensor.Error{Op: "graph." + op, Msg: "use of a released value"}
	}
	return nil
}

// misuse panics with a *tensor.Error, as the tensor package reports its
// misuse, so tensor.Catch works on both.
func misuse(op, format string, args ...any) {
	panic(&tensor.Error{Op: "graph." + op, Msg: fmt.Sprintf(format, args...)})
}
