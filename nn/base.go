package nn

import (
	"github.com/webtensor/webtensor/graph"
)

// Base gives a custom module everything of the Module interface except
// Forward, from what its constructor registers, as torch.nn.Module does
// from the attributes a constructor assigns: embed it, register each child
// module, parameter and buffer under its state-dict name, and write only
// Forward.
//
//	type Block struct {
//		nn.Base
//		Conv *nn.Conv2d
//		Norm *nn.BatchNorm
//		Scale *graph.Value
//	}
//
//	func NewBlock(dev *tensor.Device, gen *tensor.Generator) *Block {
//		b := &Block{}
//		b.Conv = nn.Add(b, "conv", nn.NewConv2d(dev, 16, 16, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, false, gen))
//		b.Norm = nn.Add(b, "bn", nn.NewBatchNorm2d(dev, 16))
//		b.Scale = nn.AddParam(b, "scale", graph.Param(tensor.Ones(dev, 16, 1, 1)))
//		return b
//	}
//
// Parameters then lists "conv.weight", "bn.weight", "bn.bias", "scale" in
// registration order, Buffers "bn.running_mean", "bn.running_var",
// "bn.num_batches_tracked", and SetTraining reaches the children. The
// registry holds what was registered: replace a child or a parameter by
// registering it again under the same name (it keeps its place), not only
// by assigning the field. A new module trains, as PyTorch's do.
type Base struct {
	entries []entry
	// eval is the inverse of the training flag, so that the zero Base
	// trains.
	eval bool
	// owner is the module that embeds this Base (the Composite that Add
	// and friends were given), so that String prints it, not Base.
	owner Module
}

// entry is one registered name: a child module, or a parameter or buffer
// of the module itself.
type entry struct {
	name   string
	child  Module
	value  *graph.Value
	buffer bool
}

// Child is a module's registered child and its name.
type Child struct {
	Name   string
	Module Module
}

// Composite is what embeds Base: the first argument of Add, AddParam and
// AddBuffer.
type Composite interface {
	Module
	base() *Base
}

func (b *Base) base() *Base { return b }

// Add registers child under name in m (a module that embeds Base) and
// returns it, for the field assignment. A second Add under the same name
// replaces the first in its place.
func Add[M Module](m Composite, name string, child M) M {
	m.base().owner = m
	m.base().set("Add", entry{name: name, child: child})
	child.SetTraining(m.Training())
	return child
}

// AddParam registers p, which requires a gradient, as m's parameter name.
func AddParam(m Composite, name string, p *graph.Value) *graph.Value {
	if p != nil && !p.RequiresGrad() {
		misuse("AddParam", "parameter %q does not require a gradient (use graph.Param, or AddBuffer for state that is not trained)", name)
	}
	m.base().owner = m
	m.base().set("AddParam", entry{name: name, value: p})
	return p
}

// AddBuffer registers v as m's buffer name: saved in checkpoints, not
// trained (running statistics, fixed embeddings).
func AddBuffer(m Composite, name string, v *graph.Value) *graph.Value {
	m.base().owner = m
	m.base().set("AddBuffer", entry{name: name, value: v, buffer: true})
	return v
}

func (b *Base) set(op string, e entry) {
	if e.name == "" {
		misuse(op, "empty name")
	}
	for i := range b.entries {
		if b.entries[i].name == e.name {
			b.entries[i] = e
			return
		}
	}
	b.entries = append(b.entries, e)
}

// Children lists the registered children in registration order.
func (b *Base) Children() []Child {
	var out []Child
	for _, e := range b.entries {
		if e.child != nil {
			out = append(out, Child{Name: e.name, Module: e.child})
		}
	}
	return out
}

// Parameters lists the registered parameters and the children's, by
// dotted names, in registration order. Nil parameters (an absent bias)
// are left out.
func (b *Base) Parameters() []Named { return b.state(false) }

// Buffers lists the registered buffers and the children's, as Parameters.
func (b *Base) Buffers() []Named { return b.state(true) }

func (b *Base) state(buffers bool) []Named {
	var out []Named
	for _, e := range b.entries {
		switch {
		case e.child != nil:
			var ns []Named
			if buffers {
				ns = e.child.Buffers()
			} else {
				ns = e.child.Parameters()
			}
			out = append(out, prefixed(e.name+".", ns)...)
		case e.value != nil && e.buffer == buffers:
			out = append(out, Named{Name: e.name, Value: e.value})
		}
	}
	return out
}

// SetTraining sets the mode of the module and of every registered child.
func (b *Base) SetTraining(training bool) {
	b.eval = !training
	for _, e := range b.entries {
		if e.child != nil {
			e.child.SetTraining(training)
		}
	}
}

// Training reports the mode last set (true for a new module).
func (b *Base) Training() bool { return !b.eval }

// String prints the embedding module with Format: its type name, its
// ExtraRepr if it has one, and its registered children. (Before anything
// is registered, Base does not know its module and prints "Base()".)
func (b *Base) String() string {
	if b.owner == nil {
		return "Base()"
	}
	return Format(b.owner)
}
