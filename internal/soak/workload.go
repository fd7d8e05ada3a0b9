package soak

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

// worker runs the soak's work on one device: allocate/free cycles, a
// small MLP and a small CNN training, mixed ops whose results are checked
// against the host, and checkpoint round trips. Everything it creates in a
// round is released in that round, so at a sample only the models, their
// optimizer state and the pools are live.
type worker struct {
	dev *tensor.Device
	dir string // where checkpoints go
	rng *rand.Rand
	gen *tensor.Generator

	mlp, cnn       *nn.Sequential
	mlpOpt, cnnOpt *optim.Adam
	mlpY, cnnY     *graph.Value

	held   []*tensor.Tensor // a window of live tensors, so frees interleave allocations
	leaked []*tensor.Tensor // only with leakEvery > 0: the injected leak
	// leakEvery > 0 keeps every leakEvery-th allocation alive forever: a
	// deliberate leak, for the test that shows the checks catch one.
	leakEvery int

	ops, cycles, steps, checkpoints int64
	lastMLPLoss, lastCNNLoss        float64
}

const (
	mlpIn, mlpHidden, mlpClasses, mlpBatch = 16, 32, 4, 32
	cnnSide, cnnChannels, cnnClasses       = 8, 4, 3
	cnnBatch                               = 8
	// maxElems bounds allocate/free sizes: 1 to 64 Ki float32s (4 B to
	// 256 KiB), drawn log-uniformly so that every pool size class is hit.
	maxElems = 1 << 16
	// holdWindow tensors stay live at once during allocate/free cycles.
	holdWindow = 8
)

func newWorker(dev *tensor.Device, dir string, seed uint64, leakEvery int) *worker {
	gen := tensor.NewGenerator(seed)
	w := &worker{dev: dev, dir: dir, rng: rand.New(rand.NewPCG(seed, 0x50a4)), gen: gen, leakEvery: leakEvery}
	w.mlp = nn.NewSequential(
		nn.NewLinear(dev, mlpIn, mlpHidden, true, gen), nn.Tanh{},
		nn.NewLinear(dev, mlpHidden, mlpClasses, true, gen))
	w.mlpOpt = optim.NewAdam(w.mlp.Parameters(), optim.AdamConfig{LR: 0.01})
	k3 := [2]int{3, 3}
	w.cnn = nn.NewSequential(
		nn.NewConv2d(dev, 1, cnnChannels, k3, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen), nn.ReLU{},
		nn.NewMaxPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}),
		nn.NewFlatten(),
		nn.NewLinear(dev, cnnChannels*(cnnSide/2)*(cnnSide/2), cnnClasses, true, gen))
	w.cnnOpt = optim.NewAdam(w.cnn.Parameters(), optim.AdamConfig{LR: 0.01})
	w.mlpY = graph.Constant(tensor.FromInt32(dev, labels(mlpBatch, mlpClasses), mlpBatch))
	w.cnnY = graph.Constant(tensor.FromInt32(dev, labels(cnnBatch, cnnClasses), cnnBatch))
	return w
}

func labels(n, classes int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i % classes)
	}
	return y
}

// close releases everything the worker holds, the injected leak included.
func (w *worker) close() {
	for _, t := range append(w.held, w.leaked...) {
		t.Release()
	}
	w.held, w.leaked = nil, nil
	w.mlpOpt.Release()
	w.cnnOpt.Release()
	nn.Release(w.mlp)
	nn.Release(w.cnn)
	w.mlpY.Release()
	w.cnnY.Release()
}

// round runs one round of every kind of work; checkpoint says whether
// this round also saves and reloads the models.
func (w *worker) round(allocCycles int, checkpoint bool) error {
	if err := w.allocFree(allocCycles); err != nil {
		return err
	}
	if err := w.mixed(); err != nil {
		return err
	}
	for range 2 {
		if err := w.mlpStep(); err != nil {
			return err
		}
	}
	if err := w.cnnStep(); err != nil {
		return err
	}
	if checkpoint {
		if err := w.checkpoint(); err != nil {
			return err
		}
	}
	return w.dev.Sync()
}

// allocFree creates n tensors of random sizes, by fill and by upload, and
// frees each a few allocations later.
func (w *worker) allocFree(n int) error {
	for range n {
		elems := int(math.Exp(w.rng.Float64() * math.Log(maxElems)))
		var t *tensor.Tensor
		if w.rng.IntN(4) == 0 {
			t = tensor.FromFloat32(w.dev, make([]float32, elems), elems)
		} else {
			t = tensor.Full(w.dev, tensor.Float32, 1.5, elems)
		}
		w.ops++
		w.cycles++
		if w.leakEvery > 0 && w.cycles%int64(w.leakEvery) == 0 {
			w.leaked = append(w.leaked, t)
			continue
		}
		w.held = append(w.held, t)
		if len(w.held) > holdWindow {
			w.held[0].Release()
			w.held = w.held[1:]
		}
	}
	for _, t := range w.held {
		if err := t.Err(); err != nil {
			return fmt.Errorf("allocate on %s: %w", w.dev.Name(), err)
		}
		t.Release()
	}
	w.held = w.held[:0]
	return nil
}

// mixed runs a chain of elementwise ops (fused on WebGPU), a broadcast, a
// matmul and a reduction on random odd-sized inputs and checks the values
// read back against the same arithmetic on the host.
func (w *worker) mixed() error {
	m, k, n := 3+w.rng.IntN(13), 1+w.rng.IntN(17), 2+w.rng.IntN(11)
	a, b, bias := randSlice(w.rng, m*k), randSlice(w.rng, k*n), randSlice(w.rng, n)
	ta := tensor.FromFloat32(w.dev, a, m, k)
	tb := tensor.FromFloat32(w.dev, b, k, n)
	tbias := tensor.FromFloat32(w.dev, bias, n)
	// ((a·2 + 1).tanh() · a).relu(): four elementwise ops in a row.
	t1 := ta.MulScalar(2)
	t2 := t1.AddScalar(1)
	t3 := t2.Tanh()
	t4 := t3.Mul(ta)
	ew := t4.ReLU()
	mm := ew.MatMul(tb)
	out := mm.Add(tbias) // broadcast over rows
	sum := out.Sum([]int{1}, false)
	w.ops += 13
	defer releaseAll(ta, tb, tbias, t1, t2, t3, t4, ew, mm, out, sum)

	got, err := sum.Float32s()
	if err != nil {
		return fmt.Errorf("mixed ops on %s: %w", w.dev.Name(), err)
	}
	for i := range m {
		var want float64
		for j := range n {
			acc := float64(bias[j])
			for p := range k {
				x := float64(a[i*k+p])
				e := max(math.Tanh(x*2+1)*x, 0)
				acc += e * float64(b[p*n+j])
			}
			want += acc
		}
		if d := math.Abs(float64(got[i]) - want); d > 1e-4*(1+math.Abs(want))*float64(k*n) {
			return fmt.Errorf("mixed ops on %s: row %d of %dx%d·%dx%d = %v, want %v", w.dev.Name(), i, m, k, k, n, got[i], want)
		}
	}
	return nil
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

func releaseAll(ts ...*tensor.Tensor) {
	for _, t := range ts {
		t.Release()
	}
}

// step runs one training step of model on x and returns the loss.
func step(model *nn.Sequential, opt *optim.Adam, x, y *graph.Value) (float64, error) {
	logits := model.Forward(x)
	loss := nn.CrossEntropy(logits, y, 0)
	logits.Release()
	defer loss.Release()
	if err := graph.Backward(loss); err != nil {
		return 0, err
	}
	if err := opt.Step(); err != nil {
		return 0, err
	}
	opt.ZeroGrad()
	l, err := loss.Tensor().Item()
	if err == nil && (math.IsNaN(l) || math.IsInf(l, 0)) {
		err = fmt.Errorf("loss is %v", l)
	}
	return l, err
}

func (w *worker) mlpStep() error {
	x := graph.Constant(w.gen.Randn(w.dev, mlpBatch, mlpIn))
	defer x.Release()
	l, err := step(w.mlp, w.mlpOpt, x, w.mlpY)
	if err != nil {
		return fmt.Errorf("MLP step on %s: %w", w.dev.Name(), err)
	}
	w.lastMLPLoss = l
	w.steps++
	w.ops++
	return nil
}

func (w *worker) cnnStep() error {
	x := graph.Constant(w.gen.Randn(w.dev, cnnBatch, 1, cnnSide, cnnSide))
	defer x.Release()
	l, err := step(w.cnn, w.cnnOpt, x, w.cnnY)
	if err != nil {
		return fmt.Errorf("CNN step on %s: %w", w.dev.Name(), err)
	}
	w.lastCNNLoss = l
	w.steps++
	w.ops++
	return nil
}

// checkpoint saves both models with their optimizer state and loads them
// back, replacing the same files each time.
func (w *worker) checkpoint() error {
	for name, mo := range map[string]struct {
		m *nn.Sequential
		o *optim.Adam
	}{"mlp": {w.mlp, w.mlpOpt}, "cnn": {w.cnn, w.cnnOpt}} {
		path := filepath.Join(w.dir, fmt.Sprintf("%s-%s.safetensors", sanitize(w.dev.Name()), name))
		if err := checkpoint.Save(path, mo.m, mo.o); err != nil {
			return fmt.Errorf("checkpoint save on %s: %w", w.dev.Name(), err)
		}
		if err := checkpoint.Load(path, mo.m, mo.o); err != nil {
			return fmt.Errorf("checkpoint load on %s: %w", w.dev.Name(), err)
		}
		w.ops += 2
	}
	w.checkpoints++
	return nil
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
