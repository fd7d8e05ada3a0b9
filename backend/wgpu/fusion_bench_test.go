//go:build cgo

package wgpu

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// BenchmarkFusionChain runs a 6-op elementwise chain (add, mul, relu,
// sub, tanh, maximum) at 1M elements fused and unfused, and 1,000 small
// ops (1,000 elements) in one batch; it reports dispatches per iteration.
func BenchmarkFusionChain(b *testing.B) {
	d := openTestDevice(b)
	for _, n := range []int{1 << 20, 1000} {
		for _, fused := range []bool{true, false} {
			b.Run(fmt.Sprintf("n=%d/fused=%t", n, fused), func(b *testing.B) {
				if !fused {
					defer unfused(d)()
				}
				bufs := make([]hal.View, 4)
				for k := range bufs {
					buf, err := d.Alloc(int64(4 * n))
					if err != nil {
						b.Fatal(err)
					}
					defer d.Free(buf)
					if err := d.Write(buf, make([]byte, 4*n)); err != nil {
						b.Fatal(err)
					}
					bufs[k] = hal.Contiguous(buf, hal.Float32, n)
				}
				x, y, t, u := bufs[0], bufs[1], bufs[2], bufs[3]
				chains := 1
				if n == 1000 {
					chains = 1000 / 6
				}
				before := d.Stats().Dispatches
				b.ResetTimer()
				for range b.N {
					for range chains {
						_ = d.Binary(hal.Add, t, x, y)
						_ = d.Binary(hal.Mul, u, t, y)
						_ = d.Unary(hal.ReLU, t, u, hal.Args{})
						_ = d.Binary(hal.Sub, u, t, x)
						_ = d.Unary(hal.Tanh, t, u, hal.Args{})
						_ = d.Binary(hal.Maximum, u, t, x)
					}
					if err := d.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(d.Stats().Dispatches-before)/float64(b.N), "dispatches/iter")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chains*6), "ns/elementwise-op")
			})
		}
	}
}
