package nn

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// state lists m's parameters, then its buffers.
func state(m Module) []Named { return append(m.Parameters(), m.Buffers()...) }

// To moves every parameter and buffer of m to dev, keeping dtypes and
// values (a copy through host memory where dev is another device). A
// parameter's gradient is dropped. The first error (a device failure, or
// a dtype dev cannot hold, such as Float64 on WebGPU) is returned; the
// values moved before it stay moved.
func To(m Module, dev *tensor.Device) error {
	for _, n := range state(m) {
		if n.Value.Device() == dev {
			continue
		}
		var t *tensor.Tensor
		err := tensor.Catch(func() { t = n.Value.Tensor().To(dev) })
		if err == nil {
			if err = t.Err(); err != nil {
				t.Release()
			}
		}
		if err != nil {
			return fmt.Errorf("nn.To: %s: %w", n.Name, err)
		}
		n.Value.SetTensor(t)
	}
	return nil
}

// StateDict maps the names of m's parameters and buffers to their tensors,
// as PyTorch's state_dict. The tensors are borrowed: they stay owned by
// the module (do not release them) and change with it.
func StateDict(m Module) map[string]*tensor.Tensor {
	out := make(map[string]*tensor.Tensor)
	for _, n := range state(m) {
		out[n.Name] = n.Value.Tensor()
	}
	return out
}

// CheckStateDict reports, without changing anything, why LoadStateDict
// would refuse sd: every name of m must be in sd with the same shape, and
// sd must hold no other name. The error lists all missing, unexpected and
// mismatched names.
func CheckStateDict(m Module, sd map[string]*tensor.Tensor) error {
	ns := state(m)
	var missing, unexpected, mismatched []string
	known := make(map[string]bool, len(ns))
	for _, n := range ns {
		known[n.Name] = true
		t, ok := sd[n.Name]
		switch {
		case !ok:
			missing = append(missing, n.Name)
		case t == nil:
			mismatched = append(mismatched, fmt.Sprintf("%s (nil tensor)", n.Name))
		case !slices.Equal(t.Shape(), n.Value.Shape()):
			mismatched = append(mismatched, fmt.Sprintf("%s (shape %v in the state dict, %v in the module)", n.Name, t.Shape(), n.Value.Shape()))
		}
	}
	for name := range sd {
		if !known[name] {
			unexpected = append(unexpected, name)
		}
	}
	if len(missing)+len(unexpected)+len(mismatched) == 0 {
		return nil
	}
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
	return errors.New(strings.Join(parts, "; "))
}

// LoadStateDict copies sd's tensors into m's parameters and buffers of the
// same names, as PyTorch's load_state_dict(strict=True): the copies are
// converted to each value's dtype and device, and sd stays the caller's.
// Unless CheckStateDict accepts sd, nothing is loaded and the error lists
// the missing, unexpected and mismatched names.
func LoadStateDict(m Module, sd map[string]*tensor.Tensor) error {
	if err := CheckStateDict(m, sd); err != nil {
		return fmt.Errorf("nn.LoadStateDict: %w", err)
	}
	ns := state(m)
	// Make every copy before replacing anything, so that a device error
	// leaves the module as it was.
	copies := make([]*tensor.Tensor, len(ns))
	for i, n := range ns {
		var err error
		if err = tensor.Catch(func() { copies[i] = copyFor(sd[n.Name], n.Value) }); err == nil {
			err = copies[i].Err()
		}
		if err != nil {
			for _, c := range copies[:i+1] {
				if c != nil {
					c.Release()
				}
			}
			return fmt.Errorf("nn.LoadStateDict: %s: %w", n.Name, err)
		}
	}
	for i, n := range ns {
		n.Value.SetTensor(copies[i])
	}
	return nil
}

// copyFor returns a copy of src with v's dtype, on v's device, that owns
// its memory.
func copyFor(src *tensor.Tensor, v *graph.Value) *tensor.Tensor {
	t := src
	if t.Device() != v.Device() {
		t = t.To(v.Device()) // a copy
		if t.DType() == v.DType() {
			return t
		}
		defer t.Release()
	}
	if t.DType() != v.DType() {
		return t.Cast(v.DType()) // a copy
	}
	// Multiplying by 1 copies every value bit for bit, NaNs and −0
	// included; Contiguous would share a contiguous source's memory.
	return t.MulScalar(1)
}

// Release frees every parameter and buffer of m (and their gradients).
// The module is unusable afterwards.
func Release(m Module) {
	for _, n := range state(m) {
		n.Value.Release()
	}
}

// NumParams returns the number of trainable elements of m.
func NumParams(m Module) int {
	n := 0
	for _, p := range m.Parameters() {
		n += p.Value.Len()
	}
	return n
}

// ZeroGrad drops the gradients of every parameter of m.
func ZeroGrad(m Module) {
	for _, p := range m.Parameters() {
		p.Value.ZeroGrad()
	}
}
