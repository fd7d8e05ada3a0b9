//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// stepCapabilities declares the fused updates in float32 and, where the
// device has shader-f16, in float16: param, grad, state and scale stored
// as float16, the update computed in float32 and rounded once on store,
// as the CPU backend computes it.
func (d *Device) stepCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilyStep)
}

// stepShader is the data of step.wgsl.
type stepShader struct {
	Op                             string
	Type, Enable                   string // the operands' WGSL type; its enable directive
	States                         []int
	Grad, Scale, Uniform           int
	Scaled, Decay, Momentum        bool
	FirstStep, Nesterov, Decoupled bool
	Centered                       bool
	Mean                           string // the state_offset component of RMSProp's mean
	MeanState                      int
	WorkgroupSize                  int
}

// key names the variant completely, for the kernel cache.
func (s stepShader) key() string {
	return fmt.Sprintf("step/%s/%s/s%d/scaled=%t/decay=%t/momentum=%t/first=%t/nesterov=%t/decoupled=%t/centered=%t",
		s.Op, s.Type, len(s.States), s.Scaled, s.Decay, s.Momentum, s.FirstStep, s.Nesterov, s.Decoupled, s.Centered)
}

// Step is the fused optimizer update: one kernel per call, reading and
// writing param and the state in place. The hyperparameters go to the
// kernel rounded to float32 once, as PyTorch rounds a Python scalar to a
// float32 tensor op's type; what depends on several of them (1 − β,
// lr/bc₁, √bc₂, 1 − lr·wd) is computed in float64 first, as Python does.
func (d *Device) Step(op hal.Optimizer, param, grad hal.View, state []hal.View, scale hal.View, a hal.StepArgs) error {
	name := op.Kernel()
	want := op.States(a)
	if want < 0 {
		return fmt.Errorf("webgpu: %s: unknown optimizer %v: %w", name, op, hal.ErrInvalid)
	}
	if err := d.supports(name, param.DType); err != nil {
		return err
	}
	views := append([]hal.View{param, grad}, state...)
	scaled := scale.Buf != nil
	if scaled {
		views = append(views, scale)
	}
	for _, v := range views[1:] {
		if v.DType != param.DType {
			return fmt.Errorf("webgpu: %s: %v does not have param's dtype %v: %w", name, v, param.DType, hal.ErrInvalid)
		}
	}
	if len(state) != want {
		return fmt.Errorf("webgpu: %s: got %d state views, want %d for %+v: %w", name, len(state), want, a, hal.ErrInvalid)
	}
	o, err := d.operands(name, views...)
	if err != nil {
		return err
	}
	tensors := len(state) + 2 // param, grad, state: all of param's shape, contiguous
	for i, v := range views[:tensors] {
		if i > 0 {
			if err := shapeIs(name, "operand", v, param.Shape...); err != nil {
				return err
			}
		}
		if err := contiguousDst(name, "operand", v); err != nil {
			return err
		}
	}
	if scaled && scale.Elements() != 1 {
		return fmt.Errorf("webgpu: %s: scale %v is not a single element: %w", name, scale, hal.ErrInvalid)
	}
	// param and the state are bound read-write, which WebGPU forbids
	// alongside any other binding of the same buffer; grad and scale are
	// both read-only and may share one.
	written := func(i int) bool { return i == 0 || (i >= 2 && i < tensors) }
	for i := range o {
		for j := range i {
			if o[i].alloc == o[j].alloc && (written(i) || written(j)) {
				return fmt.Errorf("webgpu: %s: operands %v and %v share a buffer: %w", name, views[j], views[i], hal.ErrInvalid)
			}
		}
	}
	if err := d.open(name); err != nil {
		return err
	}
	n := param.Elements()
	if n == 0 {
		return nil
	}

	sh := stepShader{
		Op: op.String(), Type: wgslType(param.DType), Enable: enableF16(param.DType),
		Scaled: scaled, Decay: a.WeightDecay != 0, Momentum: a.Momentum != 0,
		FirstStep: op == hal.SGD && a.FirstStep, Nesterov: op == hal.SGD && a.Nesterov,
		Decoupled: op == hal.Adam && a.Decoupled, Centered: op == hal.RMSProp && a.Centered,
		WorkgroupSize: d.workgroupSize(),
	}
	if op == hal.Adam || op == hal.Adagrad {
		sh.Momentum = false
	}
	for k := range state {
		sh.States = append(sh.States, k)
	}
	if sh.Centered {
		sh.MeanState = len(state) - 1
		sh.Mean = "xyz"[sh.MeanState : sh.MeanState+1]
	}
	sh.Grad = 1 + len(state)
	sh.Scale = sh.Grad + 1
	sh.Uniform = sh.Grad + 1
	if scaled {
		sh.Uniform++
	}
	k, err := d.rt.Kernel(sh.key(), sh.Uniform, 1+len(state), func() (string, error) { return render("step.wgsl", sh) })
	if err != nil {
		return err
	}
	// Bindings: param, state…, grad, scale.
	buffers := []*device.Allocation{o[0].alloc}
	var offsets [4]int
	for k := range state {
		buffers = append(buffers, o[2+k].alloc)
		offsets[k] = state[k].Offset
	}
	buffers = append(buffers, o[1].alloc)
	scaleOffset := 0
	if scaled {
		buffers = append(buffers, o[len(o)-1].alloc)
		scaleOffset = scale.Offset
	}
	f := func(x float64) float32 { return float32(x) }
	return d.launch(name, k, n, buffers, func(p *params) {
		p.u32(uint32(param.Offset)).u32(uint32(grad.Offset)).align(16)
		for _, off := range offsets {
			p.u32(uint32(off))
		}
		p.u32(uint32(scaleOffset)).
			f32(f(-a.LR)).f32(f(a.WeightDecay)).f32(f(a.Momentum)).f32(f(1 - a.Dampening)).
			f32(f(a.Beta1)).f32(f(1 - a.Beta1)).f32(f(a.Beta2)).f32(f(1 - a.Beta2)).
			f32(f(1 - a.LR*a.WeightDecay)).f32(f(-(a.LR / a.BiasCorrection1))).f32(f(math.Sqrt(a.BiasCorrection2))).
			f32(f(a.Eps)).f32(f(a.Alpha)).f32(f(1 - a.Alpha))
	})
}
