package graph

import (
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/tensor"
)

// node is one recorded operation: which rule differentiates it, the
// vertices of its inputs, and what the rule will read — the saved tensors
// (references of the graph's own, so the caller may release its values),
// the op's parameters and any extra tensors the forward pass produced
// (max-pool indices).
type node struct {
	seq    uint64 // order of recording, from nodeSeq: Checkpoint tells its own nodes by it
	op     string
	rule   *rule
	inputs []*vertex // nil where the input needs no gradient
	shapes [][]int   // every input's shape, saved or not
	dtypes []tensor.DType

	saved []*tensor.Tensor // per input; nil unless the rule reads it
	out   *tensor.Tensor   // the result, when the rule reads it
	outV  *vertex          // the result's vertex: not counted, it owns this node
	attrs any
	extra []*tensor.Tensor

	// mu guards the saved tensors between a backward pass that frees them
	// and another goroutine's cascade.
	mu    sync.Mutex
	freed bool

	// inline backs inputs, shapes, dtypes and saved for ops of up to three
	// inputs (nearly all), so that recording one allocates the node once
	// instead of five times: a small op's cost is mostly allocations.
	inline struct {
		inputs [3]*vertex
		shapes [3][]int
		dtypes [3]tensor.DType
		saved  [3]*tensor.Tensor
	}
}

// nodeSeq numbers nodes in the order they are recorded.
var nodeSeq atomic.Uint64

// releaseSaved gives back the tensors only the backward pass would read
// and marks the node freed, so that a second pass through it is an error.
func (n *node) releaseSaved() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.freed {
		return
	}
	n.freed = true
	for _, t := range n.saved {
		t.Release()
	}
	n.out.Release()
	for _, t := range n.extra {
		t.Release()
	}
	n.saved, n.out, n.extra = nil, nil, nil
}

// free releases the node's saved tensors and returns the inputs it held,
// whose references the caller (vertex.unref) must drop.
func (n *node) free() []*vertex {
	n.releaseSaved()
	n.mu.Lock()
	inputs := n.inputs
	n.inputs = nil
	n.mu.Unlock()
	held := inputs[:0:0]
	for _, in := range inputs {
		if in != nil {
			held = append(held, in)
		}
	}
	return held
}

func (n *node) isFreed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.freed
}

// record wraps out, the result of op on inputs, as a value, a member of
// the scope its inputs give it (see Scope). When an input requires a
// gradient and none belongs to a no-grad scope, it records a node
// with op's rule, saving what the rule declares it reads, attrs and extra.
// record takes over the references to out and extra. Nil inputs are
// absent optional operands (a convolution without bias).
func record(op string, out *tensor.Tensor, inputs []*Value, attrs any, extra ...*tensor.Tensor) *Value {
	return recordRule(op, rules[op], out, inputs, attrs, extra...)
}

// recordRule is record with the rule given (a custom Function's) rather
// than looked up; a nil rule makes op not differentiable.
func recordRule(op string, r *rule, out *tensor.Tensor, inputs []*Value, attrs any, extra ...*tensor.Tensor) *Value {
	result := &Value{t: out}
	for _, in := range inputs {
		if in != nil && result.nondiff == "" {
			result.nondiff = in.nondiff
		}
	}
	noGrad := join(result, inputs...)
	if noGrad || !wantsGrad(inputs...) {
		releaseTensors(extra)
		return result
	}
	if r == nil {
		// Not differentiable (argmax, comparisons, one-hot): the result
		// needs no gradient, and remembers why, for Backward's error.
		releaseTensors(extra)
		result.nondiff = op
		return result
	}
	n := &node{op: op, rule: r, attrs: attrs, extra: extra, seq: nodeSeq.Add(1)}
	if k := len(inputs); k <= len(n.inline.inputs) {
		n.inputs, n.shapes = n.inline.inputs[:k:k], n.inline.shapes[:k:k]
		n.dtypes, n.saved = n.inline.dtypes[:k:k], n.inline.saved[:k:k]
	} else {
		n.inputs, n.shapes = make([]*vertex, k), make([][]int, k)
		n.dtypes, n.saved = make([]tensor.DType, k), make([]*tensor.Tensor, k)
	}
	for i, in := range inputs {
		if in == nil {
			continue
		}
		n.shapes[i] = in.t.Shape()
		n.dtypes[i] = in.t.DType()
		if in.v != nil {
			in.v.ref()
			n.inputs[i] = in.v
		}
		if r.savesInput(i, len(inputs)) {
			n.saved[i] = alias(in.t)
		}
	}
	if r.saveOutput {
		n.out = alias(out)
	}
	result.v = newVertex(n)
	n.outV = result.v
	return result
}

// wantsGrad reports whether an op on xs will be recorded: record's test,
// which a forward pass also asks to skip preparing for a backward pass
// that cannot come.
func wantsGrad(xs ...*Value) bool {
	if inNoGrad(xs...) {
		return false
	}
	for _, x := range xs {
		if x != nil && x.v != nil {
			return true
		}
	}
	return false
}

// alias is another reference to t's memory, with t's layout. It belongs to
// no tensor.Scope even when t does: the graph's saved tensors must outlive
// the scope of the values they were saved from.
func alias(t *tensor.Tensor) *tensor.Tensor {
	a := t.Reshape(t.Shape()...)
	if s := a.Scope(); s != nil {
		s.Keep(a)
	}
	return a
}

func releaseTensors(ts []*tensor.Tensor) {
	for _, t := range ts {
		t.Release()
	}
}

// unary records op on x, for the common one-input case.
func unary(op string, x *Value, out *tensor.Tensor, attrs any) *Value {
	return record(op, out, []*Value{x}, attrs)
}

// live panics unless every non-nil value can be used by op, and returns
// their tensors (nil for nil values) for the forward computation.
func live(op string, xs ...*Value) []*tensor.Tensor {
	ts := make([]*tensor.Tensor, len(xs))
	for i, x := range xs {
		if x != nil {
			x.checkLive(op)
			ts[i] = x.t
		}
	}
	return ts
}
