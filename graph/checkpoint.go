package graph

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// Checkpoint runs f on inputs without keeping what f computes in between,
// as torch.utils.checkpoint.checkpoint: the graph saves only the inputs,
// and the backward pass runs f again, recording this time, to
// differentiate it. Memory for activations drops from every operation's
// saved tensors to f's inputs and result, for the price of a second
// forward pass; a stack of blocks each checkpointed holds one block's
// activations at a time instead of all of them.
//
// The gradients reach f's inputs and every parameter f computes from (the
// leaves its recorded operations reach, found by a first, recorded run of
// f whose graph is freed at once), and they are the ones an unwrapped f
// gives, bitwise: the recomputation issues the same kernels on the same
// data. (A value that several checkpoints, or a checkpoint and code
// outside it, both use gets the sum of their parts added in another
// order than without checkpoints: equal to rounding, as in PyTorch.)
// Both Backward and Grad go through a checkpoint; CreateGraph does not
// (the recomputed pass is differentiated once, as PyTorch's reentrant
// checkpoint), and a Backward with it returns an error naming Checkpoint.
//
// f must compute from its inputs and from leaves (parameters, constants)
// only: a value that requires a gradient and was computed outside f, but
// not passed as an input, is misuse (pass it as an input). f must be
// deterministic but for the random generators it draws from, which gens
// lists: their offsets are saved before the first run and restored for
// the recomputation (and put back after it), so that a Dropout inside f
// draws the same mask twice, as PyTorch's preserve_rng_state. A generator
// f draws from that gens omits gives the recomputation another mask, and
// gradients that do not match the forward pass.
//
// Under no-grad (an input in a NoGrad scope), or when nothing f computes
// from requires a gradient, Checkpoint is f itself. Under Autocast (an
// input in an Autocast scope) both runs of f are in mixed precision. f's own intermediates
// are released by Checkpoint; its result joins the inputs' scope.
func Checkpoint(f func(inputs []*Value) *Value, inputs []*Value, gens ...*tensor.Generator) *Value {
	const op = "Checkpoint"
	ts := live(op, inputs...)
	if f == nil {
		misuse(op, "nil function")
	}
	if inNoGrad(inputs...) {
		return f(inputs)
	}
	a := &checkpointAttrs{f: f, gens: gens, offsets: offsets(gens), nIn: len(inputs), autocast: inAutocast(inputs...)}
	start := nodeSeq.Load()

	// The first run records, to find the leaves f reaches; its graph and
	// intermediates are freed before Checkpoint returns.
	s := a.scope()
	det := a.detached(s, ts, func(i int) bool { return inputs[i].v != nil })
	out := f(det)
	if out == nil {
		s.Close()
		misuse(op, "f returned nil")
	}
	out.checkLive(op)
	s.Keep(out)
	a.leaves = leavesOf(out, det, start)
	s.Close()
	if out.v == nil {
		// Nothing to differentiate: f's result is the answer.
		join(out, inputs...)
		return out
	}
	result := &Value{t: alias(out.t)}
	out.Release()
	if join(result, inputs...) {
		return result
	}

	n := &node{op: op, rule: &rule{vjp: vjpCheckpoint}, attrs: a, seq: nodeSeq.Add(1)}
	k := len(inputs) + len(a.leaves)
	n.inputs, n.shapes = make([]*vertex, k), make([][]int, k)
	n.dtypes, n.saved = make([]tensor.DType, k), make([]*tensor.Tensor, k)
	for i, x := range inputs {
		if x == nil {
			continue
		}
		n.shapes[i], n.dtypes[i] = x.t.Shape(), x.t.DType()
		n.saved[i] = alias(x.t)
		if x.v != nil {
			x.v.ref()
			n.inputs[i] = x.v
		}
	}
	for j, l := range a.leaves {
		i := len(inputs) + j
		l.v.ref()
		n.inputs[i], n.shapes[i], n.dtypes[i] = l.v, l.shape, l.dtype
	}
	result.v = newVertex(n)
	n.outV = result.v
	return result
}

// checkpointAttrs is what a checkpoint's backward pass needs to run f
// again: f, the generators and their offsets before the first run, and
// the leaves f reached (the node's inputs after f's own).
type checkpointAttrs struct {
	f       func([]*Value) *Value
	gens    []*tensor.Generator
	offsets []uint64
	nIn     int
	leaves  []checkpointLeaf
	// autocast: an input was in an Autocast scope, so f runs in one,
	// both times.
	autocast bool
}

// scope is the scope f's runs compute in: f's intermediates are its
// members, released when it closes.
func (a *checkpointAttrs) scope() *Scope {
	if a.autocast {
		return NewScope(Autocast)
	}
	return NewScope()
}

// checkpointLeaf is a leaf f reached: its vertex, shape and dtype.
type checkpointLeaf struct {
	v     *vertex
	shape []int
	dtype tensor.DType
}

func offsets(gens []*tensor.Generator) []uint64 {
	o := make([]uint64, len(gens))
	for i, g := range gens {
		o[i] = g.Offset()
	}
	return o
}

func setOffsets(gens []*tensor.Generator, o []uint64) {
	for i, g := range gens {
		g.SetOffset(o[i])
	}
}

// detached returns fresh values for f's inputs, members of s: a leaf that
// requires a gradient where needsGrad says so, a constant elsewhere.
func (a *checkpointAttrs) detached(s *Scope, ts []*tensor.Tensor, needsGrad func(int) bool) []*Value {
	det := make([]*Value, len(ts))
	for i, t := range ts {
		if t == nil {
			continue
		}
		if needsGrad(i) {
			det[i] = Param(alias(t))
		} else {
			det[i] = Constant(alias(t))
		}
		s.Use(det[i])
	}
	return det
}

// leavesOf walks the graph of out back to the leaves, stopping at f's
// detached inputs; a node recorded before f ran (seq ≤ start) is a value
// computed outside f that f captured, which Checkpoint refuses.
func leavesOf(out *Value, det []*Value, start uint64) []checkpointLeaf {
	if out.v == nil || out.v.node == nil {
		return nil
	}
	own := map[*vertex]bool{}
	for _, d := range det {
		if d != nil && d.v != nil {
			own[d.v] = true
		}
	}
	var leaves []checkpointLeaf
	seen := map[*vertex]bool{}
	stack := []*vertex{out.v}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := v.node
		if n.seq <= start {
			misuse("Checkpoint", "f uses %s's result, computed before the checkpoint and requiring a gradient, without taking it as an input: pass it in inputs", n.op)
		}
		for i, in := range n.inputs {
			if in == nil || seen[in] || own[in] {
				continue
			}
			seen[in] = true
			if in.node == nil {
				leaves = append(leaves, checkpointLeaf{v: in, shape: slices.Clone(n.shapes[i]), dtype: n.dtypes[i]})
				continue
			}
			stack = append(stack, in)
		}
	}
	return leaves
}

// vjpCheckpoint runs f again from the saved inputs, with the generators
// as they were, recording, and differentiates the result by g with a
// backward pass of its own, for the inputs and the leaves.
func vjpCheckpoint(c *ctx, g *Value) []*Value {
	const op = "Checkpoint"
	a := c.n.attrs.(*checkpointAttrs)
	if c.create {
		misuse(op, "CreateGraph: a checkpointed function is differentiated once (its recomputed pass is not recorded)")
	}
	now := offsets(a.gens)
	setOffsets(a.gens, a.offsets)
	defer setOffsets(a.gens, now)

	s := a.scope()
	defer s.Close()
	det := a.detached(s, c.n.saved[:a.nIn], func(i int) bool { return c.n.inputs[i] != nil })
	out := a.f(det)
	if out == nil || out.v == nil {
		misuse(op, "the recomputed forward pass gave no result that requires a gradient")
	}
	if !slices.Equal(out.t.Shape(), g.t.Shape()) || out.t.DType() != g.t.DType() {
		misuse(op, "the recomputed result %v differs from the first run's (shape %v, dtype %v): f is not deterministic",
			out.t.String(), g.t.Shape(), g.t.DType())
	}
	if out.scope.Load() != s {
		s.Use(out)
	}
	var targets []*vertex
	var slots []int
	for i := range a.nIn {
		if c.n.inputs[i] != nil {
			targets, slots = append(targets, det[i].v), append(slots, i)
		}
	}
	for j, l := range a.leaves {
		targets, slots = append(targets, l.v), append(slots, a.nIn+j)
	}
	got, err := run(op, []*Value{out}, []*Value{g}, targets, 0)
	if err != nil {
		panic(&tensor.Error{Op: "graph." + op, Msg: "differentiating the recomputed forward pass", Err: err})
	}
	gs := make([]*Value, len(c.n.inputs))
	for k, gk := range got {
		gs[slots[k]] = gk
	}
	return gs
}

// String names a checkpoint's node in errors.
func (a *checkpointAttrs) String() string {
	return fmt.Sprintf("Checkpoint(%d inputs, %d leaves)", a.nIn, len(a.leaves))
}
