package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// TestStressTraining trains 128 independent models at once on one shared
// device, each in its own goroutine: forward pass, Backward on its own
// graph, and a step of its own optimizer (SGD with momentum). Every
// gradient and every updated weight is checked against float64 arithmetic
// done here. Run it with -race: graphs and optimizers share nothing but
// the device, the kernel caches and the process-wide state of the tensor
// package.
func TestStressTraining(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		before := dev.Stats().LiveBytes
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 128 {
			wg.Go(func() {
				<-start
				if err := trainOne(dev, rand.New(rand.NewPCG(uint64(g), 5)), 3); err != nil {
					t.Errorf("goroutine %d on %s: %v", g, dev.Name(), err)
				}
			})
		}
		close(start)
		wg.Wait()
		if err := dev.Sync(); err != nil {
			t.Fatal(err)
		}
		// Stray cleanups of earlier tests may free memory meanwhile, so
		// this only checks that nothing grew.
		if after := dev.Stats().LiveBytes; after > before {
			t.Errorf("live bytes %d after the stress, %d before", after, before)
		}
	})
}

// trainOne runs steps of loss = Σ tanh(x·w + b)·c with SGD (lr 0.1,
// momentum 0.9) on a model of its own and checks the gradients and
// weights of every step.
func trainOne(dev *tensor.Device, rng *rand.Rand, steps int) (err error) {
	if perr := tensor.Catch(func() { err = trainSteps(dev, rng, steps) }); perr != nil {
		return perr
	}
	return err
}

func trainSteps(dev *tensor.Device, rng *rand.Rand, steps int) error {
	const lr, mom = 0.1, 0.9
	m, k, n := 1+rng.IntN(6), 1+rng.IntN(9), 1+rng.IntN(6)
	xs, ws, bs, cs := draw(rng, m*k), draw(rng, k*n), draw(rng, n), draw(rng, m*n)
	x := graph.Constant(upload(dev, xs, m, k))
	c := graph.Constant(upload(dev, cs, m, n))
	w := graph.Param(upload(dev, ws, k, n))
	b := graph.Param(upload(dev, bs, n))
	defer func() {
		for _, v := range []*graph.Value{x, c, w, b} {
			v.Release()
		}
	}()
	opt := optim.NewSGD([]nn.Named{{Name: "w", Value: w}, {Name: "b", Value: b}}, optim.SGDConfig{LR: lr, Momentum: mom})
	defer opt.Release()
	defer opt.ZeroGrad()
	bufW, bufB := make([]float64, k*n), make([]float64, n)
	for step := range steps {
		opt.ZeroGrad()
		xw := graph.MatMul(x, w)
		pre := graph.Add(xw, b)
		h := graph.Tanh(pre)
		hc := graph.Mul(h, c)
		loss := hc.Sum(nil, false)
		for _, v := range []*graph.Value{xw, pre, h, hc} {
			v.Release()
		}
		err := graph.Backward(loss)
		loss.Release()
		if err != nil {
			return fmt.Errorf("step %d: Backward: %w", step, err)
		}
		// dloss/dpre = c·(1 − tanh²); dw = xᵀ·dpre, db = Σ rows dpre.
		gw, gb := make([]float64, k*n), make([]float64, n)
		for i := range m {
			for j := range n {
				s := bs[j]
				for l := range k {
					s += xs[i*k+l] * ws[l*n+j]
				}
				th := math.Tanh(s)
				d := cs[i*n+j] * (1 - th*th)
				gb[j] += d
				for l := range k {
					gw[l*n+j] += xs[i*k+l] * d
				}
			}
		}
		if err := check(fmt.Sprintf("step %d: ∂loss/∂w", step), w.Grad(), gw, float64(m)); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("step %d: ∂loss/∂b", step), b.Grad(), gb, float64(m)); err != nil {
			return err
		}
		if err := opt.Step(); err != nil {
			return fmt.Errorf("step %d: optimizer: %w", step, err)
		}
		sgd(ws, gw, bufW, step, lr, mom)
		sgd(bs, gb, bufB, step, lr, mom)
		if err := check(fmt.Sprintf("step %d: w", step), w, ws, float64(m)); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("step %d: b", step), b, bs, float64(m)); err != nil {
			return err
		}
	}
	return nil
}

// sgd is torch.optim.SGD's update with momentum, in float64.
func sgd(p, g, buf []float64, step int, lr, mom float64) {
	for i := range p {
		if step == 0 {
			buf[i] = g[i]
		} else {
			buf[i] = mom*buf[i] + g[i]
		}
		p[i] -= lr * buf[i]
	}
}

func draw(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(float32(rng.Float64()*2 - 1))
	}
	return v
}

func upload(dev *tensor.Device, v []float64, shape ...int) *tensor.Tensor {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return tensor.FromFloat32(dev, f, shape...)
}

// check reads v and compares it with want (float32 arithmetic, so the
// tolerance grows with the length of the sums, scale).
func check(what string, v *graph.Value, want []float64, scale float64) error {
	if v == nil {
		return fmt.Errorf("%s: no gradient", what)
	}
	got, err := v.Float32s()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-5*scale*(1+math.Abs(want[i]))) {
			return fmt.Errorf("%s: element %d is %v, want %v", what, i, got[i], want[i])
		}
	}
	return nil
}
