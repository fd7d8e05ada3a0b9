package parallel_test

import (
	"fmt"
	"sync"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/nn/parallel"
	"github.com/webtensor/webtensor/tensor"
)

// regression is a batch of y = 2x − 1 and its mean squared error.
func regression(dev *tensor.Device, n int) (x, y *tensor.Tensor) {
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)/float32(n) - 0.5
		ys[i] = 2*xs[i] - 1
	}
	return tensor.FromFloat32(dev, xs, n, 1), tensor.FromFloat32(dev, ys, n, 1)
}

// Two replicas on the CPU (they could be two GPUs, or a GPU and the CPU)
// learn y = 2x − 1 from batches of 9, split 5 and 4.
func Example() {
	cpu, _ := tensor.Open("cpu")
	devices := []*tensor.Device{cpu, cpu}
	dp, err := parallel.New(devices, func(dev *tensor.Device) (nn.Module, error) {
		return nn.NewLinear(dev, 1, 1, true, tensor.NewGenerator(1)), nil
	})
	if err != nil {
		panic(err)
	}
	defer dp.Release()
	opt := optim.NewSGD(dp.Module().Parameters(), optim.SGDConfig{LR: 0.5})
	x, y := regression(cpu, 9)
	defer x.Release()
	defer y.Release()
	fmt.Println("shards:", parallel.Shards(9, len(devices)))
	for range 200 {
		loss, err := dp.Backward(x, y, nn.MSELoss)
		if err != nil {
			panic(err)
		}
		loss.Release()
		if err := dp.Step(opt); err != nil {
			panic(err)
		}
	}
	for _, p := range dp.Module().Parameters() {
		v, _ := p.Value.Float32s()
		fmt.Printf("%s %.3f\n", p.Name, v[0])
	}
	// Output:
	// shards: [[0 5] [5 9]]
	// weight 2.000
	// bias -1.000
}

// Three ranks of an in-process group train the same regression, each on
// its shard; with package nn/parallel/mpi's Comm instead, the ranks are
// processes started by mpirun, on one machine or many.
func ExampleDistributed() {
	cpu, _ := tensor.Open("cpu")
	const n = 10
	var wg sync.WaitGroup
	for _, comm := range parallel.NewLocalGroup(3) {
		wg.Go(func() {
			// Different starting weights: NewDistributed gives every rank
			// rank 0's.
			m := nn.NewLinear(cpu, 1, 1, true, tensor.NewGenerator(uint64(comm.Rank())))
			defer nn.Release(m)
			ddp, err := parallel.NewDistributed(m, comm)
			if err != nil {
				panic(err)
			}
			opt := optim.NewSGD(m.Parameters(), optim.SGDConfig{LR: 0.5})
			x, y := regression(cpu, n)
			sh := parallel.Shards(n, comm.Size())[comm.Rank()]
			xs, ys := x.Slice(0, sh[0], sh[1], 1), y.Slice(0, sh[0], sh[1], 1)
			var loss float64
			for range 200 {
				if loss, err = ddp.Backward(xs, ys, nn.MSELoss); err != nil {
					panic(err)
				}
				if err := ddp.Step(opt); err != nil {
					panic(err)
				}
			}
			if comm.Rank() == 0 {
				w, _ := m.Weight.Float32s()
				fmt.Printf("weight %.3f, loss %.6f\n", w[0], loss)
			}
			for _, t := range []*tensor.Tensor{x, y, xs, ys} {
				t.Release()
			}
		})
	}
	wg.Wait()
	// Output:
	// weight 2.000, loss 0.000000
}
