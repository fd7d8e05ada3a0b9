package nn_test

import (
	"testing"

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
			model := benchMLP(dev, gen)
			defer nn.Release(model)
			opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.01, Momentum: 0.9})
			defer opt.Release()
			benchTrainStep(b, dev, gen, model, opt, 128, 784)
		})
	}
}
