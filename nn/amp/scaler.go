package amp

import (
	"fmt"
	"math"
	"strconv"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// Config configures a GradScaler; zero fields take PyTorch's defaults.
type Config struct {
	InitScale      float64 // 0: 2¹⁶
	GrowthFactor   float64 // 0: 2
	BackoffFactor  float64 // 0: 0.5
	GrowthInterval int     // 0: 2000
	// Disabled makes Scale, Unscale and Step pass through (enabled=False).
	Disabled bool
}

func (c Config) withDefaults() Config {
	if c.InitScale == 0 {
		c.InitScale = 65536
	}
	if c.GrowthFactor == 0 {
		c.GrowthFactor = 2
	}
	if c.BackoffFactor == 0 {
		c.BackoffFactor = 0.5
	}
	if c.GrowthInterval == 0 {
		c.GrowthInterval = 2000
	}
	return c
}

// GradScaler scales the loss and unscales the gradients of a set of
// parameters, skipping the optimizer steps whose gradients overflowed and
// adapting the scale, as torch.cuda.amp.GradScaler. Its methods are
// called once per step, in the order Scale, (Backward), Unscale (optional:
// to clip gradients before the step), Step, Update.
type GradScaler struct {
	cfg    Config
	params []nn.Named

	scale         float32 // the current scale, a float32 as PyTorch's
	growthTracker int     // steps in a row without Inf/NaN since the last change

	unscaled bool // Unscale ran this step
	// nonFinite accumulates, on the device, a value that is NaN when a
	// gradient held Inf or NaN (the sum of gradient·0); nil before Unscale.
	nonFinite []*tensor.Tensor
	foundInf  bool
	checked   bool // foundInf holds this step's answer
}

// NewGradScaler returns a scaler for the gradients of params (a model's
// Parameters, which its optimizer updates). PyTorch's unscale_(optimizer)
// finds them in the optimizer's param groups; optim.Optimizer does not
// expose its parameters, so the scaler is given them here, once.
func NewGradScaler(params []nn.Named, cfg Config) *GradScaler {
	cfg = cfg.withDefaults()
	if !(cfg.InitScale > 0) || !(cfg.GrowthFactor > 1) || !(cfg.BackoffFactor > 0 && cfg.BackoffFactor < 1) || cfg.GrowthInterval < 1 {
		panic(&tensor.Error{Op: "amp.NewGradScaler", Msg: fmt.Sprintf("init scale %g must be > 0, growth factor %g > 1, backoff factor %g in (0, 1), growth interval %d ≥ 1",
			cfg.InitScale, cfg.GrowthFactor, cfg.BackoffFactor, cfg.GrowthInterval)})
	}
	return &GradScaler{cfg: cfg, params: params, scale: float32(cfg.InitScale)}
}

// Scale returns loss multiplied by the current scale (a new value the
// caller releases); disabled, a new reference to loss.
func (s *GradScaler) Scale(loss *graph.Value) *graph.Value {
	if s.cfg.Disabled {
		return loss.Reshape(loss.Shape()...)
	}
	return loss.MulScalar(float64(s.scale))
}

// CurrentScale returns the scale the next Scale multiplies by
// (get_scale); 1 when disabled.
func (s *GradScaler) CurrentScale() float64 {
	if s.cfg.Disabled {
		return 1
	}
	return float64(s.scale)
}

// GrowthTracker returns the count of steps in a row without Inf or NaN
// gradients since the scale last changed.
func (s *GradScaler) GrowthTracker() int { return s.growthTracker }

// Unscale divides every parameter's gradient by the scale (multiplies by
// its float32 reciprocal, as PyTorch) and notes, on the device, whether
// any is Inf or NaN. Call it once per step at most, before Step, when the
// gradients must be read unscaled (clipping); Step calls it otherwise.
func (s *GradScaler) Unscale() error {
	if s.cfg.Disabled {
		return nil
	}
	if s.unscaled {
		return fmt.Errorf("amp.GradScaler.Unscale: already called since the last Update")
	}
	s.unscaled = true
	inv := float64(float32(1 / float64(s.scale)))
	return tensor.Catch(func() {
		for _, p := range s.params {
			g := p.Value.Grad()
			if g == nil {
				continue
			}
			t := g.Tensor()
			zero := t.MulScalar(0) // NaN exactly where t is Inf or NaN
			s.nonFinite = append(s.nonFinite, zero.Sum(nil, false))
			zero.Release()
			p.Value.SetGrad(t.MulScalar(inv))
		}
	})
}

// FoundInf reports whether this step's gradients held Inf or NaN (after
// Unscale or Step; it reads the device once).
func (s *GradScaler) FoundInf() (bool, error) {
	if s.checked || s.cfg.Disabled {
		return s.foundInf, nil
	}
	found := false
	for _, z := range s.nonFinite {
		v, err := z.Item()
		if err != nil {
			return false, err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			found = true
		}
	}
	s.foundInf, s.checked = found, true
	return found, nil
}

// Step unscales the gradients (unless Unscale already did) and runs
// opt.Step unless a gradient is Inf or NaN, as GradScaler.step; it
// reports whether the optimizer stepped.
func (s *GradScaler) Step(opt optim.Optimizer) (stepped bool, err error) {
	if s.cfg.Disabled {
		return true, opt.Step()
	}
	if !s.unscaled {
		if err := s.Unscale(); err != nil {
			return false, err
		}
	}
	found, err := s.FoundInf()
	if err != nil || found {
		return false, err
	}
	return true, opt.Step()
}

// Update adapts the scale to this step, as torch._amp_update_scale_: an
// Inf or NaN gradient multiplies it by BackoffFactor and restarts the
// count; otherwise the count grows, and reaching GrowthInterval multiplies
// the scale by GrowthFactor (unless that overflows float32) and restarts
// it. It ends the step: the next Unscale may run.
func (s *GradScaler) Update() error {
	if s.cfg.Disabled {
		return nil
	}
	found, err := s.FoundInf()
	if err != nil {
		return err
	}
	s.scale, s.growthTracker = UpdateScale(s.scale, s.growthTracker, found, s.cfg)
	for _, z := range s.nonFinite {
		z.Release()
	}
	s.nonFinite, s.unscaled, s.checked, s.foundInf = nil, false, false, false
	return nil
}

// UpdateScale is the dynamic loss-scaling rule on its own: the scale and
// growth count after a step with (found) or without Inf/NaN gradients.
// cfg's zero fields take the defaults. Each product is computed in float64
// and rounded to the float32 scale, as PyTorch's kernel does.
func UpdateScale(scale float32, growthTracker int, found bool, cfg Config) (float32, int) {
	cfg = cfg.withDefaults()
	if found {
		return float32(float64(scale) * cfg.BackoffFactor), 0
	}
	successful := growthTracker + 1
	if successful == cfg.GrowthInterval {
		if grown := float32(float64(scale) * cfg.GrowthFactor); !math.IsInf(float64(grown), 0) && !math.IsNaN(float64(grown)) {
			scale = grown
		}
		return scale, 0
	}
	return scale, successful
}

// State returns the scaler's state as checkpoint metadata ("amp.scale",
// "amp.growth_tracker"): merge it into the metadata given to
// checkpoint.WriteOptimizer, and give what ReadOptimizer returns to
// LoadState.
func (s *GradScaler) State() map[string]string {
	return map[string]string{
		"amp.scale":          strconv.FormatFloat(float64(s.scale), 'g', -1, 32),
		"amp.growth_tracker": strconv.Itoa(s.growthTracker),
	}
}

// LoadState restores what State returned; other keys are ignored.
func (s *GradScaler) LoadState(metadata map[string]string) error {
	sc, err1 := strconv.ParseFloat(metadata["amp.scale"], 32)
	gt, err2 := strconv.Atoi(metadata["amp.growth_tracker"])
	if err1 != nil || err2 != nil || !(sc > 0) || gt < 0 {
		return fmt.Errorf("amp.GradScaler.LoadState: bad or missing amp.scale %q / amp.growth_tracker %q",
			metadata["amp.scale"], metadata["amp.growth_tracker"])
	}
	s.scale, s.growthTracker = float32(sc), gt
	return nil
}
