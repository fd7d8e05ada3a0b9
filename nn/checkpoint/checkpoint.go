package checkpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// OptimPrefix prefixes the optimizer's tensor names and metadata keys in
// a checkpoint, keeping them apart from the module's state-dict names.
const OptimPrefix = "optim."

// OptimizerState is what Save and Load need of an optimizer; every
// optim.Optimizer is one. State returns tensors the optimizer keeps
// owning; LoadState copies what it keeps, since Load releases the tensors
// it passes once LoadState returns.
type OptimizerState interface {
	State() (map[string]*tensor.Tensor, map[string]string)
	LoadState(tensors map[string]*tensor.Tensor, metadata map[string]string) error
}

// Save writes m's parameters and buffers, under their state-dict names,
// and opt's state (when opt is not nil), under OptimPrefix, to the file at
// path. The file is replaced atomically: a failed or interrupted Save
// leaves any previous checkpoint at path intact.
func Save(path string, m nn.Module, opt OptimizerState) error {
	values, names, err := moduleValues(m)
	if err != nil {
		return err
	}
	tensors := make(map[string]*tensor.Tensor, len(names))
	for _, name := range names {
		tensors[name] = values[name].Tensor()
	}
	metadata := map[string]string{}
	if opt != nil {
		state, meta := opt.State()
		for k, t := range state {
			key := OptimPrefix + k
			if _, dup := tensors[key]; dup {
				return fmt.Errorf("checkpoint: optimizer state %q collides with the module's %q", k, key)
			}
			tensors[key] = t
		}
		for k, v := range meta {
			metadata[OptimPrefix+k] = v
		}
	}
	return WriteFile(path, tensors, metadata)
}

// Load reads the checkpoint at path into m and, when opt is not nil,
// into opt. Every parameter and buffer of m must be in the file with its
// shape and dtype; names the file has beyond m's (other than optimizer
// state) are an error too, and the error lists all missing, unexpected
// and mismatched names. Nothing is changed unless everything matches and
// opt accepts its state. Tensors are read onto the device of m's first
// parameter and copied to any other device a parameter is on; the
// optimizer gets its state on that first device. With a nil opt, any
// optimizer state in the file is ignored, so weights load for inference.
func Load(path string, m nn.Module, opt OptimizerState) (err error) {
	values, names, err := moduleValues(m)
	if err != nil {
		return err
	}
	var dev *tensor.Device
	if len(names) > 0 {
		dev = values[names[0]].Device()
	} else if dev, err = tensor.Open("cpu"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tensors, metadata, err := ReadFile(path, dev)
	if err != nil {
		return err
	}
	// Whatever is not handed to a value by SetTensor is released here.
	defer func() {
		for _, t := range tensors {
			t.Release()
		}
	}()

	optTensors := map[string]*tensor.Tensor{}
	var unexpected []string
	for name, t := range tensors {
		if _, ok := values[name]; ok {
			continue
		}
		if k, ok := strings.CutPrefix(name, OptimPrefix); ok {
			optTensors[k] = t
			continue
		}
		unexpected = append(unexpected, name)
	}
	var missing, mismatched []string
	for _, name := range names {
		t, ok := tensors[name]
		v := values[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case !slices.Equal(t.Shape(), v.Shape()) || t.DType() != v.DType():
			mismatched = append(mismatched, fmt.Sprintf("%s (file %v%v, module %v%v)",
				name, t.DType(), t.Shape(), v.DType(), v.Shape()))
		}
	}
	if len(missing)+len(unexpected)+len(mismatched) > 0 {
		slices.Sort(unexpected)
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "missing "+strings.Join(missing, ", "))
		}
		if len(unexpected) > 0 {
			parts = append(parts, "unexpected "+strings.Join(unexpected, ", "))
		}
		if len(mismatched) > 0 {
			parts = append(parts, "mismatched "+strings.Join(mismatched, ", "))
		}
		return fmt.Errorf("checkpoint: %s does not match the module: %s", path, strings.Join(parts, "; "))
	}

	// Copy to other devices first: a failure there still changes nothing.
	for _, name := range names {
		t, v := tensors[name], values[name]
		if t.Device() == v.Device() {
			continue
		}
		moved := t.To(v.Device())
		if err := moved.Err(); err != nil {
			moved.Release()
			return fmt.Errorf("checkpoint: moving %q to %v: %w", name, v.Device(), err)
		}
		t.Release()
		tensors[name] = moved
	}
	if opt != nil {
		optMeta := map[string]string{}
		for k, v := range metadata {
			if rest, ok := strings.CutPrefix(k, OptimPrefix); ok {
				optMeta[rest] = v
			}
		}
		if err := opt.LoadState(optTensors, optMeta); err != nil {
			return fmt.Errorf("checkpoint: loading optimizer state from %s: %w", path, err)
		}
	}
	for _, name := range names {
		values[name].SetTensor(tensors[name])
		delete(tensors, name)
	}
	return nil
}

// moduleValues returns m's parameters and buffers by name, and the names
// in m's order (parameters first).
func moduleValues(m nn.Module) (map[string]*graph.Value, []string, error) {
	if m == nil {
		return nil, nil, fmt.Errorf("checkpoint: nil module")
	}
	values := map[string]*graph.Value{}
	var names []string
	for _, list := range [][]nn.Named{m.Parameters(), m.Buffers()} {
		for _, n := range list {
			if _, dup := values[n.Name]; dup {
				return nil, nil, fmt.Errorf("checkpoint: the module names two values %q", n.Name)
			}
			if n.Value == nil {
				return nil, nil, fmt.Errorf("checkpoint: the module's %q is nil", n.Name)
			}
			values[n.Name] = n.Value
			names = append(names, n.Name)
		}
	}
	return values, names, nil
}
