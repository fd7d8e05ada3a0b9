package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/amp"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// TestTrainAutocast trains the golden models of train.json (the MLP and
// the CNN, SGD and Adam) with graph.Autocast, the model unchanged: on a
// device that runs float16 the linear layers and convolutions run in
// float16 and the loss in float32, and the losses follow PyTorch's
// float32 trajectory within f16LossRTol (see TestTrainFloat16, whose
// hand-cast run this scope automates); elsewhere autocast is float32 and
// the trajectory is float32's, within trainLossRTol. Each run goes twice,
// the second through an amp.GradScaler (scale 2¹⁰): scaling by a power of
// two is exact, so the scaled run takes the same steps, none skipped.
func TestTrainAutocast(t *testing.T) {
	f := loadTrainGolden(t)
	trainForEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		half := tensor.Supports(dev, "Gemm", tensor.Float16) && tensor.Supports(dev, "Conv2d", tensor.Float16) && tensor.Supports(dev, "Cast", tensor.Float16)
		for _, m := range f.Models {
			for _, r := range m.Runs {
				t.Run(m.Name+"/"+r.Optimizer, func(t *testing.T) {
					plain := trainAutocastOn(t, dev, &m, &r, half, false)
					scaled := trainAutocastOn(t, dev, &m, &r, half, true)
					for k := range plain {
						assert.InDelta(t, plain[k], scaled[k], 1e-3*(1+math.Abs(plain[k])), "step %d: loss with the scaler", k)
					}
				})
			}
		}
	})
}

// trainAutocastOn trains m with run r under autocast (and a GradScaler
// when scaled) and returns the losses.
func trainAutocastOn(t *testing.T, dev *tensor.Device, m *trainGoldenModel, r *trainGoldenRun, half, scaled bool) []float64 {
	model := trainGoldenArch[m.Name].build(dev)
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
	var scaler *amp.GradScaler
	if scaled {
		scaler = amp.NewGradScaler(model.Parameters(), amp.Config{InitScale: 1024})
	}
	rtol, low := trainLossRTol, tensor.Float32
	if half {
		rtol, low = f16LossRTol, tensor.Float16
	}

	sample := 1
	for _, d := range m.X.Shape[1:] {
		sample *= d
	}
	n := len(m.Batches)
	losses := make([]float64, n)
	for k, idx := range m.Batches {
		xs := make([]float32, 0, len(idx)*sample)
		ys := make([]int32, 0, len(idx))
		for _, i := range idx {
			xs = append(xs, m.X.Data[i*sample:(i+1)*sample]...)
			ys = append(ys, m.Y[i])
		}
		s := graph.NewScope(graph.Autocast)
		x := s.Use(graph.Constant(tensor.FromFloat32(dev, xs, append([]int{len(idx)}, m.X.Shape[1:]...)...)))
		y := s.Use(graph.Constant(tensor.FromInt32(dev, ys, len(idx))))
		logits := model.Forward(x)
		require.Equal(t, low, logits.DType(), "the last Linear runs in %v", low)
		loss := nn.CrossEntropy(logits, y, 0)
		require.Equal(t, tensor.Float32, loss.DType(), "the loss runs in float32")
		if scaler == nil {
			require.NoError(t, graph.Backward(loss))
			require.NoError(t, opt.Step())
		} else {
			require.NoError(t, graph.Backward(scaler.Scale(loss)))
			stepped, err := scaler.Step(opt)
			require.NoError(t, err)
			require.True(t, stepped, "step %d skipped: float16 gradients overflowed at scale %g", k, scaler.CurrentScale())
			require.NoError(t, scaler.Update())
		}
		for _, p := range model.Parameters() {
			require.Equal(t, tensor.Float32, p.Value.DType(), "%s stays float32", p.Name)
		}
		opt.ZeroGrad()
		got, err := loss.Tensor().Item()
		require.NoError(t, err)
		s.Close()
		losses[k] = got
		want := r.Loss[k]
		tol := rtol * (1 + float64(k)/float64(n)) * (1 + math.Abs(want))
		require.InDelta(t, want, got, tol, "step %d: autocast loss %.6g, PyTorch (float64) %.6g", k, got, want)
	}
	first, last := (losses[0]+losses[1]+losses[2])/3, (losses[n-3]+losses[n-2]+losses[n-1])/3
	assert.Less(t, last, 0.9*first, "autocast training did not lower the loss: %v", losses)
	return losses
}
