package optim

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// SGDConfig configures stochastic gradient descent, torch.optim.SGD. All
// fields default to zero, as in PyTorch, except LR, which PyTorch
// requires and so does NewSGD. A zero rate (to freeze the parameters
// for a while) is set after construction with SetLR(0).
type SGDConfig struct {
	LR          float64
	Momentum    float64 // 0: plain SGD, no state
	Dampening   float64
	WeightDecay float64 // L2 penalty added to the gradient
	Nesterov    bool    // needs Momentum > 0 and Dampening 0
}

// SGD is stochastic gradient descent, with optional momentum (Nesterov's
// or the heavy-ball form) and L2 weight decay. Its state is one buffer
// per parameter ("momentum_buffer") when Momentum is not zero.
type SGD struct{ core }

// NewSGD returns SGD over params. Invalid config values panic.
func NewSGD(params []nn.Named, c SGDConfig) *SGD {
	if c.LR == 0 {
		misuse("NewSGD", "LR is required (PyTorch has no default); for a zero rate, call SetLR(0) after NewSGD")
	}
	r := &sgdRule{c}
	r.LR = 0
	return &SGD{newCore("NewSGD", params, c.LR, r)}
}

// Config returns the configuration in use, LR included.
func (o *SGD) Config() SGDConfig {
	c := o.r.(*sgdRule).SGDConfig
	c.LR = o.lr
	return c
}

type sgdRule struct{ SGDConfig }

func (r *sgdRule) kind() string         { return "sgd" }
func (r *sgdRule) op() tensor.Optimizer { return tensor.SGD }
func (r *sgdRule) fill(int) float64     { return 0 }
func (r *sgdRule) clone() rule          { c := *r; return &c }
func (r *sgdRule) args(lr float64, _ int64) tensor.StepArgs {
	return tensor.StepArgs{LR: lr, WeightDecay: r.WeightDecay, Momentum: r.Momentum,
		Dampening: r.Dampening, Nesterov: r.Nesterov}
}

func (r *sgdRule) states() []string {
	if r.Momentum == 0 {
		return nil
	}
	return []string{"momentum_buffer"}
}

func (r *sgdRule) fields() []field {
	return []field{{key: "momentum", f: &r.Momentum}, {key: "dampening", f: &r.Dampening},
		{key: "weight_decay", f: &r.WeightDecay}, {key: "nesterov", b: &r.Nesterov}}
}

func (r *sgdRule) check() error {
	switch {
	case !(r.Momentum >= 0):
		return fmt.Errorf("invalid momentum %v", r.Momentum)
	case !(r.WeightDecay >= 0):
		return fmt.Errorf("invalid weight decay %v", r.WeightDecay)
	case !(r.Dampening >= 0 && r.Dampening <= 1):
		return fmt.Errorf("invalid dampening %v", r.Dampening)
	case r.Nesterov && (r.Momentum <= 0 || r.Dampening != 0):
		return errors.New("Nesterov momentum requires a momentum and zero dampening")
	}
	return nil
}
