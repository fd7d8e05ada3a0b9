package amp_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/amp"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// ampGolden is testdata/golden/nn/amp.json (gen_amp.py).
type ampGolden struct {
	Updates []struct {
		Name          string
		Config        amp.Config
		FoundInf      []bool    `json:"found_inf"`
		Scale         []float64 `json:"scale"`
		GrowthTracker []int     `json:"growth_tracker"`
	}
	Training struct {
		Config amp.Config
		LR     float64
		X      struct {
			Shape []int
			Data  []float64
		}
		Y    []float64
		Init struct {
			Shape []int
			Data  []float64
		}
		Inject  []bool
		Stepped []bool
		Scale   []float64
		Weight  [][]float64
	}
}

func loadGolden(t *testing.T) *ampGolden {
	b, err := os.ReadFile("../../testdata/golden/nn/amp.json")
	require.NoError(t, err)
	var g ampGolden
	require.NoError(t, json.Unmarshal(b, &g))
	return &g
}

func f32s(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

// TestUpdateScaleGolden: the scale and growth count after each step of
// several runs (defaults, odd factors, growth into float32's overflow)
// are exactly the rule's.
func TestUpdateScaleGolden(t *testing.T) {
	for _, u := range loadGolden(t).Updates {
		t.Run(u.Name, func(t *testing.T) {
			scale, tracker := float32(u.Config.InitScale), 0
			for k, found := range u.FoundInf {
				scale, tracker = amp.UpdateScale(scale, tracker, found, u.Config)
				require.Equal(t, u.Scale[k], float64(scale), "scale after step %d", k)
				require.Equal(t, u.GrowthTracker[k], tracker, "growth tracker after step %d", k)
			}
		})
	}
}

// TestGradScalerTraining: SGD on a linear regression under the scaler,
// with an Inf injected into the gradient on some steps, on every device:
// the steps skipped, the scale and the weight after each step are
// PyTorch's.
func TestGradScalerTraining(t *testing.T) {
	g := loadGolden(t).Training
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		x := graph.Constant(tensor.FromFloat32(dev, f32s(g.X.Data), g.X.Shape...))
		y := graph.Constant(tensor.FromFloat32(dev, f32s(g.Y), len(g.Y)))
		w := graph.Param(tensor.FromFloat32(dev, f32s(g.Init.Data), g.Init.Shape...))
		defer x.Release()
		defer y.Release()
		defer w.Release()
		params := []nn.Named{{Name: "w", Value: w}}
		opt := optim.NewSGD(params, optim.SGDConfig{LR: g.LR})
		scaler := amp.NewGradScaler(params, g.Config)
		d := g.Init.Shape[1]
		for k, inject := range g.Inject {
			s := graph.NewScope()
			pred := graph.MatMul(s.Use(x.Detach()), w.T()).Squeeze(1)
			loss := pred.Sub(y).Square().MeanAll()
			scaled := scaler.Scale(loss)
			require.NoError(t, graph.Backward(scaled))
			if inject {
				gr := testdevice.Float64s(t, w.Grad().Tensor())
				gr[k%d] = math.Inf(1)
				w.SetGrad(tensor.FromFloat32(dev, f32s(gr), g.Init.Shape...))
			}
			stepped, err := scaler.Step(opt)
			require.NoError(t, err)
			found, err := scaler.FoundInf()
			require.NoError(t, err)
			assert.Equal(t, inject, found, "step %d", k)
			require.NoError(t, scaler.Update())
			opt.ZeroGrad()
			s.Close()
			require.Equal(t, g.Stepped[k], stepped, "step %d stepped", k)
			require.Equal(t, g.Scale[k], scaler.CurrentScale(), "scale after step %d", k)
			got := testdevice.Float64s(t, w.Tensor())
			for i := range got {
				require.InDelta(t, g.Weight[k][i], got[i], 2e-6*(1+math.Abs(g.Weight[k][i])), "weight %d after step %d", i, k)
			}
		}
	})
}

// TestGradScalerUnscale: Unscale divides by the scale (a gradient of
// scale·v becomes v), at most once per step; NaN counts as Inf; a
// disabled scaler passes through; the state round-trips through
// checkpoint metadata.
func TestGradScalerUnscale(t *testing.T) {
	dev := testdevice.CPU(t)
	w := graph.Param(tensor.FromFloat32(dev, []float32{1, 2, 3}, 3))
	defer w.Release()
	params := []nn.Named{{Name: "w", Value: w}}
	s := amp.NewGradScaler(params, amp.Config{InitScale: 8})
	w.SetGrad(tensor.FromFloat32(dev, []float32{8, -4, 0.5}, 3))
	require.NoError(t, s.Unscale())
	assert.Equal(t, []float64{1, -0.5, 0.0625}, testdevice.Float64s(t, w.Grad().Tensor()))
	require.ErrorContains(t, s.Unscale(), "already called")
	found, err := s.FoundInf()
	require.NoError(t, err)
	assert.False(t, found)
	require.NoError(t, s.Update())
	assert.Equal(t, 1, s.GrowthTracker())

	w.SetGrad(tensor.FromFloat32(dev, []float32{1, float32(math.NaN()), 0}, 3))
	require.NoError(t, s.Unscale())
	found, err = s.FoundInf()
	require.NoError(t, err)
	assert.True(t, found, "NaN is found as Inf is")
	require.NoError(t, s.Update())
	assert.Equal(t, 4.0, s.CurrentScale())

	state := s.State()
	r := amp.NewGradScaler(params, amp.Config{})
	require.NoError(t, r.LoadState(state))
	assert.Equal(t, 4.0, r.CurrentScale())
	assert.Equal(t, 0, r.GrowthTracker())
	require.Error(t, r.LoadState(map[string]string{"amp.scale": "x"}))

	off := amp.NewGradScaler(params, amp.Config{Disabled: true})
	l := graph.Constant(tensor.FromFloat32(dev, []float32{2.5}))
	defer l.Release()
	sl := off.Scale(l)
	defer sl.Release()
	assert.Equal(t, []float64{2.5}, testdevice.Float64s(t, sl.Tensor()))
	assert.Equal(t, 1.0, off.CurrentScale())

	err = tensor.Catch(func() { amp.NewGradScaler(params, amp.Config{BackoffFactor: 2}) })
	require.ErrorContains(t, err, "backoff factor 2")
}

// TestGradScalerStateInOptimizerCheckpoint: the scaler's state travels in
// the metadata of an optimizer checkpoint and comes back from it.
func TestGradScalerStateInOptimizerCheckpoint(t *testing.T) {
	dev := testdevice.CPU(t)
	w := graph.Param(tensor.FromFloat32(dev, []float32{1, 2}, 2))
	defer w.Release()
	params := []nn.Named{{Name: "w", Value: w}}
	opt := optim.NewSGD(params, optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	s := amp.NewGradScaler(params, amp.Config{InitScale: 1000, GrowthInterval: 5})
	// A clean step, an overflow (scale 1000 → 500), two clean steps.
	for _, g := range []float32{1, float32(math.Inf(-1)), 1, 1} {
		w.SetGrad(tensor.FromFloat32(dev, []float32{1, g}, 2))
		_, err := s.Step(opt)
		require.NoError(t, err)
		require.NoError(t, s.Update())
	}
	var buf bytes.Buffer
	require.NoError(t, checkpoint.WriteOptimizer(&buf, opt, s.State()))

	opt2 := optim.NewSGD(params, optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	meta, err := checkpoint.ReadOptimizer(&buf, opt2)
	require.NoError(t, err)
	r := amp.NewGradScaler(params, amp.Config{InitScale: 1000, GrowthInterval: 5})
	require.NoError(t, r.LoadState(meta))
	assert.Equal(t, 500.0, r.CurrentScale())
	assert.Equal(t, 2, r.GrowthTracker())
	assert.Equal(t, s.CurrentScale(), r.CurrentScale())
}
