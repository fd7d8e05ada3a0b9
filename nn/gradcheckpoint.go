package nn

import (
	"reflect"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Checkpointed runs a module under gradient checkpointing
// (graph.Checkpoint): its forward pass keeps only its input, and the
// backward pass recomputes it. Wrap each block of a deep stack to hold one
// block's activations at a time instead of all of them, for one more
// forward pass per step. Parameters, buffers, names and training mode are
// the wrapped module's, so a state dict loads into either.
type Checkpointed struct {
	Module Module
	// Generators are restored for the recomputation, so that dropout
	// draws the same masks: Checkpoint fills them with every
	// *tensor.Generator the module's fields hold.
	Generators []*tensor.Generator
}

// Checkpoint wraps m, as torch.utils.checkpoint.checkpoint(m, x) on every
// call. The generators m's layers draw from (the Gen fields of its
// Dropouts and attention, found through its exported fields) are saved
// and restored around the recomputation, as PyTorch's preserve_rng_state;
// a generator held elsewhere must be appended to Generators.
func Checkpoint(m Module) *Checkpointed {
	return &Checkpointed{Module: m, Generators: GeneratorsOf(m)}
}

// Forward runs the module on x through graph.Checkpoint.
func (c *Checkpointed) Forward(x *graph.Value) *graph.Value {
	return graph.Checkpoint(func(in []*graph.Value) *graph.Value { return c.Module.Forward(in[0]) }, []*graph.Value{x}, c.Generators...)
}

// Parameters are the wrapped module's.
func (c *Checkpointed) Parameters() []Named { return c.Module.Parameters() }

// Buffers are the wrapped module's.
func (c *Checkpointed) Buffers() []Named { return c.Module.Buffers() }

// SetTraining sets the wrapped module's mode.
func (c *Checkpointed) SetTraining(training bool) { c.Module.SetTraining(training) }

// Training reports the wrapped module's mode.
func (c *Checkpointed) Training() bool { return c.Module.Training() }

var generatorType = reflect.TypeFor[*tensor.Generator]()

// GeneratorsOf lists, once each and in field order, the random generators
// held by m's exported fields and, recursively, by the modules in them
// (fields, slices and the children of a Base).
func GeneratorsOf(m Module) []*tensor.Generator {
	var gens []*tensor.Generator
	seen := map[any]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			if v.Type() == generatorType {
				g := v.Interface().(*tensor.Generator)
				if !seen[g] {
					seen[g] = true
					gens = append(gens, g)
				}
				return
			}
			if seen[v.Interface()] {
				return
			}
			seen[v.Interface()] = true
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				if t.Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(m))
	return gens
}
