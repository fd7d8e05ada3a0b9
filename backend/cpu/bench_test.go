package cpu

import (
	"fmt"
	"testing"

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
