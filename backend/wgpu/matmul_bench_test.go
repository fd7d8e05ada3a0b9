//go:build cgo

package wgpu

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// BenchmarkMatMulVariants times square float32 products per variant
// (classic is the kernel before the tiled ones), in GFLOPS.
func BenchmarkMatMulVariants(b *testing.B) {
	d := openTestDevice(b)
	for _, size := range []int{256, 512, 1024} {
		buf := func() hal.View {
			h, err := d.Alloc(int64(4 * size * size))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { d.Free(h) })
			v := hal.Contiguous(h, hal.Float32, size, size)
			if err := d.Fill(v, 0.5, 1e-6); err != nil {
				b.Fatal(err)
			}
			return v
		}
		x, y, z := buf(), buf(), buf()
		variants := append([]matmulConfig{{Kind: matmulClassic}}, matmulTiles...)
		for _, v := range variants {
			if v.Kind == matmulTiled && !d.fits(v) {
				continue
			}
			b.Run(fmt.Sprintf("%d/%v", size, v), func(b *testing.B) {
				prev := matmulOverride.Load()
				matmulOverride.Store(&v)
				defer matmulOverride.Store(prev)
				for b.Loop() {
					if err := d.MatMul(z, x, y, 1, 0); err != nil {
						b.Fatal(err)
					}
					if err := d.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(size)*float64(size)*float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}
