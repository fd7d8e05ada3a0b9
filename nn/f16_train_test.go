package nn_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// Float16 training: the golden models of train.json (an MLP and a small
// CNN), trained in mixed precision as torch.autocast does: float32 master
// weights that the optimizer updates, and a forward and backward pass in
// float16 (the inputs and each layer's weights cast to float16, the
// logits cast back to float32 for the loss). Every float16 kernel family
// a training step needs runs: Gemm and MatMul, Conv2d (im2col and
// col2im), max pooling and its scatter back, ReLU's mask, the bias
// gradients' sums, and casts both ways. One more run keeps the MLP's
// parameters themselves in float16, updated by the float16 Step.
//
// Tolerance, against PyTorch's float64 losses of the same float32
// training (train.json), at step k of n:
//
//	|Δloss| ≤ f16LossRTol·(1 + k/n)·(1 + |loss|)
//
// Each forward rounds the inputs, the weights and every activation to
// float16 (u = 2⁻¹¹ ≈ 4.9e-4 relative) through two or three layers; the
// kernels accumulate their sums in float32, so the logits carry a few u of
// rounding, which the softmax averages over the classes and the batch
// mean over 64 samples: the loss is off by about u·(1 + |loss|)/4, and the
// float16 gradients steer the trajectory by as much again over 20 steps.
// Measured: at most 5e-4 on the CPU backend and lavapipe, over the four
// runs (an eighth of the bound). f16LossRTol = 2e-3 is 4u: twenty
// times float32's trainLossRTol, and still smaller than the loss moves in
// one step when a learning rate is 10% off. The loss must also fall:
// training in float16 still trains.
const f16LossRTol = 2e-3

// f16ParamsLossRTol bounds the run with float16 parameters (the MLP with
// SGD and momentum): parameters, gradients and momentum buffers are
// float16 and the float16 Step updates them, computing in float32 and
// rounding each once per step, as torch.optim's float16 path without
// master weights. On top of the mixed-precision error, each step rounds
// every weight and buffer to float16 (u/2 relative), a random walk of
// about √20·u/2 ≈ 2u over the run, which the loss follows: 4e-3 is twice
// f16LossRTol. Measured: 1.7e-4 on the CPU backend and lavapipe (4% of
// the bound); a learning rate 10% off moves the loss by 3.3e-2, eight
// times the bound.
const f16ParamsLossRTol = 4e-3

// TestTrainFloat16 trains the golden models in float16 on every device
// that runs float16 kernels, and checks that a device without them says
// so instead.
func TestTrainFloat16(t *testing.T) {
	f := loadTrainGolden(t)
	trainForEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		if !float16Training(dev) {
			checkNoFloat16(t, dev)
			t.Skipf("%v runs no float16 (no shader-f16): refused with ErrUnsupported, as declared", dev)
		}
		for _, m := range f.Models {
			for _, r := range m.Runs {
				t.Run(m.Name+"/"+r.Optimizer, func(t *testing.T) {
					trainFloat16On(t, dev, &m, &r, trainGoldenArch[m.Name].build, false)
				})
			}
		}
		t.Run("float16-params", func(t *testing.T) {
			if !tensor.Supports(dev, "Step(sgd)", tensor.Float16) {
				t.Skipf("%v runs no float16 Step", dev)
			}
			m, r := goldenRun(t, f, "mlp", "sgd")
			trainFloat16On(t, dev, m, r, trainGoldenArch[m.Name].build, true)
		})
	})
}

// goldenRun finds the run of optimizer on model in f.
func goldenRun(t *testing.T, f *trainGoldenFile, model, optimizer string) (*trainGoldenModel, *trainGoldenRun) {
	for i := range f.Models {
		m := &f.Models[i]
		if m.Name != model {
			continue
		}
		for j := range m.Runs {
			if m.Runs[j].Optimizer == optimizer {
				return m, &m.Runs[j]
			}
		}
	}
	t.Fatalf("train.json has no %s run of %s", optimizer, model)
	return nil, nil
}

// float16Ops are the ops a float16 training step of the golden models
// issues.
var float16Ops = []string{"Cast", "Gemm", "MatMul", "Add", "ReLU", "Conv2d", "MaxPool2d", "Flatten", "Sum", "Where"}

// float16Training reports whether dev declares every op a float16
// training step needs.
func float16Training(dev *tensor.Device) bool {
	for _, op := range float16Ops {
		if !tensor.Supports(dev, op, tensor.Float16) {
			return false
		}
	}
	return true
}

// checkNoFloat16 asserts that a device that declares no float16 refuses
// it with ErrUnsupported, and that it really has no shader-f16: a device
// with the feature must run float16.
func checkNoFloat16(t *testing.T, dev *tensor.Device) {
	assert.NotContains(t, dev.Info().Features, "shader-f16", "the adapter offers shader-f16, yet %v declares no float16", dev)
	assert.False(t, dev.Capabilities().Supports(hal.KernelMatMul, hal.Float16))
	err := tensor.Catch(func() {
		x := tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2)
		defer x.Release()
		x.Cast(tensor.Float16).Release()
	})
	require.Error(t, err, "float16 is not declared, yet a cast to it ran")
	assert.True(t, errors.Is(err, hal.ErrUnsupported), "%v", err)
}

// halfOf returns a module that runs m in float16: a layer with weights
// gets its weight and bias cast to float16 (recorded, so their gradients
// reach m's float32 parameters); the others run as they are. release
// frees the casts.
func halfOf(m nn.Module) (half nn.Module, release func()) {
	switch l := m.(type) {
	case *nn.Linear:
		w, b := l.Weight.Cast(tensor.Float16), l.Bias.Cast(tensor.Float16)
		return &nn.Linear{Weight: w, Bias: b}, func() { w.Release(); b.Release() }
	case *nn.Conv2d:
		w, b := l.Weight.Cast(tensor.Float16), l.Bias.Cast(tensor.Float16)
		return &nn.Conv2d{Weight: w, Bias: b, Options: l.Options}, func() { w.Release(); b.Release() }
	}
	return m, func() {}
}

// toHalfParams replaces the weights and biases of seq's layers by float16
// copies, so that they are stored, updated and stepped in float16.
func toHalfParams(seq *nn.Sequential) {
	half := func(v *graph.Value) *graph.Value {
		h := graph.Param(v.Tensor().Cast(tensor.Float16))
		v.Release()
		return h
	}
	for _, layer := range seq.Modules {
		switch l := layer.(type) {
		case *nn.Linear:
			l.Weight, l.Bias = half(l.Weight), half(l.Bias)
		case *nn.Conv2d:
			l.Weight, l.Bias = half(l.Weight), half(l.Bias)
		}
	}
}

// trainFloat16On trains model m with run r in float16. With halfParams
// the parameters, their gradients and the optimizer state are float16
// too, updated by the float16 Step (see f16ParamsLossRTol); else the
// master weights stay float32 and only the passes run in float16.
func trainFloat16On(t *testing.T, dev *tensor.Device, m *trainGoldenModel, r *trainGoldenRun, build func(*tensor.Device) nn.Module, halfParams bool) {
	model := build(dev)
	defer nn.Release(model)
	init := make(map[string]*tensor.Tensor, len(m.Init))
	for name, w := range m.Init {
		init[name] = tensor.FromFloat32(dev, w.Data, w.Shape...)
	}
	err := nn.LoadStateDict(model, init)
	for _, w := range init {
		w.Release()
	}
	require.NoError(t, err)
	seq := model.(*nn.Sequential)
	rtol := f16LossRTol
	if halfParams {
		toHalfParams(seq)
		for _, p := range model.Parameters() {
			require.Equal(t, tensor.Float16, p.Value.DType(), "%s", p.Name)
		}
		rtol = f16ParamsLossRTol
	}

	var opt optim.Optimizer
	switch r.Optimizer {
	case "sgd":
		opt = optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: r.Config.LR, Momentum: r.Config.Momentum})
	case "adam":
		opt = optim.NewAdam(model.Parameters(), optim.AdamConfig{
			LR: r.Config.LR, Beta1: new(r.Config.Betas[0]), Beta2: new(r.Config.Betas[1]), Eps: new(r.Config.Eps)})
	default:
		t.Fatalf("unknown optimizer %q", r.Optimizer)
	}
	if rel, ok := opt.(interface{ Release() }); ok {
		defer rel.Release()
	}

	sample := 1
	for _, d := range m.X.Shape[1:] {
		sample *= d
	}
	n := len(m.Batches)
	losses := make([]float64, n)
	worst := 0.0
	for k, idx := range m.Batches {
		xs := make([]float32, 0, len(idx)*sample)
		ys := make([]int32, 0, len(idx))
		for _, i := range idx {
			xs = append(xs, m.X.Data[i*sample:(i+1)*sample]...)
			ys = append(ys, m.Y[i])
		}
		x32 := tensor.FromFloat32(dev, xs, append([]int{len(idx)}, m.X.Shape[1:]...)...)
		x := graph.Constant(x32.Cast(tensor.Float16))
		x32.Release()
		y := graph.Constant(tensor.FromInt32(dev, ys, len(idx)))

		var releases []func()
		h := x
		for _, layer := range seq.Modules {
			half, release := layer, func() {}
			if !halfParams {
				half, release = halfOf(layer)
			}
			releases = append(releases, release)
			next := half.Forward(h)
			if h != x {
				h.Release()
			}
			h = next
		}
		require.Equal(t, tensor.Float16, h.DType(), "the forward pass ran in float16")
		logits := h.Cast(tensor.Float32)
		h.Release()
		x.Release()
		loss := nn.CrossEntropy(logits, y, 0)
		logits.Release()
		y.Release()
		require.NoError(t, graph.Backward(loss))
		for _, release := range releases {
			release()
		}
		if halfParams {
			for _, p := range model.Parameters() {
				require.Equal(t, tensor.Float16, p.Value.Grad().DType(), "%s's gradient", p.Name)
			}
		}
		require.NoError(t, opt.Step())
		opt.ZeroGrad()
		got, err := loss.Tensor().Item()
		require.NoError(t, err)
		loss.Release()
		losses[k] = got

		want := r.Loss[k]
		tol := rtol * (1 + float64(k)/float64(n)) * (1 + math.Abs(want))
		d := math.Abs(got - want)
		require.LessOrEqual(t, d, tol, "step %d: float16 loss %.6g, PyTorch (float64) %.6g", k, got, want)
		worst = max(worst, d/tol)
	}
	// It trains: the last steps' loss is well below the first steps'.
	first, last := (losses[0]+losses[1]+losses[2])/3, (losses[n-3]+losses[n-2]+losses[n-1])/3
	assert.Less(t, last, 0.9*first, "float16 training did not lower the loss: %v", losses)
	t.Logf("float16 loss %.4f → %.4f (PyTorch float64 %.4f → %.4f); worst |Δloss| %.2g of the tolerance",
		losses[0], losses[n-1], r.Loss[0], r.Loss[n-1], worst)
}
