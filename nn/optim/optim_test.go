package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// releaser is what every optimizer here has besides Optimizer.
type releaser interface {
	Optimizer
	Release()
}

// everyOptimizer builds one optimizer of each kind, with every state
// tensor in use (momentum, centered), over params.
func everyOptimizer() map[string]func([]nn.Named) releaser {
	return map[string]func([]nn.Named) releaser{
		"sgd":     func(p []nn.Named) releaser { return NewSGD(p, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true}) },
		"adam":    func(p []nn.Named) releaser { return NewAdam(p, AdamConfig{LR: 0.01, WeightDecay: new(0.1)}) },
		"adamw":   func(p []nn.Named) releaser { return NewAdamW(p, AdamConfig{LR: 0.01}) },
		"rmsprop": func(p []nn.Named) releaser { return NewRMSProp(p, RMSPropConfig{Momentum: 0.5, Centered: true}) },
		"adagrad": func(p []nn.Named) releaser {
			return NewAdagrad(p, AdagradConfig{LRDecay: 0.1, InitialAccumulator: 0.1})
		},
	}
}

func randFloats(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r.NormFloat64()
	}
	return out
}

func TestDefaults(t *testing.T) {
	dev := cpuDevice(t)
	p := []nn.Named{param(dev, "w", []float64{1})}
	defer releaseParams(p)

	require.Equal(t, AdamConfig{LR: 1e-3, Beta1: new(0.9), Beta2: new(0.999), Eps: new(1e-8), WeightDecay: new(0.0)}, NewAdam(p, AdamConfig{}).Config())
	require.Equal(t, AdamConfig{LR: 1e-3, Beta1: new(0.9), Beta2: new(0.999), Eps: new(1e-8), WeightDecay: new(1e-2)}, NewAdamW(p, AdamConfig{}).Config())
	require.Equal(t, RMSPropConfig{LR: 1e-2, Alpha: new(0.99), Eps: new(1e-8)}, NewRMSProp(p, RMSPropConfig{}).Config())
	require.Equal(t, AdagradConfig{LR: 1e-2, Eps: new(1e-10)}, NewAdagrad(p, AdagradConfig{}).Config())
	require.Equal(t, SGDConfig{LR: 0.5}, NewSGD(p, SGDConfig{LR: 0.5}).Config())

	// new(0.0) asks for a zero where nil means a non-zero default.
	c := NewAdamW(p, AdamConfig{Beta1: new(0.0), WeightDecay: new(0.0), Eps: new(0.0)}).Config()
	require.Equal(t, AdamConfig{LR: 1e-3, Beta1: new(0.0), Beta2: new(0.999), Eps: new(0.0), WeightDecay: new(0.0)}, c)
	require.Equal(t, 0.0, StepLR{Base: 1, StepSize: 1, Gamma: new(0.0)}.LR(1))
	require.Equal(t, 0.1, StepLR{Base: 1, StepSize: 1}.LR(1), "nil Gamma is PyTorch's 0.1")

	// The optimizer keeps its own copy: changing the caller's variable
	// afterwards changes nothing.
	beta1 := 0.5
	opt := NewAdam(p, AdamConfig{Beta1: &beta1})
	beta1 = 0.7
	require.Equal(t, 0.5, *opt.Config().Beta1)

	// SGD requires a rate; a zero one is set explicitly after construction.
	require.Error(t, tensor.Catch(func() { NewSGD(p, SGDConfig{}) }))
	sgd := NewSGD(p, SGDConfig{LR: 0.5})
	sgd.SetLR(0)
	require.Equal(t, 0.0, sgd.LR())
}

func TestMisuse(t *testing.T) {
	dev := cpuDevice(t)
	p := []nn.Named{param(dev, "w", []float64{1, 2})}
	defer releaseParams(p)
	x := graph.Param(tensor.Ones(dev, 2))
	defer x.Release()
	y := graph.Mul(x, x)
	defer y.Release()

	for name, f := range map[string]func(){
		"SGD without LR":          func() { NewSGD(p, SGDConfig{}) },
		"negative LR":             func() { NewAdam(p, AdamConfig{LR: -1}) },
		"beta1 of 1":              func() { NewAdam(p, AdamConfig{Beta1: new(1.0)}) },
		"negative beta2":          func() { NewAdamW(p, AdamConfig{Beta2: new(-0.5)}) },
		"NaN eps":                 func() { NewRMSProp(p, RMSPropConfig{Eps: new(math.NaN())}) },
		"negative momentum":       func() { NewSGD(p, SGDConfig{LR: 1, Momentum: -1}) },
		"Nesterov, no momentum":   func() { NewSGD(p, SGDConfig{LR: 1, Nesterov: true}) },
		"Nesterov with dampening": func() { NewSGD(p, SGDConfig{LR: 1, Momentum: 0.9, Dampening: 0.1, Nesterov: true}) },
		"negative lr_decay":       func() { NewAdagrad(p, AdagradConfig{LRDecay: -1}) },
		"no parameters":           func() { NewAdam(nil, AdamConfig{}) },
		"duplicate names":         func() { NewAdam([]nn.Named{p[0], {Name: "w", Value: x}}, AdamConfig{}) },
		"duplicate values":        func() { NewAdam([]nn.Named{p[0], {Name: "v", Value: p[0].Value}}, AdamConfig{}) },
		"computed value":          func() { NewAdam([]nn.Named{{Name: "y", Value: y}}, AdamConfig{}) },
		"SetLR negative":          func() { NewAdam(p, AdamConfig{}).SetLR(-1) },
		"StepLR without step":     func() { StepLR{Base: 1}.LR(0) },
		"CosineWarmup short":      func() { CosineWarmup{Base: 1, Warmup: 5, Total: 5}.LR(0) },
	} {
		err := tensor.Catch(f)
		require.Error(t, err, name)
		t.Logf("%s: %v", name, err)
	}
}

func TestSchedules(t *testing.T) {
	s := StepLR{Base: 0.1, StepSize: 3} // Gamma: PyTorch's 0.1
	for step, want := range []float64{0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001} {
		require.InDelta(t, want, s.LR(step), 1e-15, "step %d", step)
	}
	require.Equal(t, 0.1, s.LR(-1))

	c := CosineWarmup{Base: 0.2, Min: 0.02, Warmup: 4, Total: 10}
	for step, want := range []float64{0, 0.05, 0.1, 0.15} {
		require.InDelta(t, want, c.LR(step), 1e-15, "warm-up step %d", step)
	}
	require.Equal(t, 0.2, c.LR(4))
	require.InDelta(t, 0.11, c.LR(7), 1e-15, "half way down")
	for i := 4; i < 10; i++ {
		require.Less(t, c.LR(i+1), c.LR(i), "decreasing after the warm-up")
	}
	require.InDelta(t, 0.02, c.LR(10), 1e-15)
	require.Equal(t, 0.02, c.LR(11), "holds Min after Total")
	require.Equal(t, 0.02, c.LR(1000))
	require.Equal(t, 0.2, CosineWarmup{Base: 0.2, Total: 3}.LR(0), "no warm-up")
}

// TestStepDoesNotReadBack checks that a step, clipping included, is all
// device work: the host reads nothing until the caller reads a result.
func TestStepDoesNotReadBack(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		r := rand.New(rand.NewPCG(1, 2))
		for name, newOpt := range everyOptimizer() {
			t.Run(name, func(t *testing.T) {
				p := []nn.Named{param(dev, "a", randFloats(r, 6)), param(dev, "b", randFloats(r, 3))}
				defer releaseParams(p)
				opt := newOpt(p)
				defer opt.Release()
				reads := dev.Stats().HostReads
				for range 3 {
					setGrad(dev, p[0], randFloats(r, 6))
					setGrad(dev, p[1], randFloats(r, 3))
					ClipGradNorm(p, 0.5).Release()
					require.NoError(t, opt.Step())
					opt.ZeroGrad()
				}
				require.Equal(t, reads, dev.Stats().HostReads, "Step or ClipGradNorm read from the device")
				require.Nil(t, p[0].Value.Grad(), "ZeroGrad drops the gradient")
				read(t, p[0].Value.Tensor())
				require.Greater(t, dev.Stats().HostReads, reads)
			})
		}
	})
}

// TestBroadcastGradient steps with a gradient that is an expanded view, as
// Sum's backward produces, and expects what a dense copy gives.
func TestBroadcastGradient(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		for name, newOpt := range everyOptimizer() {
			t.Run(name, func(t *testing.T) {
				init := []float64{0.5, -1, 2, 0.25, 3, -2}
				a, b := param(dev, "w", init), param(dev, "w", init)
				defer releaseParams([]nn.Named{a, b})
				optA, optB := newOpt([]nn.Named{a}), newOpt([]nn.Named{b})
				defer optA.Release()
				defer optB.Release()
				for step := range 3 {
					g := float32(step) - 0.75
					scalar := tensor.FromFloat32(dev, []float32{g}, 1, 1)
					expanded := scalar.Expand(2, 3)
					view := expanded.Reshape(6) // a stride-0 view, not copied
					scalar.Release()
					expanded.Release()
					require.False(t, view.IsContiguous())
					a.Value.SetGrad(view)
					setGrad(dev, b, []float64{float64(g), float64(g), float64(g), float64(g), float64(g), float64(g)})
					require.NoError(t, optA.Step())
					require.NoError(t, optB.Step())
				}
				require.Equal(t, read(t, b.Value.Tensor()), read(t, a.Value.Tensor()))
			})
		}
	})
}

func TestClipGradNorm(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		r := rand.New(rand.NewPCG(3, 4))
		shapes := [][]int{{4, 5}, {7}, {1}, {3, 1, 2}}
		for _, maxNorm := range []float64{0.3, 2, 1e3} {
			t.Run(fmt.Sprint(maxNorm), func(t *testing.T) {
				params := make([]nn.Named, len(shapes)+1)
				grads := make([][]float64, len(shapes))
				sum := 0.0
				for i, s := range shapes {
					params[i] = nn.Named{Name: fmt.Sprint(i), Value: newParam(dev, s)}
					n := 1
					for _, d := range s {
						n *= d
					}
					grads[i] = randFloats(r, n)
					for j := range grads[i] {
						grads[i][j] = float64(float32(grads[i][j]))
						sum += grads[i][j] * grads[i][j]
					}
					params[i].Value.SetGrad(tensor.FromFloat32(dev, f32s(grads[i]), s...))
				}
				// A parameter without a gradient is skipped.
				params[len(shapes)] = nn.Named{Name: "none", Value: newParam(dev, []int{2})}
				defer releaseParams(params)

				norm := ClipGradNorm(params, maxNorm)
				defer norm.Release()
				want := math.Sqrt(sum)
				coef := math.Min(1, maxNorm/(want+1e-6))
				got, err := norm.Item()
				require.NoError(t, err)
				// float32 sums of 20 squares and a root: a few ulp.
				require.InDelta(t, want, got, 1e-6*want)
				for i := range shapes {
					g := read(t, params[i].Value.Grad().Tensor())
					for j := range g {
						require.InDelta(t, grads[i][j]*coef, g[j], 1e-6*math.Abs(grads[i][j])+1e-9)
					}
				}
				require.Nil(t, params[len(shapes)].Value.Grad())
			})
		}
		t.Run("no gradients", func(t *testing.T) {
			p := []nn.Named{{Name: "w", Value: newParam(dev, []int{3})}}
			defer releaseParams(p)
			norm := ClipGradNorm(p, 1)
			defer norm.Release()
			v, err := norm.Item()
			require.NoError(t, err)
			require.Zero(t, v)
			require.Nil(t, ClipGradNorm(nil, 1))
		})
	})
}

// TestStateRoundTrip saves an optimizer's state after some steps, loads it
// into a fresh optimizer over a copy of the parameters, and expects the two
// to take identical steps from there.
func TestStateRoundTrip(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		r := rand.New(rand.NewPCG(5, 6))
		for name, newOpt := range everyOptimizer() {
			t.Run(name, func(t *testing.T) {
				init := [][]float64{randFloats(r, 5), randFloats(r, 4), randFloats(r, 3)}
				mk := func() []nn.Named {
					return []nn.Named{param(dev, "0.weight", init[0]), param(dev, "0.bias", init[1]), param(dev, "never", init[2])}
				}
				a := mk()
				defer releaseParams(a)
				optA := newOpt(a)
				defer optA.Release()
				optA.SetLR(optA.LR() * 0.5)
				step := func(opt Optimizer, ps []nn.Named, grads [][]float64) {
					setGrad(dev, ps[0], grads[0])
					if grads[1] != nil {
						setGrad(dev, ps[1], grads[1])
					} else {
						ps[1].Value.ZeroGrad()
					}
					require.NoError(t, opt.Step())
				}
				step(optA, a, [][]float64{randFloats(r, 5), randFloats(r, 4)})
				step(optA, a, [][]float64{randFloats(r, 5), nil})
				step(optA, a, [][]float64{randFloats(r, 5), randFloats(r, 4)})

				tensors, meta := optA.State()
				require.Equal(t, name, meta["optimizer"])
				require.Equal(t, "3", meta["0.weight.step"])
				require.Equal(t, "2", meta["0.bias.step"])
				require.NotContains(t, meta, "never.step")
				for key, tt := range tensors {
					require.Contains(t, []string{"0.weight", "0.bias"}, prefix(key))
					require.Equal(t, dev, tt.Device())
				}

				// Load into an optimizer with other hyperparameters, over
				// parameters holding A's values, through the CPU.
				b := mk()
				defer releaseParams(b)
				for i := range a {
					b[i].Value.SetTensor(tensor.FromFloat32(dev, f32s(read(t, a[i].Value.Tensor()))))
				}
				cpu := cpuDevice(t)
				moved := map[string]*tensor.Tensor{}
				for k, v := range tensors {
					moved[k] = v.To(cpu)
				}
				optB := newOpt(b)
				defer optB.Release()
				optB.SetLR(123)
				require.NoError(t, optB.LoadState(moved, meta))
				for _, v := range moved {
					v.Release() // LoadState copied them
				}
				require.Equal(t, optA.LR(), optB.LR())
				_, metaB := optB.State()
				require.Equal(t, meta, metaB)

				for range 2 {
					g := [][]float64{randFloats(r, 5), randFloats(r, 4)}
					step(optA, a, g)
					step(optB, b, g)
				}
				for i := range a {
					require.Equal(t, read(t, a[i].Value.Tensor()), read(t, b[i].Value.Tensor()), a[i].Name)
				}
			})
		}
	})
}

func prefix(key string) string {
	for _, p := range []string{"0.weight", "0.bias"} {
		if len(key) > len(p) && key[:len(p)+1] == p+"." {
			return p
		}
	}
	return key
}

func TestLoadStateErrors(t *testing.T) {
	dev := cpuDevice(t)
	p := []nn.Named{param(dev, "w", []float64{1, 2, 3})}
	defer releaseParams(p)
	opt := NewAdam(p, AdamConfig{})
	defer opt.Release()
	setGrad(dev, p[0], []float64{1, 1, 1})
	require.NoError(t, opt.Step())
	good, meta := opt.State()

	with := func(key, value string) map[string]string {
		m := map[string]string{}
		for k, v := range meta {
			m[k] = v
		}
		if value == "" {
			delete(m, key)
		} else {
			m[key] = value
		}
		return m
	}
	wrongShape := tensor.Zeros(dev, 2)
	defer wrongShape.Release()
	for name, c := range map[string]struct {
		tensors map[string]*tensor.Tensor
		meta    map[string]string
		want    string
	}{
		"other kind":       {good, with("optimizer", "sgd"), `"sgd"`},
		"missing tensor":   {map[string]*tensor.Tensor{"w.exp_avg": good["w.exp_avg"]}, meta, "missing w.exp_avg_sq"},
		"unexpected":       {map[string]*tensor.Tensor{"w.exp_avg": good["w.exp_avg"], "w.exp_avg_sq": good["w.exp_avg_sq"], "v.sum": good["w.exp_avg"]}, meta, "unexpected v.sum"},
		"shape":            {map[string]*tensor.Tensor{"w.exp_avg": wrongShape, "w.exp_avg_sq": good["w.exp_avg_sq"]}, meta, "shape [2]"},
		"bad beta":         {good, with("beta1", "1.5"), "beta1"},
		"missing eps":      {good, with("eps", ""), "missing eps"},
		"bad step":         {good, with("w.step", "x"), "w.step"},
		"unknown metadata": {good, with("v.step", "1"), "unexpected metadata v.step"},
	} {
		err := opt.LoadState(c.tensors, c.meta)
		require.ErrorContains(t, err, c.want, name)
	}
	// Nothing changed: the state is still the one Step made.
	_, after := opt.State()
	require.Equal(t, meta, after)
	require.NoError(t, opt.LoadState(good, meta), "loading its own state")
}

// TestReleaseFreesEverything runs steps, clipping and a state round trip,
// and expects the device's live memory back where it started once the
// optimizers and parameters are released.
func TestReleaseFreesEverything(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		quietGC(t, dev) // no cleanup of an earlier test's tensor in between
		r := rand.New(rand.NewPCG(7, 8))
		for name, newOpt := range everyOptimizer() {
			t.Run(name, func(t *testing.T) {
				live := dev.Stats().LiveBytes
				p := []nn.Named{param(dev, "a", randFloats(r, 300)), param(dev, "b", randFloats(r, 30))}
				opt, other := newOpt(p), newOpt(p)
				for range 2 {
					setGrad(dev, p[0], randFloats(r, 300))
					setGrad(dev, p[1], randFloats(r, 30))
					ClipGradNorm(p, 1).Release()
					require.NoError(t, opt.Step())
				}
				require.NoError(t, other.LoadState(opt.State()))
				require.NoError(t, other.LoadState(opt.State()), "replacing loaded state frees it")
				require.NoError(t, dev.Sync())
				opt.Release()
				other.Release()
				releaseParams(p)
				require.Equal(t, live, dev.Stats().LiveBytes, "device memory leaked")
			})
		}
	})
}

// TestParameterMovesDevice steps a parameter on the CPU, moves it (as
// nn.To does, by SetTensor) to WebGPU and steps again: the state follows.
func TestParameterMovesDevice(t *testing.T) { forEachWebGPU(t, testParameterMovesDevice) }

func testParameterMovesDevice(t *testing.T, gpu *tensor.Device) {
	cpu := cpuDevice(t)
	init := []float64{1, -2, 3, 0.5}
	grads := [][]float64{{0.1, 0.2, -0.3, 0.4}, {-1, 2, 0.5, 0.25}, {0.3, 0.3, -0.1, 2}}
	for name, newOpt := range everyOptimizer() {
		t.Run(name, func(t *testing.T) {
			moved, stay := param(cpu, "w", init), param(cpu, "w", init)
			defer releaseParams([]nn.Named{moved, stay})
			optM, optS := newOpt([]nn.Named{moved}), newOpt([]nn.Named{stay})
			defer optM.Release()
			defer optS.Release()
			for i, g := range grads {
				if i == 1 {
					moved.Value.SetTensor(moved.Value.Tensor().To(gpu))
				}
				setGrad(moved.Value.Device(), moved, g)
				setGrad(cpu, stay, g)
				require.NoError(t, optM.Step())
				require.NoError(t, optS.Step())
			}
			require.Equal(t, gpu, moved.Value.Device())
			tensors, _ := optM.State()
			for _, s := range tensors {
				require.Equal(t, gpu, s.Device())
			}
			want := read(t, stay.Value.Tensor())
			got := read(t, moved.Value.Tensor())
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-6*math.Abs(want[i])+1e-7)
			}
		})
	}
}
