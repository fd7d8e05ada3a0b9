package tensor

import (
	"fmt"
	"slices"
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// Op describes one user-facing operation: which dtypes it is defined for
// and which hal kernels it runs for each. It is the single source of
// truth for Supports, for the unsupported-operation errors and for the
// README's op table (cmd/optable).
type Op struct {
	Name   string  // the method or function, e.g. "Add", "Sum", "Pad(reflect)"
	Family string  // a heading for tables, e.g. "elementwise binary"
	DTypes []DType // the dtypes the op is defined for (its main operand's)
	// Kernels lists the hal kernels, with the dtype each runs in, that the
	// op issues for an operand of dtype t (one of DTypes). Every op also
	// needs the device to hold t at all, which Copy's declaration says. A
	// kernel of hal's optional tier (hal.Optional) that a device lacks
	// counts as present where the device runs its composition.
	Kernels func(t DType) []Kernel
}

// Kernel is one hal kernel key (hal.UnaryOp.Kernel(), hal.KernelCopy, …)
// at one dtype.
type Kernel struct {
	Name  string
	DType DType
}

func (k Kernel) String() string { return fmt.Sprintf("%s[%v]", k.Name, k.DType) }

var opRegistry struct {
	sync.Mutex
	ops    []Op
	byName map[string]Op
}

// registerOps adds ops to the table. The op files call it from package
// variable initializers (var _ = registerOps(…)), so the table is complete
// before any op runs.
func registerOps(ops ...Op) bool {
	opRegistry.Lock()
	defer opRegistry.Unlock()
	if opRegistry.byName == nil {
		opRegistry.byName = make(map[string]Op)
	}
	for _, op := range ops {
		if _, dup := opRegistry.byName[op.Name]; dup {
			panic("tensor: op " + op.Name + " registered twice")
		}
		opRegistry.byName[op.Name] = op
		opRegistry.ops = append(opRegistry.ops, op)
	}
	return true
}

// Ops lists every user-facing operation, grouped by family in a stable
// order.
func Ops() []Op {
	opRegistry.Lock()
	defer opRegistry.Unlock()
	out := slices.Clone(opRegistry.ops)
	slices.SortStableFunc(out, func(a, b Op) int { return familyRank(a.Family) - familyRank(b.Family) })
	return out
}

// families orders the op table; unknown families go last.
var families = []string{
	FamilyCreation, FamilyRandom, FamilyBinary, FamilyScalar, FamilyUnary, FamilyReduction,
	FamilyLinalg, FamilyShape, FamilyIndex, FamilyNN,
}

// Op families, the headings of the op table.
const (
	FamilyCreation  = "creation"
	FamilyRandom    = "random"
	FamilyBinary    = "elementwise binary"
	FamilyScalar    = "elementwise with a scalar"
	FamilyUnary     = "elementwise unary"
	FamilyReduction = "reductions"
	FamilyLinalg    = "linear algebra"
	FamilyShape     = "shape and views"
	FamilyIndex     = "indexing"
	FamilyNN        = "neural network"
)

func familyRank(f string) int {
	if i := slices.Index(families, f); i >= 0 {
		return i
	}
	return len(families)
}

func lookupOp(name string) (Op, bool) {
	opRegistry.Lock()
	defer opRegistry.Unlock()
	op, ok := opRegistry.byName[name]
	return op, ok
}

// Supports reports whether dev runs op (a name from Ops, e.g. "Exp") on
// operands of dtype t. An op that Supports accepts does not fail with
// hal.ErrUnsupported for a capability reason; one it refuses panics with
// an *Error wrapping hal.ErrUnsupported.
func Supports(dev *Device, op string, t DType) bool {
	spec, ok := lookupOp(op)
	return ok && spec.missing(dev.caps(), t) == nil
}

// RunsOn reports whether a device that declares caps runs the op for
// operands of dtype t; Supports is RunsOn with the device's own
// capabilities. It lets tools (cmd/optable) tabulate capabilities of
// devices that are not at hand.
func (o Op) RunsOn(caps hal.Capabilities, t DType) bool { return o.missing(caps, t) == nil }

// missing returns the first reason caps cannot run the op for t: nil when
// it can.
func (o Op) missing(caps hal.Capabilities, t DType) error {
	if !slices.Contains(o.DTypes, t) {
		return fmt.Errorf("%w: %s is not defined for %v", hal.ErrUnsupported, o.Name, t)
	}
	needs := append([]Kernel{{hal.KernelCopy, t}}, o.Kernels(t)...)
	for _, k := range needs {
		if !caps.Supports(k.Name, k.DType) && !composable(caps, k) {
			return fmt.Errorf("%w (no %s kernel for %v)", hal.ErrUnsupported, k.Name, k.DType)
		}
	}
	return nil
}

// checkOp panics with an unsupported-operation *Error unless dev runs the
// user-facing op for dtype. Ops call it first, so the message names what
// the user called even when an inner step is what is missing.
func checkOp(op string, dev *Device, dtype DType) {
	key := opDType{op, dtype}
	dev.checkedMu.RLock()
	_, done := dev.checked[key]
	dev.checkedMu.RUnlock()
	if done {
		return
	}
	spec, ok := lookupOp(op)
	if !ok {
		panic(fmt.Sprintf("tensor: op %q is not in the op table", op))
	}
	if err := spec.missing(dev.caps(), dtype); err != nil {
		panic(&Error{Op: op, Msg: fmt.Sprintf("%v on %v", dtype, dev), Err: err})
	}
	dev.checkedMu.Lock()
	if dev.checked == nil {
		dev.checked = make(map[opDType]struct{})
	}
	dev.checked[key] = struct{}{}
	dev.checkedMu.Unlock()
}

// Kernel-list helpers for the op table.

func kernels(ks ...Kernel) []Kernel { return ks }

func k(name string, t DType) Kernel { return Kernel{name, t} }

var (
	allTypes   = []DType{Float32, Float64, Int32, Float16, Int64}
	floatTypes = []DType{Float32, Float64, Float16}
	onlyF32    = []DType{Float32}
	onlyInt32  = []DType{Int32}
)

// kernelTypes are the dtypes hal's kernel table defines kernel for, for
// an op that is that one kernel.
func kernelTypes(kernel string) []DType {
	entry, _ := hal.LookupKernel(kernel)
	return entry.DTypes.List()
}

// one returns a Kernels function that runs kernel at the op's dtype.
func one(kernel string) func(DType) []Kernel {
	return func(t DType) []Kernel { return kernels(k(kernel, t)) }
}

func none(DType) []Kernel { return nil }

// toFloat32 is the cast an integer operand goes through before a
// float-only kernel.
func toFloat32(t DType) []Kernel {
	if !t.IsInteger() {
		return nil
	}
	return kernels(k(hal.KernelCopy, Float32))
}

// compute returns t's compute dtype: Int32 and Int64 promote to Float32.
func computeType(t DType) DType {
	if t.IsInteger() {
		return Float32
	}
	return t
}
