package tensor

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// Optimizer names a fused parameter update; see hal.Optimizer for each
// rule's arithmetic and state.
type Optimizer = hal.Optimizer

// The fused updates.
const (
	SGD     = hal.SGD
	Adam    = hal.Adam
	RMSProp = hal.RMSProp
	Adagrad = hal.Adagrad
)

// StepArgs are one step's hyperparameters; see hal.StepArgs.
type StepArgs = hal.StepArgs

// Each update is an op of its own in the table ("Step(adam)" …), since a
// backend declares each kernel separately.
var _ = registerOps(stepOps()...)

func stepOps() []Op {
	var ops []Op
	for _, o := range hal.Optimizers {
		ops = append(ops, Op{Name: stepName(o), Family: FamilyNN, DTypes: kernelTypes(o.Kernel()), Kernels: one(o.Kernel())})
	}
	return ops
}

// stepName is op's name in the op table, for Supports: "Step(sgd)" …
func stepName(op Optimizer) string { return "Step(" + op.String() + ")" }

// stateNames documents each update's state tensors in misuse messages.
func stateNames(op Optimizer, a StepArgs) string {
	switch op {
	case SGD:
		if a.Momentum != 0 {
			return " (momentum buffer)"
		}
		return " (none without momentum)"
	case Adam:
		return " (exp_avg, exp_avg_sq)"
	case RMSProp:
		s := "square_avg"
		if a.Momentum != 0 {
			s += ", momentum buffer"
		}
		if a.Centered {
			s += ", grad_avg"
		}
		return " (" + s + ")"
	case Adagrad:
		return " (sum)"
	}
	return ""
}

// Step updates param in place by one step of op, reading grad (times
// scale's single element when scale is not nil) and reading and writing
// the state tensors, in one kernel on param's device: no host round trip.
// Step(SGD, …) is torch.optim.SGD's update of one parameter, and so on;
// hal.Optimizer gives each rule and the state it keeps, which the caller
// allocates (zeros; Adagrad's sum starts at its initial accumulator).
//
// This is the one tensor operation that writes into its operands, so param
// and state must be contiguous and share no storage with each other or
// with grad and scale; a param that is a view writes through to the tensor
// it views, as in PyTorch. grad may have any strides (a strided one is
// copied first); every operand has param's float dtype, grad and state
// have param's shape, and scale (nil for none) holds one element. Misuse
// panics with an *Error. A device failure, or one carried by an operand,
// is recorded on param and the state tensors, which then report it.
func Step(op Optimizer, param, grad *Tensor, state []*Tensor, scale *Tensor, a StepArgs) {
	name := "Step"
	want := op.States(a)
	if want < 0 {
		misuse(name, "unknown optimizer %v", op)
	}
	name = stepName(op)
	param.checkLive(name)
	defer releaseAll(routeInPlace(name, append([]*Tensor{param}, state...), &grad, &scale)...)
	// An int32 or float16 param is an unsupported operation, not misuse.
	checkOp(name, param.dev, param.dtype)
	operands := []*Tensor{param, grad}
	what := []string{"param", "grad"}
	for i, s := range state {
		operands = append(operands, s)
		what = append(what, fmt.Sprintf("state[%d]", i))
	}
	if scale != nil {
		operands = append(operands, scale)
		what = append(what, "scale")
	}
	dev := sameDevice(name, operands...)
	for i, t := range operands[1:] {
		if t.dtype != param.dtype {
			misuse(name, "%s %s does not match param %s", what[i+1], nnDescribe(t), nnDescribe(param))
		}
	}
	if len(state) != want {
		misuse(name, "got %d state tensors, want %d%s", len(state), want, stateNames(op, a))
	}
	for i, t := range operands {
		if what[i] == "scale" {
			if t.Len() != 1 {
				misuse(name, "scale %s must hold one element", nnDescribe(t))
			}
			continue
		}
		if !slices.Equal(t.shape, param.shape) {
			misuse(name, "%s %s does not match param %s", what[i], nnDescribe(t), nnDescribe(param))
		}
		if what[i] != "grad" && !t.IsContiguous() {
			misuse(name, "%s %s with strides %v is not contiguous", what[i], nnDescribe(t), t.strides)
		}
	}
	// The written tensors must not alias anything: the kernel would read
	// an element another thread has already updated. grad and scale are
	// only read and may share storage.
	for i, t := range operands {
		for j, u := range operands[:i] {
			written := func(k int) bool { return what[k] != "grad" && what[k] != "scale" }
			if t.st != nil && t.st == u.st && (written(i) || written(j)) {
				misuse(name, "%s %s and %s %s share storage", what[j], nnDescribe(u), what[i], nnDescribe(t))
			}
		}
	}

	written := append([]*Tensor{param}, state...)
	fail := func(err error) {
		for _, t := range written {
			if t.err == nil {
				t.err = err
			}
		}
	}
	if err := inputsErr(name, operands...); err != nil {
		fail(err)
		return
	}
	if param.Len() == 0 {
		return
	}
	g := grad
	if !grad.IsContiguous() {
		g = grad.copy(name)
		defer g.Release()
		if g.err != nil {
			fail(g.err)
			return
		}
	}
	if !dev.caps().Supports(op.Kernel(), param.dtype) {
		if err := composedStep(name, op, param, g, state, scale, a); err != nil { // see composites.go
			fail(err)
		}
		return
	}
	views := make([]hal.View, len(state))
	for i, s := range state {
		views[i] = s.view()
	}
	var sv hal.View
	if scale != nil {
		sv = scale.view()
	}
	err := dev.hal.Step(op, param.view(), g.view(), views, sv, a)
	runtime.KeepAlive(operands)
	runtime.KeepAlive(g)
	if err != nil {
		fail(dev.fail(name, err))
	}
}
