package parallel_test

import (
	"fmt"
	"sync"
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

// benchCNN is cmd/demo's CNN for 1×8×8 images (cmd/ddp -model cnn).
func benchCNN(dev *tensor.Device) nn.Module {
	gen := tensor.NewGenerator(1)
	same := tensor.ConvOptions{Padding: [2]int{1, 1}}
	pool := tensor.PoolOptions{Kernel: [2]int{2, 2}}
	k3 := [2]int{3, 3}
	return nn.NewSequential(
		nn.NewConv2d(dev, 1, 16, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewConv2d(dev, 16, 32, k3, same, true, gen), nn.ReLU{}, nn.NewMaxPool2d(pool),
		nn.NewFlatten(),
		nn.NewLinear(dev, 32*2*2, 64, true, gen), nn.ReLU{},
		nn.NewLinear(dev, 64, 10, true, gen),
	)
}

// BenchmarkDistributedBackward times Distributed.Backward (forward,
// backward and the gradient all-reduce) of the demo CNN on a shard of 32
// images for each of 2 ranks of a local group, with one all-reduce after
// the pass (bucket=0) and with buckets all-reduced during it. Both ranks
// share the CPU device's cores: this measures how much of the
// communication the buckets hide, not a speed-up.
func BenchmarkDistributedBackward(b *testing.B) {
	cpu, err := tensor.Open("cpu")
	if err != nil {
		b.Fatal(err)
	}
	for _, bucket := range []int{0, 4096, parallel.DefaultBucketBytes} {
		b.Run(fmt.Sprintf("bucket=%d", bucket), func(b *testing.B) {
			const size, shard = 2, 32
			var wg sync.WaitGroup
			errs := make([]error, size)
			b.ResetTimer()
			for r, comm := range parallel.NewLocalGroup(size) {
				wg.Go(func() {
					m := benchCNN(cpu)
					defer nn.Release(m)
					d, err := parallel.NewDistributed(m, comm)
					if err != nil {
						errs[r] = err
						return
					}
					d.BucketBytes = bucket
					x := tensor.NewGenerator(uint64(r+2)).Randn(cpu, shard, 1, 8, 8)
					labels := make([]int32, shard)
					for i := range labels {
						labels[i] = int32(i % 10)
					}
					y := tensor.FromInt32(cpu, labels, shard)
					defer x.Release()
					defer y.Release()
					for range b.N {
						if _, err := d.Backward(x, y, crossEntropy); err != nil {
							errs[r] = err
							return
						}
						nn.ZeroGrad(m)
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
