package onnx

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

// value is a graph value during a run: on the host (constants and shape
// arithmetic) or on the run's device.
type value struct {
	host *hostTensor
	dev  *tensor.Tensor
	name string
}

func (v value) present() bool { return v.host != nil || v.dev != nil }

func (v value) shape() []int {
	if v.dev != nil {
		return v.dev.Shape()
	}
	return v.host.shape
}

// run is the state of one Run call; Runs share nothing but the model's
// read-only graph and its upload cache.
type run struct {
	m        *Model
	dev      *tensor.Device
	float    tensor.DType // Float32, or Float16 under RunOptions
	env      map[string]value
	owned    map[*tensor.Tensor]int // device tensors this run made → names holding them
	borrowed map[*tensor.Tensor]bool
	temps    []*tensor.Tensor // uploads of non-constant host values for the current node
}

// Run runs the model on the device of its inputs and returns the graph's
// outputs, which the caller owns (Release them). Inputs are keyed by graph
// input name: floating-point inputs take Float32 tensors (Float16 and
// Float64 are cast), integer and bool inputs Int32 or Int64 tensors (ONNX's
// int64 token ids: an Int64 tensor, which only the CPU holds, is narrowed
// to Int32, and a value outside the int32 range is an error naming it). Any batch size the
// model's shapes allow runs. Run is safe for concurrent use; every
// intermediate tensor is released right after its last reader ran.
func (m *Model) Run(inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	return m.RunWith(inputs, RunOptions{})
}

// RunOptions configure RunWith.
type RunOptions struct {
	// DType is the floating-point type the model computes in: Float32
	// (the zero value) or Float16, on devices that run it (the CPU by
	// conversion, WebGPU adapters with shader-f16). Weights are converted
	// once per device and dtype; float inputs are cast to it and float
	// outputs come back in it.
	DType tensor.DType
}

// RunWith is Run with options.
func (m *Model) RunWith(inputs map[string]*tensor.Tensor, o RunOptions) (map[string]*tensor.Tensor, error) {
	r := &run{m: m, float: o.DType, env: map[string]value{}, owned: map[*tensor.Tensor]int{}, borrowed: map[*tensor.Tensor]bool{}}
	switch o.DType {
	case tensor.Float32, tensor.Float16:
	default:
		return nil, fmt.Errorf("onnx: RunWith: DType %v (Float32 or Float16 run)", o.DType)
	}
	defer r.releaseAll()
	if err := r.bindInputs(inputs); err != nil {
		return nil, err
	}
	for k, n := range m.plan {
		if err := r.step(n); err != nil {
			return nil, fmt.Errorf("onnx: %v: %w", n, err)
		}
		for _, in := range n.inputs {
			if m.lastUse[in] == k && !m.outputs[in] {
				r.drop(in)
			}
		}
		for _, out := range n.outputs {
			if _, read := m.lastUse[out]; !read && !m.outputs[out] {
				r.drop(out) // nothing reads it
			}
		}
	}
	return r.collect()
}

func (r *run) bindInputs(inputs map[string]*tensor.Tensor) error {
	var unknown, missing []string
	for name := range inputs {
		if _, ok := r.m.inputElem[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	for _, in := range r.m.Inputs {
		if inputs[in.Name] == nil {
			missing = append(missing, in.Name)
		}
	}
	if len(unknown)+len(missing) > 0 {
		sort.Strings(unknown)
		names := make([]string, len(r.m.Inputs))
		for k, in := range r.m.Inputs {
			names[k] = in.String()
		}
		return fmt.Errorf("onnx: Run: unknown inputs %q, missing inputs %q; the model takes %s", unknown, missing, strings.Join(names, ", "))
	}
	for _, in := range r.m.Inputs {
		t := inputs[in.Name]
		if err := t.Err(); err != nil {
			return fmt.Errorf("onnx: Run: input %q: %w", in.Name, err)
		}
		if r.dev == nil {
			r.dev = t.Device()
		} else if t.Device() != r.dev {
			return fmt.Errorf("onnx: Run: input %q is on %v, others on %v", in.Name, t.Device(), r.dev)
		}
		shape := t.Shape()
		ok := len(shape) == len(in.Shape)
		for k := 0; ok && k < len(shape); k++ {
			ok = in.Shape[k] < 0 || in.Shape[k] == shape[k]
		}
		if !ok {
			return fmt.Errorf("onnx: Run: input %q has shape %v, the model takes %v", in.Name, shape, in)
		}
		elem := onnxpb.TensorProto_DataType(r.m.inputElem[in.Name])
		switch {
		case isFloatType(elem) && t.DType() == r.float, isIntType(elem) && t.DType() == tensor.Int32:
			r.borrowed[t] = true
			r.env[in.Name] = value{dev: t, name: in.Name}
		case isIntType(elem) && t.DType() == tensor.Int64:
			c, err := narrowInt64(t)
			if err != nil {
				return fmt.Errorf("onnx: Run: input %q: %w", in.Name, err)
			}
			r.set(in.Name, value{dev: c})
		case isFloatType(elem) && (t.DType() == tensor.Float32 || t.DType() == tensor.Float16 || t.DType() == tensor.Float64):
			var c *tensor.Tensor
			if err := tensor.Catch(func() { c = t.Cast(r.float) }); err != nil {
				return fmt.Errorf("onnx: Run: input %q: %w", in.Name, err)
			}
			r.set(in.Name, value{dev: c})
		default:
			want := "Int32 or Int64"
			if isFloatType(elem) {
				want = r.float.String()
			}
			return fmt.Errorf("onnx: Run: input %q is %v; the model's %s input takes a %s tensor", in.Name, t.DType(), elem, want)
		}
	}
	if r.dev == nil {
		r.dev = tensor.Default()
	}
	return nil
}

// step runs one node on the host when all its inputs are there and the
// operator can, else on the device.
func (r *run) step(n *node) error {
	op := opTable[n.op]
	ins := make([]value, len(n.inputs))
	onHost := op.host != nil
	for k, name := range n.inputs {
		if name == "" {
			continue
		}
		v, ok := r.env[name]
		if !ok {
			h := r.m.consts[name]
			if h == nil {
				return fmt.Errorf("input %q has no value", name)
			}
			v = value{host: h, name: name}
		}
		ins[k] = v
		onHost = onHost && v.host != nil
	}
	if onHost {
		hs := make([]*hostTensor, len(ins))
		for k, v := range ins {
			hs[k] = v.host
		}
		outs, err := runHost(op, n, hs)
		if err != nil {
			return err
		}
		for k, out := range outs {
			if k < len(n.outputs) && n.outputs[k] != "" {
				r.env[n.outputs[k]] = value{host: out, name: n.outputs[k]}
			}
		}
		return nil
	}
	if op.dev == nil {
		return errors.New("needs constant inputs (it runs on the host only)")
	}
	var outs []value
	var opErr error
	err := catchAll(func() { outs, opErr = op.dev(r, n, ins) })
	defer r.releaseTemps()
	if err == nil {
		err = opErr
	}
	if err != nil {
		for _, v := range outs {
			if v.dev != nil && !r.borrowed[v.dev] && r.owned[v.dev] == 0 && !slices.Contains(r.temps, v.dev) {
				v.dev.Release()
			}
		}
		return err
	}
	for k, out := range outs {
		if k < len(n.outputs) && n.outputs[k] != "" {
			r.set(n.outputs[k], out)
		} else if out.dev != nil && !r.borrowed[out.dev] && r.owned[out.dev] == 0 && !slices.Contains(r.temps, out.dev) {
			out.dev.Release()
		}
	}
	return nil
}

// catchAll runs f, turning a tensor misuse panic (and any other panic of
// an op given hostile arguments) into an error.
func catchAll(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	return tensor.Catch(f)
}

// set binds name to v, counting v's device tensor as held once more.
func (r *run) set(name string, v value) {
	if v.dev != nil && r.borrowed[v.dev] {
		v.dev = v.dev.Reshape(v.dev.Shape()...) // our own reference
	}
	if v.dev != nil {
		r.owned[v.dev]++
	}
	v.name = name
	r.env[name] = v
}

// drop unbinds name, releasing its device tensor when no name holds it.
func (r *run) drop(name string) {
	v, ok := r.env[name]
	if !ok {
		return
	}
	delete(r.env, name)
	if v.dev != nil && r.owned[v.dev] > 0 {
		r.owned[v.dev]--
		if r.owned[v.dev] == 0 {
			delete(r.owned, v.dev)
			v.dev.Release()
		}
	}
}

func (r *run) releaseTemps() {
	for _, t := range r.temps {
		if r.owned[t] == 0 {
			t.Release()
		}
	}
	r.temps = r.temps[:0]
}

func (r *run) releaseAll() {
	r.releaseTemps()
	for t := range r.owned {
		t.Release()
	}
	r.owned = nil
}

// collect hands the graph outputs to the caller.
func (r *run) collect() (map[string]*tensor.Tensor, error) {
	out := map[string]*tensor.Tensor{}
	for _, o := range r.m.Outputs {
		v, ok := r.env[o.Name]
		if !ok {
			if h := r.m.consts[o.Name]; h != nil {
				v = value{host: h}
			} else {
				return nil, fmt.Errorf("onnx: output %q was not computed", o.Name)
			}
		}
		var t *tensor.Tensor
		if v.dev != nil {
			t = v.dev
			if r.owned[t] > 0 {
				r.owned[t]--
				if r.owned[t] == 0 {
					delete(r.owned, t) // ownership passes to the caller
				} else {
					t = t.Reshape(t.Shape()...)
				}
			} else {
				t = t.Reshape(t.Shape()...)
			}
		} else {
			var err error
			if t, err = upload(r.dev, v.host, o.Name, r.float); err != nil {
				return nil, err
			}
		}
		delete(r.env, o.Name)
		out[o.Name] = t
	}
	return out, nil
}

// tensor returns v on the run's device: constants are uploaded once per
// device and cached in the model; other host values are uploaded for this
// node only.
func (r *run) tensor(v value) (*tensor.Tensor, error) {
	if v.dev != nil {
		return v.dev, nil
	}
	if v.host == nil {
		return nil, errors.New("missing input")
	}
	if c := r.m.consts[v.name]; c == v.host {
		return r.m.cached(r.dev, v.name, v.host, r.float)
	}
	t, err := upload(r.dev, v.host, v.name, r.float)
	if err != nil {
		return nil, err
	}
	r.temps = append(r.temps, t)
	return t, nil
}

func (m *Model) cached(dev *tensor.Device, name string, h *hostTensor, float tensor.DType) (*tensor.Tensor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := uploadKey{dev, name, float}
	if t := m.uploaded[key]; t != nil {
		return t, nil
	}
	t, err := upload(dev, h, name, float)
	if err != nil {
		return nil, err
	}
	m.uploaded[key] = t
	return t, nil
}

// upload copies a host tensor to dev: floating-point types as float (Float32
// or Float16), integer types as Int32 (an error names the first element
// that overflows).
func upload(dev *tensor.Device, h *hostTensor, name string, float tensor.DType) (t *tensor.Tensor, err error) {
	shape := h.shape
	if h.isFloat() {
		f := make([]float32, len(h.f))
		for k, v := range h.f {
			f[k] = float32(v)
		}
		err = tensor.Catch(func() {
			t = scalarView(tensor.FromFloat32(dev, f, shape...), shape)
			if float != tensor.Float32 {
				c := t.Cast(float)
				t.Release()
				t = c
			}
		})
		return t, err
	}
	v, err := h.int32s(fmt.Sprintf("value %q", name))
	if err != nil {
		return nil, err
	}
	err = tensor.Catch(func() { t = scalarView(tensor.FromInt32(dev, v, shape...), shape) })
	return t, err
}

// scalarView gives a rank-0 shape its rank back: the creation functions
// read an empty shape as 1-D.
func scalarView(t *tensor.Tensor, shape []int) *tensor.Tensor {
	if len(shape) > 0 {
		return t
	}
	s := t.Reshape()
	t.Release()
	return s
}

// narrowInt64 copies an Int64 input (on the CPU: WebGPU devices narrow
// Int64 on upload already) to Int32, where the device ops run; a value
// out of int32's range is an error naming its position, not the silent
// saturation of Cast.
func narrowInt64(t *tensor.Tensor) (*tensor.Tensor, error) {
	v, err := t.Int64s()
	if err != nil {
		return nil, err
	}
	n := make([]int32, len(v))
	for k, x := range v {
		if x != int64(int32(x)) {
			return nil, fmt.Errorf("element %d = %d overflows int32 (%w)", k, x, tensor.ErrInt64Overflow)
		}
		n[k] = int32(x)
	}
	var c *tensor.Tensor
	err = tensor.Catch(func() { c = tensor.FromInt32(t.Device(), n, t.Shape()...) })
	return c, err
}
