package graph_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// TestNoGradConcurrentWithTraining trains a model for 500 steps in one
// goroutine — forward, loss, Backward (whose error is checked every time),
// an SGD step — while another goroutine evaluates the same model in no-grad
// scopes, checking each output against float64 arithmetic on the weights
// it read. No-grad belongs to the evaluating computation only, so not one
// Backward may fail (with a process-wide mode, most did). The two share
// an RWMutex only around the optimizer's writes into the weights, the
// synchronization the tensor package asks of writers. Small sizes keep one
// run fast: `go test -race -count=100 -run TestNoGradConcurrentWithTraining
// ./graph` is the acceptance run.
func TestNoGradConcurrentWithTraining(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("js/wasm runs goroutines on one thread without preemption: the evaluator cannot run beside CPU-only training")
	}
	const steps, n, in, out = 500, 5, 3, 2
	dev := testdevice.CPU(t)
	rng := rand.New(rand.NewPCG(16, 2))
	xs, ys := make([]float32, n*in), make([]float32, n*out)
	for i := range xs {
		xs[i] = float32(rng.Float64()*2 - 1)
	}
	for i := range ys {
		ys[i] = float32(rng.Float64()*2 - 1)
	}
	model := nn.NewLinear(dev, in, out, true, tensor.NewGenerator(3))
	defer nn.Release(model)
	opt := optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: 0.05})
	defer opt.Release()
	x := graph.Constant(tensor.FromFloat32(dev, xs, n, in))
	defer x.Release()
	y := graph.Constant(tensor.FromFloat32(dev, ys, n, out))
	defer y.Release()
	before := dev.Stats().LiveBytes

	var weights sync.RWMutex
	var done atomic.Bool
	var failures, evaluations atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for step := range steps {
			err := tensor.Catch(func() {
				s := graph.NewScope()
				defer s.Close()
				loss := nn.MSELoss(model.Forward(s.Use(x.Detach())), s.Use(y.Detach()))
				if err := graph.Backward(loss); err != nil {
					failures.Add(1)
					t.Errorf("step %d: Backward: %v", step, err)
					return
				}
				weights.Lock()
				defer weights.Unlock()
				if err := opt.Step(); err != nil {
					t.Errorf("step %d: Step: %v", step, err)
				}
				opt.ZeroGrad()
			})
			if err != nil {
				t.Errorf("step %d: %v", step, err)
			}
		}
	})
	wg.Go(func() {
		for !done.Load() {
			if err := tensor.Catch(func() { evaluateOnce(t, model, x, xs, &weights) }); err != nil {
				t.Errorf("evaluation: %v", err)
			}
			evaluations.Add(1)
		}
	})
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d of %d Backward calls failed", failures.Load(), steps)
	}
	if evaluations.Load() == 0 {
		t.Fatal("no evaluation ran")
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	if after := dev.Stats().LiveBytes; after > before {
		t.Errorf("live bytes %d after the run, %d before: the scopes left values behind", after, before)
	}
}

// evaluateOnce runs model on x in a no-grad scope and checks the output
// against x·Wᵀ + b in float64, with the weights read in the same critical
// section.
func evaluateOnce(t *testing.T, model *nn.Linear, x *graph.Value, xs []float32, weights *sync.RWMutex) {
	s := graph.NewScope(graph.NoGrad)
	defer s.Close()
	weights.RLock()
	w, err := model.Weight.Float32s()
	if err != nil {
		weights.RUnlock()
		t.Error(err)
		return
	}
	b, _ := model.Bias.Float32s()
	pred := model.Forward(s.Use(x.Detach()))
	got, err := pred.Float32s()
	weights.RUnlock()
	if err != nil {
		t.Error(err)
		return
	}
	if pred.RequiresGrad() {
		t.Error("a no-grad evaluation recorded a graph")
	}
	out, in := model.Weight.Shape()[0], model.Weight.Shape()[1]
	for i := range len(got) / out {
		for o := range out {
			want := float64(b[o])
			for k := range in {
				want += float64(xs[i*in+k]) * float64(w[o*in+k])
			}
			if d := math.Abs(float64(got[i*out+o]) - want); d > 1e-5*(1+math.Abs(want)) {
				t.Errorf("output [%d %d] = %g, want %g", i, o, got[i*out+o], want)
			}
		}
	}
}
