package parallel_test

import (
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

// benchModel is a 256-512-512-10 perceptron (400k parameters).
func benchModel(dev *tensor.Device) (nn.Module, error) {
	gen := tensor.NewGenerator(1)
	return nn.NewSequential(
		nn.NewLinear(dev, 256, 512, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 512, 512, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 512, 10, true, gen),
	), nil
}

func benchBatch(dev *tensor.Device, n int) (*tensor.Tensor, *tensor.Tensor) {
	x := tensor.NewGenerator(2).Randn(dev, n, 256)
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % 10)
	}
	return x, tensor.FromInt32(dev, labels, n)
}

// BenchmarkStep compares one training step of a batch of 256 on one CPU
// device with the same step split over two and three CPU replicas: on the
// CPU the replicas share the backend's cores, so this measures the
// wrapper's overhead (shard copies, the weighted reduction through host
// memory, the parameter copies of Sync), not a speed-up.
func BenchmarkStep(b *testing.B) {
	cpu, err := tensor.Open("cpu")
	if err != nil {
		b.Fatal(err)
	}
	x, y := benchBatch(cpu, 256)
	defer x.Release()
	defer y.Release()
	b.Run("one-device", func(b *testing.B) {
		m, _ := benchModel(cpu)
		defer nn.Release(m)
		opt := optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: 0.01})
		for b.Loop() {
			s := graph.NewScope()
			l := crossEntropy(m.Forward(s.Use(graph.Constant(x.MulScalar(1)))), graph.Constant(y))
			if err := graph.Backward(l); err != nil {
				b.Fatal(err)
			}
			if err := opt.Step(); err != nil {
				b.Fatal(err)
			}
			opt.ZeroGrad()
			if _, err := l.Item(); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	for _, k := range []int{2, 3} {
		devices := make([]*tensor.Device, k)
		for i := range devices {
			devices[i] = cpu
		}
		b.Run("replicas="+string(rune('0'+k)), func(b *testing.B) {
			dp, err := parallel.New(devices, benchModel)
			if err != nil {
				b.Fatal(err)
			}
			defer dp.Release()
			opt := optim.NewSGD(dp.Module().Parameters(), optim.SGDConfig{LR: 0.01})
			for b.Loop() {
				l, err := dp.Backward(x, y, crossEntropy)
				if err != nil {
					b.Fatal(err)
				}
				if err := dp.Step(opt); err != nil {
					b.Fatal(err)
				}
				if _, err := l.Item(); err != nil {
					b.Fatal(err)
				}
				l.Release()
			}
		})
	}
}
