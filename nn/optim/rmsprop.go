package optim

import (
	"fmt"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// RMSPropConfig configures RMSProp (torch.optim.RMSprop). A zero LR and
// nil fields take PyTorch's defaults: LR 1e-2, Alpha 0.99, Eps 1e-8 (set
// one with new: RMSPropConfig{Alpha: new(0.9)}); WeightDecay and Momentum
// are 0 by default.
type RMSPropConfig struct {
	LR          float64
	Alpha       *float64 // decay rate of the squared-gradient average
	Eps         *float64 // added to the denominator's square root
	WeightDecay float64  // L2 penalty added to the gradient
	Momentum    float64
	Centered    bool // divide by the estimated variance rather than the second moment
}

// RMSProp divides the gradient by a running root mean square. Its state
// per parameter is "square_avg", then "momentum_buffer" with momentum,
// then "grad_avg" when centered.
type RMSProp struct{ core }

// NewRMSProp returns RMSProp over params. Invalid config values panic.
func NewRMSProp(params []nn.Named, c RMSPropConfig) *RMSProp {
	lr := c.LR
	if lr == 0 {
		lr = 1e-2
	}
	r := &rmspropRule{RMSPropConfig{Alpha: orDefault(c.Alpha, 0.99), Eps: orDefault(c.Eps, 1e-8),
		WeightDecay: c.WeightDecay, Momentum: c.Momentum, Centered: c.Centered}}
	return &RMSProp{newCore("NewRMSProp", params, lr, r)}
}

// Config returns the configuration in use, LR included.
func (o *RMSProp) Config() RMSPropConfig {
	c := o.r.(*rmspropRule).RMSPropConfig
	c.LR = o.lr
	return c
}

type rmspropRule struct{ RMSPropConfig }

func (r *rmspropRule) kind() string         { return "rmsprop" }
func (r *rmspropRule) op() tensor.Optimizer { return tensor.RMSProp }
func (r *rmspropRule) fill(int) float64     { return 0 }
func (r *rmspropRule) clone() rule {
	c := *r
	c.Alpha, c.Eps = clonePtr(r.Alpha), clonePtr(r.Eps)
	return &c
}

func (r *rmspropRule) states() []string {
	names := []string{"square_avg"}
	if r.Momentum != 0 {
		names = append(names, "momentum_buffer")
	}
	if r.Centered {
		names = append(names, "grad_avg")
	}
	return names
}

func (r *rmspropRule) args(lr float64, _ int64) tensor.StepArgs {
	return tensor.StepArgs{LR: lr, WeightDecay: r.WeightDecay, Momentum: r.Momentum,
		Alpha: *r.Alpha, Centered: r.Centered, Eps: *r.Eps}
}

func (r *rmspropRule) fields() []field {
	return []field{{key: "alpha", f: r.Alpha}, {key: "eps", f: r.Eps},
		{key: "weight_decay", f: &r.WeightDecay}, {key: "momentum", f: &r.Momentum},
		{key: "centered", b: &r.Centered}}
}

func (r *rmspropRule) check() error {
	switch {
	case !(*r.Alpha >= 0):
		return fmt.Errorf("invalid alpha %v", *r.Alpha)
	case !(*r.Eps >= 0):
		return fmt.Errorf("invalid eps %v", *r.Eps)
	case !(r.WeightDecay >= 0):
		return fmt.Errorf("invalid weight decay %v", r.WeightDecay)
	case !(r.Momentum >= 0):
		return fmt.Errorf("invalid momentum %v", r.Momentum)
	}
	return nil
}
