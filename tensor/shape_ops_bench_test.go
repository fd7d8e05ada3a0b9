package tensor

import (
	"testing"
)

// Benchmarks of issue 19's shape ops, each beside the alternative it
// should beat or match, in one run per device. Results stay alive until the
// Sync that ends the sample, as in bench/, because a lazy engine may
// rightly skip work whose result is released unread.
//
//	go test ./tensor -run '^$' -bench 'Tril|Einsum|Interpolate' -benchtime 20x
//
// Tril: the device-made mask (two Fills and a comparison) against a mask
// built on the host and uploaded per call, for a 1024×1024 matrix.
func BenchmarkTril(b *testing.B) {
	const n = 1024
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		x := Ones(dev, n, n)
		defer x.Release()
		b.Run("device-mask", func(b *testing.B) {
			var keep []*Tensor
			for range b.N {
				keep = append(keep, x.Tril(0))
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
		b.Run("host-mask", func(b *testing.B) {
			zero := Zeros(dev)
			defer zero.Release()
			var keep []*Tensor
			for range b.N {
				m := make([]int32, n*n)
				for i := range n {
					for j := 0; j <= i; j++ {
						m[i*n+j] = 1
					}
				}
				mask := FromInt32(dev, m, n, n)
				keep = append(keep, Where(mask, x, zero))
				mask.Release()
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
	})
}

// Einsum's lowering against the MatMul it lowers to: the overhead of
// parsing, planning and the views.
func BenchmarkEinsum(b *testing.B) {
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		g := NewGenerator(1)
		x, y := g.Randn(dev, 8, 64, 96), g.Randn(dev, 8, 96, 80)
		defer releaseAll(x, y)
		b.Run("einsum", func(b *testing.B) {
			var keep []*Tensor
			for range b.N {
				keep = append(keep, Einsum("bij,bjk->bik", x, y))
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
		b.Run("matmul", func(b *testing.B) {
			var keep []*Tensor
			for range b.N {
				keep = append(keep, MatMul(x, y))
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
	})
}

// Interpolate (a Resample kernel per spatial axis; before, a Gather per tap
// and weighted sums)
// against GridSample, one kernel computing the same bilinear upsampling
// (border padding, identity grid made once outside the loop).
func BenchmarkInterpolate(b *testing.B) {
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		g := NewGenerator(1)
		x := g.Randn(dev, 4, 16, 64, 64)
		theta := FromFloat32(dev, []float32{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0}, 4, 2, 3)
		grid := AffineGrid(theta, []int{4, 16, 128, 128}, false)
		defer releaseAll(x, theta, grid)
		b.Run("interpolate-bilinear", func(b *testing.B) {
			var keep []*Tensor
			for range b.N {
				keep = append(keep, Interpolate(x, InterpolateOptions{Size: []int{128, 128}, Mode: InterpolateBilinear}))
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
		b.Run("gridsample-bilinear", func(b *testing.B) {
			var keep []*Tensor
			for range b.N {
				keep = append(keep, GridSample(x, grid, GridBorder, false))
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
		b.Run("interpolate-bicubic", func(b *testing.B) {
			var keep []*Tensor
			for range b.N {
				keep = append(keep, Interpolate(x, InterpolateOptions{Size: []int{128, 128}, Mode: InterpolateBicubic}))
			}
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			releaseAll(keep...)
		})
	})
}
