package haltest

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// Benchmark times the kernels that dominate real workloads on dev, in
// float32. Every iteration issues the kernel and then Syncs, so an
// asynchronous backend is timed on finished work, not on how fast it can
// queue. Elementwise, reduction and im2col report bytes moved per second
// (b.SetBytes: inputs read plus dst written); matmuls report GFLOPS
// (2·M·N·K per product). Kernels the device does not declare are skipped.
func Benchmark(b *testing.B, dev hal.Device) {
	s := &suite{dev: dev, caps: dev.Capabilities()}
	const n = 1 << 20
	f32 := hal.Float32
	b.Run("add/1M", func(b *testing.B) {
		need(b, s, hal.Add.Kernel())
		x, y, dst := benchView(b, s, n), benchView(b, s, n), benchView(b, s, n)
		b.SetBytes(3 * 4 * n)
		loop(b, dev, func() error { return dev.Binary(hal.Add, dst, x, y) })
	})
	b.Run("exp/1M", func(b *testing.B) {
		need(b, s, hal.Exp.Kernel())
		x, dst := benchView(b, s, n), benchView(b, s, n)
		b.SetBytes(2 * 4 * n)
		loop(b, dev, func() error { return dev.Unary(hal.Exp, dst, x, hal.Args{}) })
	})
	b.Run("sum/1M", func(b *testing.B) {
		need(b, s, hal.Sum.Kernel())
		x, dst := benchView(b, s, n), benchView(b, s)
		b.SetBytes(4 * n)
		loop(b, dev, func() error { return dev.Reduce(hal.Sum, dst, x, 1) })
	})
	b.Run("sum-rows/1024x1024", func(b *testing.B) {
		need(b, s, hal.Sum.Kernel())
		x, dst := benchView(b, s, 1024, 1024), benchView(b, s, 1024)
		b.SetBytes(4 * n)
		loop(b, dev, func() error { return dev.Reduce(hal.Sum, dst, x, 1) })
	})
	for _, size := range []int{256, 1024} {
		b.Run(fmt.Sprintf("matmul/%d", size), func(b *testing.B) {
			need(b, s, hal.KernelMatMul)
			x, y, dst := benchView(b, s, size, size), benchView(b, s, size, size), benchView(b, s, size, size)
			loop(b, dev, func() error { return dev.MatMul(dst, x, y, 1, 0) })
			reportFLOPS(b, 2*float64(size)*float64(size)*float64(size))
		})
	}
	b.Run("matmul/attention-8x8x128x64", func(b *testing.B) {
		// Q·Kᵀ for batch 8, 8 heads, 128 tokens, head size 64, with Kᵀ a
		// transposed view as the tensor layer passes it.
		need(b, s, hal.KernelMatMul)
		const bs, h, tok, d = 8, 8, 128, 64
		q, k := benchView(b, s, bs, h, tok, d), benchView(b, s, bs, h, tok, d)
		kT := k
		kT.Shape = []int{bs, h, d, tok}
		kT.Strides = []int{h * tok * d, tok * d, 1, d}
		dst := benchView(b, s, bs, h, tok, tok)
		loop(b, dev, func() error { return dev.MatMul(dst, q, kT, 0.125, 0) })
		reportFLOPS(b, 2*bs*h*tok*tok*d)
	})
	b.Run("im2col/8x64x32x32-k3-p1", func(b *testing.B) {
		// The unfold of a 3×3 convolution layer in a small CNN.
		need(b, s, hal.KernelIm2Col)
		const bn, c, hw = 8, 64, 32
		win := window(3, 3, 1, 1, 1, 1, 1, 1)
		win.OutH, win.OutW = hw, hw
		x, dst := benchView(b, s, bn, c, hw, hw), benchView(b, s, bn, c*9, hw*hw)
		b.SetBytes(4 * (bn*c*hw*hw + bn*c*9*hw*hw))
		loop(b, dev, func() error { return dev.Im2Col(dst, x, win) })
	})
	benchmarkTinyOps(b, s, f32)
}

// benchmarkTinyOps measures the fixed cost of a kernel: 1,000 adds of 16
// elements, either queued back to back with one Sync at the end or each
// followed by its own Sync. The gap between the two is what batching saves.
func benchmarkTinyOps(b *testing.B, s *suite, dt hal.DType) {
	const (
		ops = 1000
		n   = 16
	)
	for _, syncEach := range []bool{false, true} {
		name := "tiny-add/batched"
		if syncEach {
			name = "tiny-add/sync-each"
		}
		b.Run(name, func(b *testing.B) {
			need(b, s, hal.Add.Kernel())
			x, dst := benchView(b, s, n), benchView(b, s, n)
			for b.Loop() {
				for range ops {
					if err := s.dev.Binary(hal.Add, dst, x, x); err != nil {
						b.Fatal(err)
					}
					if syncEach {
						if err := s.dev.Sync(); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := s.dev.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ops), "ns/tiny-op")
		})
	}
}

// need skips the benchmark when the device lacks kernel for float32.
func need(b *testing.B, s *suite, kernel string) {
	if !s.has(kernel, hal.Float32) {
		b.Skipf("%s is not declared for float32", kernel)
	}
}

// loop runs issue then Sync b.N times.
func loop(b *testing.B, dev hal.Device, issue func() error) {
	for b.Loop() {
		if err := issue(); err != nil {
			b.Fatal(err)
		}
		if err := dev.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

func reportFLOPS(b *testing.B, perOp float64) {
	b.ReportMetric(perOp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// benchView returns a contiguous float32 view of random values in [−1, 1),
// freed after b.
func benchView(b *testing.B, s *suite, shape ...int) hal.View {
	rng := newRand(fmt.Sprint(shape))
	buf := upload(b, s.dev, hal.Float32, mmRand(rng, numel(shape)))
	return hal.Contiguous(buf, hal.Float32, shape...)
}
