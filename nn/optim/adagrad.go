package optim

import (
	"fmt"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// AdagradConfig configures Adagrad (torch.optim.Adagrad). A zero LR and
// a nil Eps take PyTorch's defaults: LR 1e-2, Eps 1e-10 (set Eps with
// new: AdagradConfig{Eps: new(0.0)}); LRDecay, WeightDecay and
// InitialAccumulator are 0 by default.
type AdagradConfig struct {
	LR                 float64
	LRDecay            float64  // step t uses LR/(1 + (t−1)·LRDecay)
	WeightDecay        float64  // L2 penalty added to the gradient
	InitialAccumulator float64  // the sum of squares starts here
	Eps                *float64 // added to the denominator's square root
}

// Adagrad divides each step by the root of the sum of all squared
// gradients so far. Its state per parameter is "sum".
type Adagrad struct{ core }

// NewAdagrad returns Adagrad over params. Invalid config values panic.
func NewAdagrad(params []nn.Named, c AdagradConfig) *Adagrad {
	lr := c.LR
	if lr == 0 {
		lr = 1e-2
	}
	r := &adagradRule{AdagradConfig{LRDecay: c.LRDecay, WeightDecay: c.WeightDecay,
		InitialAccumulator: c.InitialAccumulator, Eps: orDefault(c.Eps, 1e-10)}}
	return &Adagrad{newCore("NewAdagrad", params, lr, r)}
}

// Config returns the configuration in use, LR included.
func (o *Adagrad) Config() AdagradConfig {
	c := o.r.(*adagradRule).AdagradConfig
	c.LR = o.lr
	return c
}

type adagradRule struct{ AdagradConfig }

func (r *adagradRule) kind() string         { return "adagrad" }
func (r *adagradRule) op() tensor.Optimizer { return tensor.Adagrad }
func (r *adagradRule) states() []string     { return []string{"sum"} }
func (r *adagradRule) fill(int) float64     { return r.InitialAccumulator }
func (r *adagradRule) clone() rule {
	c := *r
	c.Eps = clonePtr(r.Eps)
	return &c
}

func (r *adagradRule) args(lr float64, step int64) tensor.StepArgs {
	return tensor.StepArgs{LR: lr / (1 + float64(step-1)*r.LRDecay), WeightDecay: r.WeightDecay, Eps: *r.Eps}
}

func (r *adagradRule) fields() []field {
	return []field{{key: "lr_decay", f: &r.LRDecay}, {key: "weight_decay", f: &r.WeightDecay},
		{key: "initial_accumulator_value", f: &r.InitialAccumulator}, {key: "eps", f: r.Eps}}
}

func (r *adagradRule) check() error {
	switch {
	case !(r.LRDecay >= 0):
		return fmt.Errorf("invalid lr_decay %v", r.LRDecay)
	case !(r.WeightDecay >= 0):
		return fmt.Errorf("invalid weight decay %v", r.WeightDecay)
	case !(r.InitialAccumulator >= 0):
		return fmt.Errorf("invalid initial accumulator %v", r.InitialAccumulator)
	case !(*r.Eps >= 0):
		return fmt.Errorf("invalid eps %v", *r.Eps)
	}
	return nil
}
