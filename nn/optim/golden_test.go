package optim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// golden is testdata/golden/nn/optim.json, written by
// testdata/golden/gen_optim.py from torch.optim (PyTorch 1.13).
type golden struct {
	Torch string
	Steps []struct {
		Name, Optimizer string
		Config          json.RawMessage
		Params          []struct {
			Shape []int
			Init  []float64
			Grads [][]float64 // nil: no gradient that step
			After [][]float64
		}
	}
	Clip []struct {
		Name    string
		MaxNorm float64 `json:"max_norm"`
		Grads   []struct {
			Shape []int
			Data  []float64
		}
		TotalNorm float64 `json:"total_norm"`
		Clipped   [][]float64
	}
	Schedules []struct {
		Name, Kind string
		Args       struct {
			Base     float64
			StepSize int `json:"step_size"`
			Gamma    *float64
			TMax     int     `json:"t_max"`
			EtaMin   float64 `json:"eta_min"`
		}
		LRs []float64
	}
}

func loadGolden(t testing.TB) *golden {
	t.Helper()
	b, err := os.ReadFile("../../testdata/golden/nn/optim.json")
	require.NoError(t, err)
	var g golden
	require.NoError(t, json.Unmarshal(b, &g))
	require.NotEmpty(t, g.Steps)
	return &g
}

// newFromGolden builds the optimizer a golden case names; the JSON config
// uses the Go config's field names.
func newFromGolden(t testing.TB, kind string, config json.RawMessage, params []nn.Named) Optimizer {
	t.Helper()
	switch kind {
	case "sgd":
		var c SGDConfig
		require.NoError(t, json.Unmarshal(config, &c))
		return NewSGD(params, c)
	case "adam", "adamw":
		var c AdamConfig
		require.NoError(t, json.Unmarshal(config, &c))
		if kind == "adamw" {
			return NewAdamW(params, c)
		}
		return NewAdam(params, c)
	case "rmsprop":
		var c RMSPropConfig
		require.NoError(t, json.Unmarshal(config, &c))
		return NewRMSProp(params, c)
	case "adagrad":
		var c AdagradConfig
		require.NoError(t, json.Unmarshal(config, &c))
		return NewAdagrad(params, c)
	}
	t.Fatalf("unknown optimizer %q", kind)
	return nil
}

// The kernels compute in float32 as torch.optim does, but not in the same
// order (Adam's step size and denominator, say, are folded differently),
// so each step may differ from PyTorch's by a few roundings of the update
// and of the parameter. An update is at most about |p| in these cases, so
// five steps of a few float32 ulp (6e-8 relative) each stay within
// goldenRelTol·max|p|; goldenAbsTol covers parameters near zero. On a
// WebGPU device WGSL lets each ÷ be off by 2.5 ulp and each √ by 4.5
// (haltest.WGSLAccuracy), a few times IEEE's half ulp, still well inside:
// lavapipe with that latitude emulated differs by at most 1.5e-7·max|p|.
const (
	goldenRelTol = 1e-6
	goldenAbsTol = 1e-7
)

func TestGoldenSteps(t *testing.T) {
	g := loadGolden(t)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		worst := map[string]float64{}
		for _, c := range g.Steps {
			t.Run(c.Name, func(t *testing.T) {
				params := make([]nn.Named, len(c.Params))
				for i, p := range c.Params {
					params[i] = param(dev, fmt.Sprint(i), p.Init)
				}
				defer releaseParams(params)
				opt := newFromGolden(t, c.Optimizer, c.Config, params)
				defer opt.(interface{ Release() }).Release()
				for step := range c.Params[0].Grads {
					for i, p := range c.Params {
						if p.Grads[step] == nil {
							params[i].Value.ZeroGrad()
						} else {
							setGrad(dev, params[i], p.Grads[step])
						}
					}
					require.NoError(t, opt.Step())
					for i, p := range c.Params {
						got := read(t, params[i].Value.Tensor())
						want := p.After[step]
						scale := 0.0
						for _, w := range want {
							scale = math.Max(scale, math.Abs(w))
						}
						tol := goldenRelTol*scale + goldenAbsTol
						for j := range want {
							d := math.Abs(got[j] - want[j])
							worst[c.Optimizer] = math.Max(worst[c.Optimizer], d/scale)
							require.LessOrEqualf(t, d, tol, "step %d param %d element %d: got %v, want %v", step+1, i, j, got[j], want[j])
						}
					}
				}
			})
		}
		for k, v := range worst {
			t.Logf("%s: max |Δ|/max|p| = %.3g", k, v)
		}
	})
}

func TestGoldenClipGradNorm(t *testing.T) {
	g := loadGolden(t)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		worstNorm, worstGrad := 0.0, 0.0
		defer func() { t.Logf("max relative deviation: norm %.3g, clipped gradients %.3g", worstNorm, worstGrad) }()
		for _, c := range g.Clip {
			t.Run(c.Name, func(t *testing.T) {
				params := make([]nn.Named, len(c.Grads))
				for i, gr := range c.Grads {
					params[i] = nn.Named{Name: fmt.Sprint(i), Value: newParam(dev, gr.Shape)}
					params[i].Value.SetGrad(tensor.FromFloat32(dev, f32s(gr.Data), gr.Shape...))
				}
				defer releaseParams(params)
				norm := ClipGradNorm(params, c.MaxNorm)
				defer norm.Release()
				require.Empty(t, norm.Shape())
				got, err := norm.Item()
				require.NoError(t, err)
				// A float32 sum of a few dozen squares and a square root:
				// a few ulp.
				worstNorm = math.Max(worstNorm, math.Abs(got-c.TotalNorm)/c.TotalNorm)
				require.InDelta(t, c.TotalNorm, got, 1e-6*c.TotalNorm)
				for i, want := range c.Clipped {
					g := read(t, params[i].Value.Grad().Tensor())
					for j := range want {
						if want[j] != 0 {
							worstGrad = math.Max(worstGrad, math.Abs(g[j]-want[j])/math.Abs(want[j]))
						}
						require.InDelta(t, want[j], g[j], 1e-6*math.Abs(want[j])+1e-7, "grad %d element %d", i, j)
					}
				}
			})
		}
	})
}

func TestGoldenSchedules(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Schedules {
		t.Run(c.Name, func(t *testing.T) {
			var s Schedule
			switch c.Kind {
			case "step_lr":
				s = StepLR{Base: c.Args.Base, StepSize: c.Args.StepSize, Gamma: c.Args.Gamma}
			case "cosine":
				// No warm-up: CosineAnnealingLR itself, ending at Total.
				s = CosineWarmup{Base: c.Args.Base, Min: c.Args.EtaMin, Total: c.Args.TMax}
			default:
				t.Fatalf("unknown schedule %q", c.Kind)
			}
			for step, want := range c.LRs {
				// PyTorch's schedulers update the rate recursively, so it
				// drifts from the closed form by a few roundings.
				require.InDelta(t, want, s.LR(step), 1e-12*c.Args.Base, "step %d", step)
			}
			if c.Kind == "cosine" {
				// With a warm-up, the same curve shifted by Warmup steps.
				w := CosineWarmup{Base: c.Args.Base, Min: c.Args.EtaMin, Warmup: 3, Total: c.Args.TMax + 3}
				for step, want := range c.LRs {
					require.InDelta(t, want, w.LR(step+3), 1e-12*c.Args.Base, "step %d", step+3)
				}
			}
		})
	}
}
