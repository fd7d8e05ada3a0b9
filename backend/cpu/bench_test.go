package cpu

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// BenchmarkMatMul measures square products through the device, float32
// and float64, and many small float32 products in one batch.
func BenchmarkMatMul(b *testing.B) {
	h := newHarness(b)
	for _, c := range []struct {
		dt         hal.DType
		batch, dim int
	}{{hal.Float32, 1, 256}, {hal.Float32, 1, 1024}, {hal.Float64, 1, 512}, {hal.Float16, 1, 256}, {hal.Float32, 512, 16}} {
		b.Run(fmt.Sprintf("%v/%dx%d", c.dt, c.batch, c.dim), func(b *testing.B) {
			n := c.batch * c.dim * c.dim
			x := h.view(c.dt, randn(newRand(), n), c.batch, c.dim, c.dim)
			y := h.view(c.dt, randn(newRand(), n), c.batch, c.dim, c.dim)
			dst := h.zeros(c.dt, c.batch, c.dim, c.dim)
			for b.Loop() {
				require.NoError(b, h.dev.MatMul(dst, x, y, 1, 0))
			}
			flops := 2 * float64(c.batch) * float64(c.dim*c.dim*c.dim) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// BenchmarkElementwise measures memory-bound and compute-bound kernels on
// 1M elements: contiguous, broadcast and transposed inputs.
func BenchmarkElementwise(b *testing.B) {
	h := newHarness(b)
	const r, c = 1024, 1024
	x := h.view(hal.Float32, randn(newRand(), r*c), r, c)
	y := h.view(hal.Float32, randn(newRand(), r*c), r, c)
	row := h.view(hal.Float32, randn(newRand(), c), c)
	row = hal.View{Buf: row.Buf, DType: hal.Float32, Shape: []int{r, c}, Strides: []int{0, 1}}
	xt := hal.View{Buf: x.Buf, DType: hal.Float32, Shape: []int{r, c}, Strides: []int{1, r}}
	half := h.view(hal.Float16, randn(newRand(), r*c), r, c)
	dst := h.zeros(hal.Float32, r, c)
	hdst := h.zeros(hal.Float16, r, c)
	for _, k := range []struct {
		name string
		run  func() error
	}{
		{"add", func() error { return h.dev.Binary(hal.Add, dst, x, y) }},
		{"add-broadcast", func() error { return h.dev.Binary(hal.Add, dst, x, row) }},
		{"copy-transposed", func() error { return h.dev.Copy(dst, xt) }},
		{"exp", func() error { return h.dev.Unary(hal.Exp, dst, x, hal.Args{}) }},
		{"gelu", func() error { return h.dev.Unary(hal.GELU, dst, x, hal.Args{}) }},
		{"add-float16", func() error { return h.dev.Binary(hal.Add, hdst, half, half) }},
		{"sum-rows", func() error { return h.dev.Reduce(hal.Sum, hal.Contiguous(dst.Buf, hal.Float32, r), x, 1) }},
		{"sum-columns", func() error { return h.dev.Reduce(hal.Sum, hal.Contiguous(dst.Buf, hal.Float32, c), xt, 1) }},
		{"sum-all", func() error { return h.dev.Reduce(hal.Sum, hal.Contiguous(dst.Buf, hal.Float32), x, 2) }},
		{"logsumexp-rows", func() error {
			return h.dev.Reduce(hal.LogSumExp, hal.Contiguous(dst.Buf, hal.Float32, r), x, 1)
		}},
	} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				require.NoError(b, k.run())
			}
			b.ReportMetric(float64(r*c)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	}
}

// BenchmarkGEMM measures the packed GEMM engine on float32 squares, one
// float64 square, and the three products of an MLP training step at batch
// 128 (forward x·Wᵀ, backward g·W and gᵀ·x), reporting GFLOPS. It loops
// over b.N rather than b.Loop: with -cpu 1,2 a b.Loop sub-benchmark does
// its timed run before the testing package sets GOMAXPROCS, so the first
// -cpu value would be measured at the previous one.
func BenchmarkGEMM(b *testing.B) {
	type shape struct {
		name    string
		at, bt  bool
		m, n, k int
	}
	var shapes []shape
	for _, n := range []int{256, 512, 1024, 2048} {
		shapes = append(shapes, shape{fmt.Sprintf("f32/%d", n), false, false, n, n, n})
	}
	shapes = append(shapes,
		shape{"mlp/x·Wt", false, true, 128, 512, 784},
		shape{"mlp/g·W", false, false, 128, 784, 512},
		shape{"mlp/gt·x", true, false, 512, 784, 128},
		shape{"mlp/512x512x128", false, true, 128, 512, 512},
	)
	rng := newRand()
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			x := make([]float32, s.m*s.k)
			y := make([]float32, s.k*s.n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := range y {
				y[i] = float32(rng.NormFloat64())
			}
			c := make([]float32, s.m*s.n)
			lda, ldb := s.k, s.n
			if s.at {
				lda = s.m
			}
			if s.bt {
				ldb = s.k
			}
			b.ResetTimer()
			for range b.N {
				gemm(s.at, s.bt, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, c, s.n)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
	b.Run("f64/1024", func(b *testing.B) {
		const n = 1024
		x, y, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		b.ResetTimer()
		for range b.N {
			gemm(false, false, n, n, n, 1, x, n, y, n, 0, c, n)
		}
		b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
	})
}

// BenchmarkStream measures the memory-bound float32 kernels at 16M
// elements (the add, relu and sum), with the SIMD kernels and,
// for comparison, the portable loops.
func BenchmarkStream(b *testing.B) {
	h := newHarness(b)
	const n = 16 << 20
	x := h.view(hal.Float32, randn(newRand(), n), n)
	y := h.view(hal.Float32, randn(newRand(), n), n)
	dst := h.zeros(hal.Float32, n)
	sum := h.zeros(hal.Float32)
	for _, k := range []struct {
		name  string
		bytes int // moved per call
		run   func() error
	}{
		{"add", 12 * n, func() error { return h.dev.Binary(hal.Add, dst, x, y) }},
		{"relu", 8 * n, func() error { return h.dev.Unary(hal.ReLU, dst, x, hal.Args{}) }},
		{"sum", 4 * n, func() error { return h.dev.Reduce(hal.Sum, sum, x, 1) }},
	} {
		for _, simd := range []bool{true, false} {
			name := k.name
			if !simd {
				name += "-portable"
			}
			b.Run(name, func(b *testing.B) {
				saved := hasSIMD
				hasSIMD = hasSIMD && simd
				defer func() { hasSIMD = saved }()
				for b.Loop() {
					require.NoError(b, k.run())
				}
				b.ReportMetric(float64(k.bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkSoftmax measures softmax and log_softmax over the rows of a
// 4096×1024 float32 matrix (the size), and float64.
func BenchmarkSoftmax(b *testing.B) {
	h := newHarness(b)
	const r, c = 4096, 1024
	for _, dt := range []hal.DType{hal.Float32, hal.Float64} {
		x := h.view(dt, randn(newRand(), r*c), r, c)
		dst := h.zeros(dt, r, c)
		for _, log := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/log=%v", dt, log), func(b *testing.B) {
				for b.Loop() {
					require.NoError(b, h.dev.Softmax(dst, x, log))
				}
				b.ReportMetric(float64(r*c*dt.Size()*2)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkSIMDKernels measures the float32 kernels alone, one goroutine,
// in cache (64K elements) and from memory (16M): the gap shows whether a
// kernel is bound by its instructions or by memory.
func BenchmarkSIMDKernels(b *testing.B) {
	for _, n := range []int{64 << 10, 16 << 20} {
		x, y, out := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i%7)-3, float32(i%5)
		}
		for _, k := range []struct {
			name  string
			bytes int
			run   func()
		}{
			{"add", 12, func() { binaryF32(hal.Add, out, x, y) }},
			{"relu", 8, func() { reluF32(out, x) }},
			{"sum", 4, func() { sumF32(x) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				for b.Loop() {
					k.run()
				}
				b.ReportMetric(float64(k.bytes*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkStreamSizes measures add, relu, copy and the full sum through
// the device from in-cache to out-of-cache sizes, where the choices of
// when to split and how to store show. It loops over b.N (see
// BenchmarkGEMM); run it under GOMAXPROCS=1 and =2 to compare.
func BenchmarkStreamSizes(b *testing.B) {
	h := newHarness(b)
	for _, n := range []int{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20} {
		x := h.view(hal.Float32, randn(newRand(), n), n)
		y := h.view(hal.Float32, randn(newRand(), n), n)
		dst := h.zeros(hal.Float32, n)
		sum := h.zeros(hal.Float32)
		for _, k := range []struct {
			name  string
			bytes int // moved per call
			run   func() error
		}{
			{"add", 12 * n, func() error { return h.dev.Binary(hal.Add, dst, x, y) }},
			{"relu", 8 * n, func() error { return h.dev.Unary(hal.ReLU, dst, x, hal.Args{}) }},
			{"copy", 8 * n, func() error { return h.dev.Copy(dst, x) }},
			{"sum", 4 * n, func() error { return h.dev.Reduce(hal.Sum, sum, x, 1) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				for range b.N {
					if err := k.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(k.bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

func init() {
	// WEBTENSOR_NTMIN overrides ntMin in benchmarks, to compare settings.
	if v, err := strconv.Atoi(os.Getenv("WEBTENSOR_NTMIN")); err == nil {
		ntMin = v
	}
}

// BenchmarkStreamVariants times single calls of add, relu and the full
// sum, alternating between cached and non-temporal stores call by call,
// and reports each variant's fastest and median call: on a busy machine
// the fastest call shows what a quiet one would give, and alternating
// exposes the variants to the same noise.
func BenchmarkStreamVariants(b *testing.B) {
	h := newHarness(b)
	type variant struct {
		name string
		nt   bool
	}
	variants := []variant{{"plain", false}, {"nt", true}}
	savedNT := ntMin
	defer func() { ntMin = savedNT }()
	for _, n := range []int{64 << 10, 1 << 20, 4 << 20, 16 << 20} {
		x := h.view(hal.Float32, randn(newRand(), n), n)
		y := h.view(hal.Float32, randn(newRand(), n), n)
		dst := h.zeros(hal.Float32, n)
		sum := h.zeros(hal.Float32)
		for _, k := range []struct {
			name  string
			bytes int
			run   func() error
		}{
			{"add", 12 * n, func() error { return h.dev.Binary(hal.Add, dst, x, y) }},
			{"relu", 8 * n, func() error { return h.dev.Unary(hal.ReLU, dst, x, hal.Args{}) }},
			{"sum", 4 * n, func() error { return h.dev.Reduce(hal.Sum, sum, x, 1) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				times := make([][]time.Duration, len(variants))
				reps := max(1, (1<<22)/n) // calls per timing
				for range b.N {
					for v, vr := range variants {
						ntMin = savedNT
						if !vr.nt {
							ntMin = 1 << 62
						}
						start := time.Now()
						for range reps {
							if err := k.run(); err != nil {
								b.Fatal(err)
							}
						}
						times[v] = append(times[v], time.Since(start)/time.Duration(reps))
					}
				}
				for v, ts := range times {
					slices.Sort(ts)
					b.ReportMetric(float64(k.bytes)/ts[0].Seconds()/1e9, variants[v].name+"-best-GB/s")
					b.ReportMetric(float64(k.bytes)/ts[len(ts)/2].Seconds()/1e9, variants[v].name+"-med-GB/s")
				}
			})
		}
	}
}
