package optim

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// AdamConfig configures Adam and AdamW (torch.optim.Adam, AdamW). A zero
// LR and nil fields take PyTorch's defaults: LR 1e-3, Beta1 0.9, Beta2
// 0.999, Eps 1e-8; WeightDecay 0 for Adam and 1e-2 for AdamW (pass
// new(0.0), or use Adam, for none: without weight decay the two are the
// same update). Set a field with new: AdamConfig{Beta1: new(0.0)}.
// AMSGrad is not supported.
type AdamConfig struct {
	LR           float64
	Beta1, Beta2 *float64 // decay rates of the moment estimates, in [0, 1)
	Eps          *float64 // added to the denominator's square root
	WeightDecay  *float64 // Adam: L2 penalty on the gradient; AdamW: decoupled decay of the weights
}

// Adam is the Adam optimizer, or AdamW from NewAdamW. Its state per
// parameter is the first and second moment estimates, "exp_avg" and
// "exp_avg_sq".
type Adam struct{ core }

// NewAdam returns Adam over params, with weight decay as an L2 penalty
// added to the gradient. Invalid config values panic.
func NewAdam(params []nn.Named, c AdamConfig) *Adam {
	return newAdam("NewAdam", params, c, false)
}

// NewAdamW returns AdamW over params: Adam whose weight decay multiplies
// the weights by 1 − lr·WeightDecay before the update instead of adding
// to the gradient. Invalid config values panic.
func NewAdamW(params []nn.Named, c AdamConfig) *Adam {
	return newAdam("NewAdamW", params, c, true)
}

func newAdam(ctor string, params []nn.Named, c AdamConfig, decoupled bool) *Adam {
	wd := 0.0
	if decoupled {
		wd = 1e-2
	}
	lr := c.LR
	if lr == 0 {
		lr = 1e-3
	}
	r := &adamRule{AdamConfig: AdamConfig{Beta1: orDefault(c.Beta1, 0.9), Beta2: orDefault(c.Beta2, 0.999),
		Eps: orDefault(c.Eps, 1e-8), WeightDecay: orDefault(c.WeightDecay, wd)}, decoupled: decoupled}
	return &Adam{newCore(ctor, params, lr, r)}
}

// Config returns the configuration in use, LR included.
func (o *Adam) Config() AdamConfig {
	c := o.r.(*adamRule).AdamConfig
	c.LR = o.lr
	return c
}

type adamRule struct {
	AdamConfig
	decoupled bool
}

func (r *adamRule) kind() string {
	if r.decoupled {
		return "adamw"
	}
	return "adam"
}

func (r *adamRule) op() tensor.Optimizer { return tensor.Adam }
func (r *adamRule) states() []string     { return []string{"exp_avg", "exp_avg_sq"} }
func (r *adamRule) fill(int) float64     { return 0 }
func (r *adamRule) clone() rule {
	c := *r
	c.Beta1, c.Beta2, c.Eps, c.WeightDecay = clonePtr(r.Beta1), clonePtr(r.Beta2), clonePtr(r.Eps), clonePtr(r.WeightDecay)
	return &c
}

func (r *adamRule) args(lr float64, step int64) tensor.StepArgs {
	t := float64(step)
	return tensor.StepArgs{LR: lr, WeightDecay: *r.WeightDecay, Beta1: *r.Beta1, Beta2: *r.Beta2,
		BiasCorrection1: 1 - math.Pow(*r.Beta1, t), BiasCorrection2: 1 - math.Pow(*r.Beta2, t),
		Decoupled: r.decoupled, Eps: *r.Eps}
}

func (r *adamRule) fields() []field {
	return []field{{key: "beta1", f: r.Beta1}, {key: "beta2", f: r.Beta2},
		{key: "eps", f: r.Eps}, {key: "weight_decay", f: r.WeightDecay}}
}

func (r *adamRule) check() error {
	switch {
	case !(*r.Beta1 >= 0 && *r.Beta1 < 1):
		return fmt.Errorf("invalid beta1 %v", *r.Beta1)
	case !(*r.Beta2 >= 0 && *r.Beta2 < 1):
		return fmt.Errorf("invalid beta2 %v", *r.Beta2)
	case !(*r.Eps >= 0):
		return fmt.Errorf("invalid eps %v", *r.Eps)
	case !(*r.WeightDecay >= 0):
		return fmt.Errorf("invalid weight decay %v", *r.WeightDecay)
	}
	return nil
}
