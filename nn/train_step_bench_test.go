package nn_test

import (
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkTrainStepMLP times the training step the issue compares with
// PyTorch: a 784-512-512-10 ReLU MLP at batch 128, softmax cross-entropy,
// SGD with momentum 0.9, in PyTorch's order (zero_grad, forward, loss,
// backward, step), then Sync. The CPU peer is
// torch.set_num_threads(T), so compare with -cpu T:
//
//	go test ./nn -run '^$' -bench TrainStepMLP/cpu -cpu 1,2 -benchtime 50x
func BenchmarkTrainStepMLP(b *testing.B) {
	for _, devName := range []string{"cpu", "webgpu"} {
		b.Run(devName, func(b *testing.B) {
			dev := trainDevice(b, devName)
			gen := tensor.NewGenerator(1)
			model := nn.NewSequential(
				nn.NewLinear(dev, 784, 512, true, gen), nn.ReLU{},
				nn.NewLinear(dev, 512, 512, true, gen), nn.ReLU{},
				nn.NewLinear(dev, 512, 10, true, gen))
			defer nn.Release(model)
			opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.01, Momentum: 0.9})
			defer opt.Release()
			const batch = 128
			x := graph.Constant(gen.Randn(dev, batch, 784))
			defer x.Release()
			labels := make([]int32, batch)
			for i := range labels {
				labels[i] = int32((i * 7) % 10)
			}
			y := graph.Constant(tensor.FromInt32(dev, labels, batch))
			defer y.Release()
			benchSteady(b, dev, func() {
				opt.ZeroGrad()
				logits := model.Forward(x)
				loss := nn.CrossEntropy(logits, y, 0)
				logits.Release()
				if err := graph.Backward(loss); err != nil {
					b.Fatal(err)
				}
				loss.Release()
				if err := opt.Step(); err != nil {
					b.Fatal(err)
				}
				if err := dev.Sync(); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
		})
	}
}
