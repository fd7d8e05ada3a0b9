package graph

import (
	"math"
	"testing"
	"time"

	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkMLP times one training step of a 784-512-512-10 MLP (ReLU,
// softmax cross-entropy from LogSoftmax and Gather) at batch 128: the
// recorded forward pass alone, and forward plus backward. Every iteration
// waits for the device (Sync), so GPU time counts, and releases all it made,
// which the benchmark checks through the device's live bytes.
//
//	go test ./graph -run '^$' -bench MLP -benchtime 5x
//
// forward+backward also reports bwd/fwd, the backward pass's time over the
// forward's within the same iterations (PyTorch's is typically about 2: a
// matmul's gradient is two matmuls).
func BenchmarkMLP(b *testing.B) {
	forEachBenchDevice(b, func(b *testing.B, dev *tensor.Device) {
		m := newBenchMLP(dev, []int{784, 512, 512, 10}, 128)
		defer m.release()
		b.Run("forward", func(b *testing.B) {
			m.run(b, func() {
				loss := m.loss()
				loss.Release()
				m.sync(b)
			})
		})
		b.Run("forward+backward", func(b *testing.B) {
			var fwd, bwd time.Duration
			warm := false // the first step compiles kernels: leave it out of the ratio
			m.run(b, func() {
				start := time.Now()
				loss := m.loss()
				m.sync(b)
				mid := time.Now()
				if err := Backward(loss); err != nil {
					b.Fatal(err)
				}
				loss.Release()
				m.sync(b)
				if warm {
					fwd += mid.Sub(start)
					bwd += time.Since(mid)
				}
				warm = true
				ZeroGrad(m.params...)
			})
			b.ReportMetric(float64(bwd)/float64(fwd), "bwd/fwd")
		})
	})
}

// forEachBenchDevice runs f as a sub-benchmark on the CPU and on WebGPU.
func forEachBenchDevice(b *testing.B, f func(b *testing.B, dev *tensor.Device)) {
	b.Run("cpu", func(b *testing.B) { f(b, cpuDevice(b)) })
	b.Run("webgpu", func(b *testing.B) { f(b, webgpuDevice(b)) })
}

type benchMLP struct {
	dev       *tensor.Device
	params    []*Value // w1, b1, w2, b2, …
	x, labels *Value
}

// newBenchMLP draws weights and biases uniform in ±1/√fan-in (PyTorch's
// nn.Linear initialization, so activations keep their scale through the
// layers), a standard normal batch and random labels.
func newBenchMLP(dev *tensor.Device, sizes []int, batch int) *benchMLP {
	g := tensor.NewGenerator(1)
	uniform := func(bound float64, shape ...int) *tensor.Tensor {
		u := g.Rand(dev, shape...)
		defer u.Release()
		c := u.SubScalar(0.5)
		defer c.Release()
		return c.MulScalar(2 * bound)
	}
	m := &benchMLP{dev: dev}
	for l := 0; l+1 < len(sizes); l++ {
		bound := 1 / math.Sqrt(float64(sizes[l]))
		m.params = append(m.params,
			Param(uniform(bound, sizes[l+1], sizes[l])),
			Param(uniform(bound, sizes[l+1])))
	}
	m.x = Constant(g.Randn(dev, batch, sizes[0]))
	labels := make([]int32, batch)
	for i := range labels {
		labels[i] = int32((i * 7) % sizes[len(sizes)-1])
	}
	m.labels = Constant(tensor.FromInt32(dev, labels, batch, 1))
	return m
}

// loss is −mean(log_softmax(MLP(x))[labels]), releasing every
// intermediate as soon as the next op has consumed it, as a training loop
// would.
func (m *benchMLP) loss() *Value {
	h := m.x
	layers := len(m.params) / 2
	for l := range layers {
		wt := m.params[2*l].T()
		a := MatMul(h, wt)
		wt.Release()
		if h != m.x {
			h.Release()
		}
		h = Add(a, m.params[2*l+1])
		a.Release()
		if l+1 < layers {
			r := ReLU(h)
			h.Release()
			h = r
		}
	}
	lp := LogSoftmax(h, 1)
	h.Release()
	picked := lp.Gather(1, m.labels)
	lp.Release()
	mean := picked.Mean(nil, false)
	picked.Release()
	loss := Neg(mean)
	mean.Release()
	return loss
}

func (m *benchMLP) sync(b *testing.B) {
	if err := m.dev.Sync(); err != nil {
		b.Fatal(err)
	}
}

// run runs step once to compile kernels and fill the memory pools, then
// times it, and fails if the device holds more memory afterwards than
// before: a step that leaks.
func (m *benchMLP) run(b *testing.B, step func()) {
	step()
	live := m.dev.Stats().LiveBytes
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
	if now := m.dev.Stats().LiveBytes; now != live {
		b.Fatalf("live device memory went from %d to %d bytes: a step leaks", live, now)
	}
}

func (m *benchMLP) release() {
	releaseValues(m.params)
	m.x.Release()
	m.labels.Release()
}

// BenchmarkConv2dBackward times the input's and the weight's gradients of
// a ResNet-like 3×3 convolution (batch 8, 64 channels, 56×56, padding 1)
// on the CPU, apart (the other operand a constant) and together, in
// GFLOPS counting the forward's multiply-adds once per gradient:
//
//	go test ./graph -run '^$' -bench Conv2dBackward -benchtime 5x
func BenchmarkConv2dBackward(b *testing.B) {
	dev := cpuDevice(b)
	const n, c, hw, k = 8, 64, 56, 3
	opts := tensor.ConvOptions{Padding: [2]int{1, 1}}
	flops := 2.0 * n * c * hw * hw * c * k * k
	for _, tc := range []struct {
		name      string
		gx, gw    bool
		gradients int
	}{{"input", true, false, 1}, {"weight", false, true, 1}, {"both", true, true, 2}} {
		b.Run(tc.name, func(b *testing.B) {
			gen := tensor.NewGenerator(1)
			leaf := func(grad bool, shape ...int) *Value {
				if grad {
					return Param(gen.Randn(dev, shape...))
				}
				return Constant(gen.Randn(dev, shape...))
			}
			x, w := leaf(tc.gx, n, c, hw, hw), leaf(tc.gw, c, c, k, k)
			seed := Constant(gen.Randn(dev, n, c, hw, hw))
			y := Conv2d(x, w, nil, opts) // retained: time the backward alone
			defer func() { y.Release(); x.Release(); w.Release(); seed.Release() }()
			var inputs []*Value
			if tc.gx {
				inputs = append(inputs, x)
			}
			if tc.gw {
				inputs = append(inputs, w)
			}
			for b.Loop() {
				grads, err := Grad([]*Value{y}, inputs, []*Value{seed}, RetainGraph)
				if err != nil {
					b.Fatal(err)
				}
				for _, g := range grads {
					g.Release()
				}
			}
			b.ReportMetric(flops*float64(tc.gradients)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}
