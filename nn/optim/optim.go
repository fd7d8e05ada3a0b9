package optim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// Optimizer updates parameters from their gradients. Its methods must not
// be called concurrently with each other or with Backward on the same
// parameters.
type Optimizer interface {
	// Step updates every parameter that has a gradient by one fused
	// kernel on its device; parameters without a gradient are skipped and
	// keep their step count. Misuse (a parameter that is a view, a
	// gradient on another device) is returned as an error; device failures
	// surface later, from reads and Device.Sync, as for any tensor op.
	Step() error
	// ZeroGrad drops every parameter's gradient, giving its memory back
	// (PyTorch's zero_grad(set_to_none=True)).
	ZeroGrad()
	// LR returns the learning rate (before Adagrad's decay).
	LR() float64
	// SetLR sets the learning rate for the following steps: what a
	// Schedule drives.
	SetLR(lr float64)
	// State returns the optimizer's state for a checkpoint: tensors named
	// "<parameter name>.<state name>", borrowed (owned by the optimizer,
	// valid until its next Step, LoadState or Release), and metadata
	// strings: "optimizer" (its kind), "lr" and the other
	// hyperparameters, and "<parameter name>.step" for each parameter that
	// has state.
	State() (tensors map[string]*tensor.Tensor, metadata map[string]string)
	// LoadState restores what State returned, copying the tensors onto
	// each parameter's device and dtype. The optimizer's kind must match;
	// the hyperparameters in metadata replace the optimizer's, as
	// load_state_dict replaces param_groups. Missing, unexpected or
	// misshapen entries are an error that lists them, and leave the
	// optimizer unchanged.
	LoadState(tensors map[string]*tensor.Tensor, metadata map[string]string) error
}

// orDefault resolves a config field whose zero value means PyTorch's
// default: nil means def, anything else the value it points to. The
// result is a fresh pointer, so that later changes to the caller's
// variable do not reach an optimizer that was built from it.
func orDefault(v *float64, def float64) *float64 {
	if v != nil {
		def = *v
	}
	return &def
}

// clonePtr copies the value p points to, so that a cloned rule shares no
// hyperparameter with the original.
func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// rule is what distinguishes one optimizer from another; core does the
// rest.
type rule interface {
	kind() string
	op() tensor.Optimizer
	// states names the state tensors in the order tensor.Step takes them.
	states() []string
	// fill is state i's initial value (Adagrad's initial accumulator).
	fill(i int) float64
	// args are the kernel's arguments for step number step (from 1).
	args(lr float64, step int64) tensor.StepArgs
	// fields are the hyperparameters besides lr, for the metadata.
	fields() []field
	check() error
	clone() rule
}

// field is a hyperparameter: f or b points into a rule's config.
type field struct {
	key string
	f   *float64
	b   *bool
}

type slot struct {
	name  string
	value *graph.Value
	step  int64
	state []*tensor.Tensor // nil until the first step
}

// core is the optimizer shared by every rule: the parameters, their
// state, and the learning rate.
type core struct {
	r      rule
	lr     float64
	params []slot
}

func newCore(ctor string, params []nn.Named, lr float64, r rule) core {
	if err := r.check(); err != nil {
		misuse(ctor, "%v", err)
	}
	if err := checkLR(lr); err != nil {
		misuse(ctor, "%v", err)
	}
	if len(params) == 0 {
		misuse(ctor, "empty parameter list")
	}
	c := core{r: r, lr: lr, params: make([]slot, len(params))}
	names := make(map[string]bool, len(params))
	values := make(map[*graph.Value]string, len(params))
	for i, p := range params {
		if p.Value == nil {
			misuse(ctor, "parameter %q is nil", p.Name)
		}
		if !p.Value.IsLeaf() {
			misuse(ctor, "parameter %q is computed, not a leaf", p.Name)
		}
		if names[p.Name] {
			misuse(ctor, "two parameters are named %q", p.Name)
		}
		if other, ok := values[p.Value]; ok {
			misuse(ctor, "parameters %q and %q are the same value", other, p.Name)
		}
		names[p.Name] = true
		values[p.Value] = p.Name
		c.params[i] = slot{name: p.Name, value: p.Value}
	}
	return c
}

func checkLR(lr float64) error {
	if !(lr >= 0) {
		return fmt.Errorf("invalid learning rate %v", lr)
	}
	return nil
}

func misuse(op, format string, args ...any) {
	panic(&tensor.Error{Op: "optim." + op, Msg: fmt.Sprintf(format, args...)})
}

// Step implements Optimizer.Step: one tensor.Step per parameter with a
// gradient.
func (c *core) Step() error {
	return tensor.Catch(func() {
		for i := range c.params {
			c.step(&c.params[i])
		}
	})
}

func (c *core) step(s *slot) {
	g := s.value.Grad()
	if g == nil {
		return
	}
	p := s.value.Tensor()
	first := s.state == nil
	if first {
		names := c.r.states()
		state := make([]*tensor.Tensor, len(names))
		for i := range names {
			state[i] = tensor.Full(p.Device(), p.DType(), c.r.fill(i), p.Shape()...)
		}
		s.state = state
	} else if len(s.state) > 0 && s.state[0].Device() != p.Device() {
		// The parameter moved (nn.To, SetTensor): the state follows it,
		// through the host, once.
		for i, t := range s.state {
			s.state[i] = t.To(p.Device())
			t.Release()
		}
	}
	// A gradient that is a view (Sum's backward leaves an Expand) is
	// packed by tensor.Step itself.
	a := c.r.args(c.lr, s.step+1)
	a.FirstStep = first
	tensor.Step(c.r.op(), p, g.Tensor(), s.state, nil, a)
	s.step++
}

// ZeroGrad drops every parameter's gradient.
func (c *core) ZeroGrad() {
	for _, s := range c.params {
		s.value.ZeroGrad()
	}
}

// LR returns the learning rate.
func (c *core) LR() float64 { return c.lr }

// SetLR sets the learning rate of the following steps; a negative one
// panics.
func (c *core) SetLR(lr float64) {
	if err := checkLR(lr); err != nil {
		misuse("SetLR", "%v", err)
	}
	c.lr = lr
}

// Release frees the state tensors; the optimizer starts over, as if it
// had never stepped.
func (c *core) Release() {
	for i := range c.params {
		s := &c.params[i]
		for _, t := range s.state {
			t.Release()
		}
		s.state = nil
		s.step = 0
	}
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// State implements Optimizer.State; the tensors are borrowed.
func (c *core) State() (map[string]*tensor.Tensor, map[string]string) {
	tensors := map[string]*tensor.Tensor{}
	meta := map[string]string{"optimizer": c.r.kind(), "lr": formatFloat(c.lr)}
	for _, f := range c.r.fields() {
		if f.f != nil {
			meta[f.key] = formatFloat(*f.f)
		} else {
			meta[f.key] = strconv.FormatBool(*f.b)
		}
	}
	names := c.r.states()
	for _, s := range c.params {
		if s.state == nil {
			continue
		}
		meta[s.name+".step"] = strconv.FormatInt(s.step, 10)
		for i, t := range s.state {
			tensors[s.name+"."+names[i]] = t
		}
	}
	return tensors, meta
}

// LoadState implements Optimizer.LoadState, copying the tensors.
func (c *core) LoadState(tensors map[string]*tensor.Tensor, meta map[string]string) error {
	if kind := meta["optimizer"]; kind != c.r.kind() {
		return fmt.Errorf("optim: LoadState: state of optimizer %q, not %q", kind, c.r.kind())
	}
	r := c.r.clone()
	lr, problems := c.lr, []string(nil)
	known := map[string]bool{"optimizer": true, "lr": true}
	if v, ok := meta["lr"]; ok {
		var err error
		if lr, err = strconv.ParseFloat(v, 64); err != nil || checkLR(lr) != nil {
			problems = append(problems, fmt.Sprintf("lr %q", v))
		}
	} else {
		problems = append(problems, "missing lr")
	}
	for _, f := range r.fields() {
		known[f.key] = true
		v, ok := meta[f.key]
		if !ok {
			problems = append(problems, "missing "+f.key)
			continue
		}
		var err error
		if f.f != nil {
			*f.f, err = strconv.ParseFloat(v, 64)
		} else {
			*f.b, err = strconv.ParseBool(v)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q", f.key, v))
		}
	}
	if problems == nil {
		if err := r.check(); err != nil {
			problems = append(problems, err.Error())
		}
	}

	// Match every parameter's entries before copying anything.
	names := r.states()
	used := map[string]bool{}
	steps := make([]int64, len(c.params))
	srcs := make([][]*tensor.Tensor, len(c.params))
	for i, s := range c.params {
		key := s.name + ".step"
		known[key] = true
		v, ok := meta[key]
		if !ok {
			continue // never stepped: no state
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			problems = append(problems, fmt.Sprintf("%s %q", key, v))
			continue
		}
		steps[i] = n
		srcs[i] = make([]*tensor.Tensor, len(names))
		for j, name := range names {
			key := s.name + "." + name
			t, ok := tensors[key]
			if !ok || t == nil {
				problems = append(problems, "missing "+key)
				continue
			}
			used[key] = true
			if !slices.Equal(t.Shape(), s.value.Shape()) {
				problems = append(problems, fmt.Sprintf("%s has shape %v, the parameter %v", key, t.Shape(), s.value.Shape()))
				continue
			}
			srcs[i][j] = t
		}
	}
	for key := range tensors {
		if !used[key] {
			problems = append(problems, "unexpected "+key)
		}
	}
	for key := range meta {
		if !known[key] {
			problems = append(problems, "unexpected metadata "+key)
		}
	}
	if problems != nil {
		slices.Sort(problems)
		return fmt.Errorf("optim: LoadState: %s", strings.Join(problems, "; "))
	}

	states := make([][]*tensor.Tensor, len(c.params))
	if err := tensor.Catch(func() {
		for i, s := range c.params {
			if srcs[i] == nil {
				continue
			}
			p := s.value.Tensor()
			states[i] = make([]*tensor.Tensor, len(names))
			for j, t := range srcs[i] {
				states[i][j] = copyLike(t, p)
			}
		}
	}); err != nil {
		for _, st := range states {
			for _, t := range st {
				if t != nil {
					t.Release()
				}
			}
		}
		return fmt.Errorf("optim: LoadState: %w", err)
	}
	c.Release()
	c.r, c.lr = r, lr
	for i := range c.params {
		c.params[i].state = states[i]
		c.params[i].step = steps[i]
	}
	return nil
}

// copyLike returns a copy of t with p's dtype on p's device, owning its
// buffer, as Step's state must.
func copyLike(t, p *tensor.Tensor) *tensor.Tensor {
	if t.DType() != p.DType() {
		c := t.Cast(p.DType())
		if c.Device() == p.Device() {
			return c
		}
		defer c.Release()
		t = c
	}
	if t.Device() != p.Device() {
		return t.To(p.Device())
	}
	// Multiplying by one is exact: a copy in one kernel, with no host
	// round trip.
	return t.MulScalar(1)
}
