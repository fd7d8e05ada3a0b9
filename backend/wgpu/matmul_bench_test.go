//go:build cgo

package wgpu

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// BenchmarkMatMulVariants times float32 products per variant (classic is
// the kernel before the tiled ones), in GFLOPS: square ones, and on
// hardware adapters 2048² and 64 batches of 256² too. The products are
// recorded back to back with one Sync at the end, so that a GPU's
// round trip does not hide the kernels; tiles whose workgroups are few
// also run split along K as the GPU heuristic would split them.
func BenchmarkMatMulVariants(b *testing.B) {
	d := openTestDevice(b)
	type shape struct{ batch, size int }
	shapes := []shape{{1, 256}, {1, 512}, {1, 1024}}
	if d.hardwareGEMM() {
		shapes = append(shapes, shape{1, 2048}, shape{64, 256})
	}
	for _, sh := range shapes {
		size := sh.size
		buf := func() hal.View {
			h, err := d.Alloc(int64(4 * sh.batch * size * size))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { d.Free(h) })
			v := hal.Contiguous(h, hal.Float32, sh.batch, size, size)
			if err := d.Fill(v, 0.5, 1e-6); err != nil {
				b.Fatal(err)
			}
			return v
		}
		x, y, z := buf(), buf(), buf()
		variants := append([]matmulConfig{{Kind: matmulClassic}}, matmulTiles...)
		for _, c := range matmulTiles {
			blocks := sh.batch * ceilDiv(size, c.WY*c.TM) * ceilDiv(size, c.WX*c.TN)
			if blocks < gpuWantWorkgroups && size >= 2*gpuMinSliceK {
				c.Split = min(ceilDiv(gpuWantWorkgroups, blocks), size/gpuMinSliceK)
				variants = append(variants, c)
			}
		}
		for _, v := range variants {
			if v.Kind == matmulTiled && !d.fits(v) {
				continue
			}
			b.Run(fmt.Sprintf("%dx%d/%v", sh.batch, size, v), func(b *testing.B) {
				prev := matmulOverride.Load()
				matmulOverride.Store(&v)
				defer matmulOverride.Store(prev)
				if err := d.MatMul(z, x, y, 1, 0); err != nil { // compiles
					b.Fatal(err)
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if err := d.MatMul(z, x, y, 1, 0); err != nil {
						b.Fatal(err)
					}
				}
				if err := d.Sync(); err != nil { // timed: the products run until here
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(2*float64(sh.batch)*float64(size)*float64(size)*float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}
