package nn_test

import (
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkTrainStep times one training step — forward, softmax
// cross-entropy, backward, Adam update — of two models on random data:
//
//   - mlp: 784-512-512-10 with ReLU, batch 128 (669,706 parameters);
//   - cnn: Conv2d(1→16, 3×3, pad 1)-ReLU-MaxPool 2-Conv2d(16→32, 3×3,
//     pad 1)-ReLU-MaxPool 2-Flatten-Linear(32·7·7→10) on 1×28×28, batch 64
//     (20,490 parameters).
//
// Every iteration waits for the device (Sync), so GPU time counts, and
// releases what it made; the benchmark fails if a step leaves device
// memory behind. It reports ms/step and samples/s.
//
//	go test ./nn -run '^$' -bench TrainStep -benchtime 3x
func BenchmarkTrainStep(b *testing.B) {
	models := []struct {
		name  string
		batch int
		in    []int
		build func(dev *tensor.Device, gen *tensor.Generator) nn.Module
	}{
		{"mlp", 128, []int{784}, benchMLP},
		{"cnn", 64, []int{1, 28, 28}, func(dev *tensor.Device, gen *tensor.Generator) nn.Module {
			same := tensor.ConvOptions{Padding: [2]int{1, 1}}
			pool := tensor.PoolOptions{Kernel: [2]int{2, 2}}
			return nn.NewSequential(
				nn.NewConv2d(dev, 1, 16, [2]int{3, 3}, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
				nn.NewConv2d(dev, 16, 32, [2]int{3, 3}, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
				nn.NewFlatten(),
				nn.NewLinear(dev, 32*7*7, 10, true, gen))
		}},
	}
	for _, devName := range []string{"cpu", "webgpu"} {
		b.Run(devName, func(b *testing.B) {
			dev := trainDevice(b, devName)
			for _, m := range models {
				b.Run(m.name, func(b *testing.B) {
					gen := tensor.NewGenerator(1)
					model := m.build(dev, gen)
					defer nn.Release(model)
					var opt optim.Optimizer = optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 1e-3})
					if rel, ok := opt.(interface{ Release() }); ok {
						defer rel.Release()
					}
					ms := benchTrainStep(b, dev, gen, model, opt, append([]int{m.batch}, m.in...)...)
					b.ReportMetric(float64(m.batch)/ms*1e3, "samples/s")
				})
			}
		})
	}
}

// BenchmarkOptimizerUpdate times one optimizer step on a single
// 10M-element float32 parameter: Adam, and SGD with momentum. It reports
// ms/step and the memory traffic the update must make at the least, in
// GB/s: Adam reads the parameter, gradient and both moments and writes
// back the parameter and moments (7 × 4 bytes an element), SGD reads the
// parameter, gradient and momentum buffer and writes two (5 × 4).
//
//	go test ./nn -run '^$' -bench OptimizerUpdate -benchtime 3x
func BenchmarkOptimizerUpdate(b *testing.B) {
	const n = 10_000_000
	opts := []struct {
		name  string
		bytes int // per element
		make  func(params []nn.Named) optim.Optimizer
	}{
		{"adam", 7 * 4, func(p []nn.Named) optim.Optimizer {
			return optim.NewAdam(p, optim.AdamConfig{LR: 1e-3})
		}},
		{"sgd", 5 * 4, func(p []nn.Named) optim.Optimizer {
			return optim.NewSGD(p, optim.SGDConfig{LR: 0.01, Momentum: 0.9})
		}},
	}
	for _, devName := range []string{"cpu", "webgpu"} {
		b.Run(devName, func(b *testing.B) {
			dev := trainDevice(b, devName)
			for _, o := range opts {
				b.Run(o.name, func(b *testing.B) {
					gen := tensor.NewGenerator(1)
					p := graph.Param(gen.Randn(dev, n))
					defer p.Release()
					p.SetGrad(gen.Randn(dev, n))
					opt := o.make([]nn.Named{{Name: "p", Value: p}})
					if rel, ok := opt.(interface{ Release() }); ok {
						defer rel.Release()
					}
					benchSteady(b, dev, func() {
						if err := opt.Step(); err != nil {
							b.Fatal(err)
						}
						if err := dev.Sync(); err != nil {
							b.Fatal(err)
						}
					})
					sec := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(sec*1e3, "ms/step")
					b.ReportMetric(float64(n*o.bytes)/sec/1e9, "GB/s")
				})
			}
		})
	}
}

// benchMLP is the 784-512-512-10 ReLU MLP of the training benchmarks.
func benchMLP(dev *tensor.Device, gen *tensor.Generator) nn.Module {
	return nn.NewSequential(
		nn.NewLinear(dev, 784, 512, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 512, 512, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 512, 10, true, gen))
}

// benchTrainStep times training steps of model with opt on a random batch
// of the given shape (batch first) with labels i·7 mod 10, in PyTorch's
// order: zero_grad, forward, softmax cross-entropy, backward, step, then
// Sync, so that device time counts. It reports and returns ms/step.
func benchTrainStep(b *testing.B, dev *tensor.Device, gen *tensor.Generator, model nn.Module, opt optim.Optimizer,
	shape ...int) float64 {
	x := graph.Constant(gen.Randn(dev, shape...))
	defer x.Release()
	labels := make([]int32, shape[0])
	for i := range labels {
		labels[i] = int32((i * 7) % 10)
	}
	y := graph.Constant(tensor.FromInt32(dev, labels, shape[0]))
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
	ms := float64(b.Elapsed().Microseconds()) / 1e3 / float64(b.N)
	b.ReportMetric(ms, "ms/step")
	return ms
}

// benchSteady runs step once untimed — it compiles the kernels, creates
// the optimizer's state and fills the memory pools — then times it, and
// fails if the device holds more memory afterwards than after the first
// step: a step that leaks.
func benchSteady(b *testing.B, dev *tensor.Device, step func()) {
	step()
	live := dev.Stats().LiveBytes
	for b.Loop() {
		step()
	}
	if now := dev.Stats().LiveBytes; now != live {
		b.Fatalf("live device memory went from %d to %d bytes: a step leaks", live, now)
	}
}
