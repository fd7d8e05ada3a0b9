package checkpoint

import (
	"fmt"
	"strings"

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
// leaves any previous checkpoint at path intact. SaveModule and
// SaveOptimizer keep the two apart instead, so that the model file is a
// plain state_dict and carries user metadata.
func Save(path string, m nn.Module, opt OptimizerState) error {
	if m == nil {
		return fmt.Errorf("checkpoint: nil module")
	}
	tensors := nn.StateDict(m)
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
func Load(path string, m nn.Module, opt OptimizerState) error {
	if m == nil {
		return fmt.Errorf("checkpoint: nil module")
	}
	params := nn.StateDict(m)
	var dev *tensor.Device
	for _, n := range append(m.Parameters(), m.Buffers()...) {
		dev = n.Value.Device()
		break
	}
	if dev == nil {
		var err error
		if dev, err = tensor.Open("cpu"); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	tensors, metadata, err := ReadFile(path, dev)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range tensors {
			t.Release()
		}
	}()

	modTensors := map[string]*tensor.Tensor{}
	optTensors := map[string]*tensor.Tensor{}
	for name, t := range tensors {
		if k, ok := strings.CutPrefix(name, OptimPrefix); ok && params[name] == nil {
			optTensors[k] = t
		} else {
			modTensors[name] = t
		}
	}
	if err := checkDTypes(params, modTensors, "file"); err != nil {
		return fmt.Errorf("checkpoint: %s does not match the module: %w", path, err)
	}
	if err := nn.CheckStateDict(m, modTensors); err != nil {
		return fmt.Errorf("checkpoint: %s does not match the module: %w", path, err)
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
	if err := nn.LoadStateDict(m, modTensors); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return nil
}

// checkDTypes reports the first tensor of ts whose dtype cannot fill the
// module's tensor of that name in params. Integers of either width fill
// each other: an Int64 counter saved from WebGPU, where it is Int32,
// loads into a CPU module. where names the source ("file", "stream").
func checkDTypes(params, ts map[string]*tensor.Tensor, where string) error {
	for name, t := range ts {
		p := params[name]
		if p == nil || p.DType() == t.DType() || (p.DType().IsInteger() && t.DType().IsInteger()) {
			continue
		}
		return fmt.Errorf("%s is %v in the %s, %v in the module", name, t.DType(), where, p.DType())
	}
	return nil
}
