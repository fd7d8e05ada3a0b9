package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// The stress tests run many goroutines against one shared device, each
// doing a random mix of ops, read-backs and releases, and check every
// result against float64 arithmetic done here. They are meant for -race
// (make test runs them so): a data race, a lost or reordered dispatch, or
// one goroutine's fused chain picking up another's buffer shows up as a
// race report or a wrong value. Sizes are small so that a software
// WebGPU adapter (llvmpipe) finishes in seconds under the race detector.

const stressGoroutines = 128

// stressIters is how many ops each goroutine runs on dev: fewer on WebGPU,
// where each read-back waits for a software rasterizer.
func stressIters(dev *tensor.Device) int {
	if dev.Name() == "cpu" {
		return 24
	}
	return 12
}

// hostT is a row-major float64 array, the reference side of a check.
type hostT struct {
	shape []int
	v     []float64
}

func (h hostT) len() int { return len(h.v) }

func randHost(rng *rand.Rand, lo, hi float64, shape ...int) hostT {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		// float32-representable, so the device sees the same inputs.
		v[i] = float64(float32(lo + (hi-lo)*rng.Float64()))
	}
	return hostT{shape: shape, v: v}
}

func (h hostT) upload(dev *tensor.Device) *tensor.Tensor {
	f := make([]float32, len(h.v))
	for i, x := range h.v {
		f[i] = float32(x)
	}
	return tensor.FromFloat32(dev, f, h.shape...)
}

// compare reads got (releasing it) and checks it against want with a
// relative tolerance tol scaled by 1+|want|.
func compare(op string, got *tensor.Tensor, want hostT, tol float64) error {
	defer got.Release()
	if fmt.Sprint(got.Shape()) != fmt.Sprint(want.shape) {
		return fmt.Errorf("%s: shape %v, want %v", op, got.Shape(), want.shape)
	}
	v, err := got.Float64s() // any dtype, as float64; no testing.T in goroutines
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if len(v) != len(want.v) {
		return fmt.Errorf("%s: %d elements, want %d", op, len(v), len(want.v))
	}
	for i := range v {
		if d := math.Abs(v[i] - want.v[i]); !(d <= tol*(1+math.Abs(want.v[i]))) {
			return fmt.Errorf("%s %v: element %d is %v, want %v", op, want.shape, i, v[i], want.v[i])
		}
	}
	return nil
}

func mapHost(h hostT, f func(float64) float64) hostT {
	out := hostT{shape: h.shape, v: make([]float64, len(h.v))}
	for i, x := range h.v {
		out.v[i] = f(x)
	}
	return out
}

func zipHost(a, b hostT, f func(x, y float64) float64) hostT {
	out := hostT{shape: a.shape, v: make([]float64, len(a.v))}
	for i := range a.v {
		out.v[i] = f(a.v[i], b.v[i])
	}
	return out
}

func matmulHost(a, b hostT) hostT {
	m, k, n := a.shape[0], a.shape[1], b.shape[1]
	out := hostT{shape: []int{m, n}, v: make([]float64, m*n)}
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += a.v[i*k+l] * b.v[l*n+j]
			}
			out.v[i*n+j] = s
		}
	}
	return out
}

func transposeHost(a hostT) hostT {
	r, c := a.shape[0], a.shape[1]
	out := hostT{shape: []int{c, r}, v: make([]float64, r*c)}
	for i := range r {
		for j := range c {
			out.v[j*r+i] = a.v[i*c+j]
		}
	}
	return out
}

// stressShared are read-only inputs every goroutine uses at once.
type stressShared struct {
	a, b   hostT // [5, 7], [7, 3]
	ta, tb *tensor.Tensor
}

// stressOp runs one op on dev with inputs from rng (and sh) and checks it.
type stressOp struct {
	name string
	run  func(dev *tensor.Device, rng *rand.Rand, sh *stressShared) error
}

var stressOps = []stressOp{
	{"fused chain", stressChain},
	{"fused chain, intermediates released", stressChainReleased},
	{"fused chain on a shared input", stressSharedChain},
	{"matmul+bias+relu", stressMatMulEpilogue},
	{"matmul on shared inputs", stressSharedMatMul},
	{"reductions", stressReduce},
	{"views", stressViews},
	{"softmax", stressSoftmax},
	{"conv2d", stressConv2d},
	{"concat", stressConcat},
	{"gather", stressGather},
	{"casts", stressCast},
	{"alloc/free churn", stressChurn},
	{"sgd step", stressStep},
}

// stressChain is exp(a·b) − a, then relu(·)·0.5 + b: elementwise ops that
// the WebGPU backend fuses into one kernel.
func stressChain(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	n := 1 + rng.IntN(300)
	ah, bh := randHost(rng, -1, 1, n), randHost(rng, -1, 1, n)
	a, b := ah.upload(dev), bh.upload(dev)
	defer a.Release()
	defer b.Release()
	ab := a.Mul(b)
	e := ab.Exp()
	d := e.Sub(a)
	r := d.ReLU()
	h := r.MulScalar(0.5)
	y := h.Add(b)
	defer func() {
		for _, t := range []*tensor.Tensor{ab, e, d, r, h} {
			t.Release()
		}
	}()
	want := hostT{shape: []int{n}, v: make([]float64, n)}
	for i := range n {
		x, z := ah.v[i], bh.v[i]
		want.v[i] = 0.5*math.Max(math.Exp(x*z)-x, 0) + z
	}
	return compare("exp(a·b)−a, relu·0.5+b", y, want, 1e-5)
}

// stressChainReleased releases each intermediate at once, so that its
// buffer goes back to the pool while the fused group still refers to it
// and another goroutine may get it.
func stressChainReleased(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	n := 1 + rng.IntN(300)
	xh := randHost(rng, -2, 2, n)
	x := xh.upload(dev)
	y := x.Tanh()
	x.Release()
	for range 3 {
		sq := y.Square()
		y.Release()
		z := sq.AddScalar(1)
		sq.Release()
		y = z.Sqrt()
		z.Release()
	}
	want := mapHost(xh, func(v float64) float64 {
		v = math.Tanh(v)
		for range 3 {
			v = math.Sqrt(v*v + 1)
		}
		return v
	})
	return compare("tanh then sqrt(x²+1)×3", y, want, 1e-5)
}

// stressSharedChain is tanh(a·x + a) − x on the shared a: every goroutine
// makes ops of this one shape, so on WebGPU the ops of several goroutines
// join one pending fused group.
func stressSharedChain(dev *tensor.Device, rng *rand.Rand, sh *stressShared) error {
	xh := randHost(rng, -1, 1, sh.a.shape...)
	x := xh.upload(dev)
	defer x.Release()
	ax := sh.ta.Mul(x)
	s := ax.Add(sh.ta)
	ax.Release()
	th := s.Tanh()
	s.Release()
	y := th.Sub(x)
	th.Release()
	want := zipHost(sh.a, xh, func(a, x float64) float64 { return math.Tanh(a*x+a) - x })
	return compare("tanh(a·x+a)−x on shared a", y, want, 1e-5)
}

// stressMatMulEpilogue is relu(x·w + b): a GEMM with an elementwise
// epilogue that the WebGPU backend folds into the GEMM kernel.
func stressMatMulEpilogue(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	m, k, n := 1+rng.IntN(9), 1+rng.IntN(17), 1+rng.IntN(9)
	xh, wh, bh := randHost(rng, -1, 1, m, k), randHost(rng, -1, 1, k, n), randHost(rng, -1, 1, n)
	x, w, b := xh.upload(dev), wh.upload(dev), bh.upload(dev)
	defer func() { x.Release(); w.Release(); b.Release() }()
	xw := tensor.MatMul(x, w)
	pre := xw.Add(b)
	xw.Release()
	y := pre.ReLU()
	pre.Release()
	want := matmulHost(xh, wh)
	for i := range want.v {
		want.v[i] = math.Max(want.v[i]+bh.v[i%n], 0)
	}
	return compare(fmt.Sprintf("relu(x·w+b) %dx%d·%dx%d", m, k, k, n), y, want, 1e-5*float64(k))
}

// stressSharedMatMul multiplies the shared inputs, which every goroutine
// reads at once, and one of them through a transposed view.
func stressSharedMatMul(dev *tensor.Device, _ *rand.Rand, sh *stressShared) error {
	y := tensor.MatMul(sh.ta, sh.tb)
	if err := compare("shared a·b", y, matmulHost(sh.a, sh.b), 1e-4); err != nil {
		return err
	}
	at := sh.ta.T()
	defer at.Release()
	z := tensor.MatMul(at, sh.ta) // aᵀ·a through a strided view
	return compare("shared aᵀ·a", z, matmulHost(transposeHost(sh.a), sh.a), 1e-4)
}

func stressReduce(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	r, c := 1+rng.IntN(13), 1+rng.IntN(29)
	xh := randHost(rng, -3, 3, r, c)
	x := xh.upload(dev)
	defer x.Release()
	sum := hostT{shape: []int{r}, v: make([]float64, r)}
	mx := hostT{shape: []int{c}, v: make([]float64, c)}
	for j := range c {
		mx.v[j] = math.Inf(-1)
	}
	total := 0.0
	for i := range r {
		for j := range c {
			v := xh.v[i*c+j]
			sum.v[i] += v
			mx.v[j] = math.Max(mx.v[j], v)
			total += v
		}
	}
	if err := compare("Sum(1)", x.Sum([]int{1}, false), sum, 1e-5*float64(c)); err != nil {
		return err
	}
	if err := compare("Max(0)", x.Max([]int{0}, false), mx, 0); err != nil {
		return err
	}
	return compare("Mean()", x.Mean(nil, false), hostT{shape: []int{}, v: []float64{total / float64(r*c)}}, 1e-5)
}

// stressViews computes on strided views: a transpose, a stepped slice and
// a reshape, each fed to an elementwise op.
func stressViews(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	r, c := 2+rng.IntN(8), 2+rng.IntN(8)
	xh := randHost(rng, -1, 1, r, c)
	x := xh.upload(dev)
	defer x.Release()
	xt := x.T()
	y := xt.AddScalar(1)
	xt.Release()
	if err := compare("xᵀ+1", y, mapHost(transposeHost(xh), func(v float64) float64 { return v + 1 }), 1e-6); err != nil {
		return err
	}
	s := x.Slice(1, 1, c, 2)
	defer s.Release()
	cols := (c - 1 + 1) / 2
	want := hostT{shape: []int{r, cols}}
	for i := range r {
		for j := 1; j < c; j += 2 {
			want.v = append(want.v, 2*xh.v[i*c+j])
		}
	}
	if err := compare("x[:, 1::2]·2", s.MulScalar(2), want, 1e-6); err != nil {
		return err
	}
	flat := x.Reshape(r * c)
	defer flat.Release()
	return compare("reshape, neg", flat.Neg(), hostT{shape: []int{r * c}, v: mapHost(xh, func(v float64) float64 { return -v }).v}, 0)
}

func stressSoftmax(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	r, c := 1+rng.IntN(6), 1+rng.IntN(40)
	xh := randHost(rng, -4, 4, r, c)
	x := xh.upload(dev)
	defer x.Release()
	want := hostT{shape: xh.shape, v: make([]float64, len(xh.v))}
	for i := range r {
		row := xh.v[i*c : (i+1)*c]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - m)
		}
		for j, v := range row {
			want.v[i*c+j] = math.Exp(v-m) / s
		}
	}
	return compare("Softmax(-1)", x.Softmax(-1), want, 1e-5)
}

func stressConv2d(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	cin, cout, h, w := 1+rng.IntN(3), 1+rng.IntN(3), 3+rng.IntN(5), 3+rng.IntN(5)
	xh, wh, bh := randHost(rng, -1, 1, 1, cin, h, w), randHost(rng, -1, 1, cout, cin, 3, 3), randHost(rng, -1, 1, cout)
	x, wt, b := xh.upload(dev), wh.upload(dev), bh.upload(dev)
	defer func() { x.Release(); wt.Release(); b.Release() }()
	y := tensor.Conv2d(x, wt, b, tensor.ConvOptions{Padding: [2]int{1, 1}})
	want := hostT{shape: []int{1, cout, h, w}, v: make([]float64, cout*h*w)}
	for o := range cout {
		for i := range h {
			for j := range w {
				s := bh.v[o]
				for ci := range cin {
					for ki := range 3 {
						for kj := range 3 {
							ii, jj := i+ki-1, j+kj-1
							if ii < 0 || ii >= h || jj < 0 || jj >= w {
								continue
							}
							s += xh.v[(ci*h+ii)*w+jj] * wh.v[((o*cin+ci)*3+ki)*3+kj]
						}
					}
				}
				want.v[(o*h+i)*w+j] = s
			}
		}
	}
	return compare("Conv2d 3x3 pad 1", y, want, 1e-5*float64(9*cin))
}

func stressConcat(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	r, c1, c2 := 1+rng.IntN(5), 1+rng.IntN(6), 1+rng.IntN(6)
	ah, bh := randHost(rng, -1, 1, r, c1), randHost(rng, -1, 1, r, c2)
	a, b := ah.upload(dev), bh.upload(dev)
	defer func() { a.Release(); b.Release() }()
	want := hostT{shape: []int{r, c1 + c2}}
	for i := range r {
		want.v = append(want.v, ah.v[i*c1:(i+1)*c1]...)
		want.v = append(want.v, bh.v[i*c2:(i+1)*c2]...)
	}
	return compare("Concat(1)", tensor.Concat(1, a, b), want, 0)
}

func stressGather(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	r, c, k := 1+rng.IntN(6), 1+rng.IntN(9), 1+rng.IntN(5)
	xh := randHost(rng, -1, 1, r, c)
	idx := make([]int32, r*k)
	want := hostT{shape: []int{r, k}, v: make([]float64, r*k)}
	for i := range r {
		for j := range k {
			idx[i*k+j] = int32(rng.IntN(c))
			want.v[i*k+j] = xh.v[i*c+int(idx[i*k+j])]
		}
	}
	x := xh.upload(dev)
	ix := tensor.FromInt32(dev, idx, r, k)
	defer func() { x.Release(); ix.Release() }()
	return compare("Gather(1)", x.Gather(1, ix), want, 0)
}

// stressCast casts to Int32 (truncating) and back.
func stressCast(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	n := 1 + rng.IntN(100)
	xh := randHost(rng, -50, 50, n)
	x := xh.upload(dev)
	defer x.Release()
	i := x.Cast(tensor.Int32)
	defer i.Release()
	return compare("Cast(Int32).Cast(Float32)", i.Cast(tensor.Float32), mapHost(xh, math.Trunc), 0)
}

// stressChurn allocates and frees without reading most of what it makes.
func stressChurn(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	var last *tensor.Tensor
	for k := range 10 {
		n := 1 + rng.IntN(1000)
		t := tensor.Full(dev, tensor.Float32, float64(k), n)
		if last != nil {
			last.Release()
		}
		last = t
	}
	want := hostT{shape: last.Shape(), v: make([]float64, last.Len())}
	for i := range want.v {
		want.v[i] = 9
	}
	return compare("Full after churn", last, want, 0)
}

// stressStep runs SGD with momentum on a parameter of this goroutine's own:
// the one op that writes into its operands.
func stressStep(dev *tensor.Device, rng *rand.Rand, _ *stressShared) error {
	n := 1 + rng.IntN(64)
	ph, gh := randHost(rng, -1, 1, n), randHost(rng, -1, 1, n)
	p, g := ph.upload(dev), gh.upload(dev)
	buf := tensor.Zeros(dev, n)
	defer func() { g.Release(); buf.Release() }()
	const lr, mom = 0.1, 0.9
	want := slicesClone(ph.v)
	m := make([]float64, n)
	for range 3 {
		tensor.Step(tensor.SGD, p, g, []*tensor.Tensor{buf}, nil, tensor.StepArgs{LR: lr, Momentum: mom})
	}
	for step := range 3 {
		for i := range want {
			if step == 0 {
				m[i] = gh.v[i]
			} else {
				m[i] = mom*m[i] + gh.v[i]
			}
			want[i] -= lr * m[i]
		}
	}
	return compare("Step(sgd, momentum) ×3", p, hostT{shape: []int{n}, v: want}, 1e-5)
}

func slicesClone(v []float64) []float64 { return append([]float64(nil), v...) }

// TestStress runs stressGoroutines goroutines of random ops on one shared
// device, released together so that they also race to compile kernels on
// their first use.
func TestStress(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) { runStress(t, dev, dev) })
}

// TestStressAuto is the same stress on CPU tensors under the Auto policy
// with small thresholds: ops of 100 elements or more move their operands
// to the GPU, so goroutines route, upload and mix devices at once.
func TestStressAuto(t *testing.T) { testdevice.ForEachWebGPU(t, testStressAuto) }

func testStressAuto(t *testing.T, gpu *tensor.Device) {
	cpu := testdevice.CPU(t)
	withPlacement(t, tensor.Auto, gpu)
	runStress(t, cpu, cpu, gpu)
	st := tensor.PlacementStats()
	if st.Ops[gpu.Name()] == 0 || st.Ops[cpu.Name()] == 0 || st.Moves == 0 {
		t.Errorf("Auto did not split the work between the devices: %+v", st)
	}
	t.Logf("placement: %+v", st)
}

// runStress runs the stress with inputs made on dev; watch are the
// devices whose live bytes must come back to where they were.
func runStress(t *testing.T, dev *tensor.Device, watch ...*tensor.Device) {
	rng := rand.New(rand.NewPCG(7, 7))
	sh := &stressShared{a: randHost(rng, -1, 1, 5, 7), b: randHost(rng, -1, 1, 7, 3)}
	sh.ta, sh.tb = sh.a.upload(dev), sh.b.upload(dev)
	defer sh.ta.Release()
	defer sh.tb.Release()
	before := make([]int64, len(watch))
	for i, d := range watch {
		testdevice.QuietGC(t, d)
		before[i] = d.Stats().LiveBytes
	}
	iters := stressIters(watch[len(watch)-1])
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for g := range stressGoroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			<-start
			for it := range iters {
				// The first ops walk the table, so that every op is
				// first used by many goroutines at once.
				op := stressOps[(g+it*7)%len(stressOps)]
				if it >= 2 {
					op = stressOps[rng.IntN(len(stressOps))]
				}
				var err error
				if perr := tensor.Catch(func() { err = op.run(dev, rng, sh) }); perr != nil {
					err = perr
				}
				if err != nil {
					t.Errorf("goroutine %d, op %d (%s) on %s: %v", g, it, op.name, dev.Name(), err)
					return
				}
				mu.Lock()
				counts[op.name]++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	for i, d := range watch {
		if err := d.Sync(); err != nil {
			t.Fatalf("Sync of %s after the stress: %v", d.Name(), err)
		}
		// Every tensor the goroutines made was released: the device
		// holds what it held before (the shared inputs).
		if after := d.Stats().LiveBytes; after != before[i] {
			t.Errorf("%s: live bytes %d after the stress, %d before", d.Name(), after, before[i])
		}
	}
	if len(counts) != len(stressOps) {
		t.Errorf("ran %d of the %d ops: %v", len(counts), len(stressOps), counts)
	}
	t.Logf("%s: %v", dev.Name(), counts)
}
