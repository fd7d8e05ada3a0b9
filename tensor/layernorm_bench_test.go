package tensor

import (
	"math"
	"testing"
)

// BenchmarkLayerNorm measures LayerNorm over the rows of a 4096×1024
// float32 tensor with weight and bias, as a transformer's layer norm, on
// every bench device (issue 15: one row kernel where the device has it,
// else the composition):
//
//	go test ./tensor -run XXX -bench LayerNorm -benchtime 10x
//
// Each iteration issues the op and waits for the device; SetBytes counts
// the tensor read and the result written. The last result is read back
// and checked, so no iteration's work can be skipped unseen.
func BenchmarkLayerNorm(b *testing.B) {
	const rows, cols = 4096, 1024
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		g := NewGenerator(1)
		x, w, bias := g.Rand(dev, rows, cols), g.Rand(dev, cols), g.Rand(dev, cols)
		defer releaseAll(x, w, bias)
		op := func() *Tensor { return LayerNorm(x, []int{cols}, w, bias, 1e-5) }
		op().Release() // compile kernels, warm pools
		if err := dev.Sync(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(2 * 4 * rows * cols)
		b.ResetTimer()
		var y *Tensor
		for range b.N {
			if y != nil {
				y.Release()
			}
			y = op()
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		defer y.Release()
		// Row 0's outputs less bias, over weight, have mean 0.
		v, err := y.Float32s()
		if err != nil {
			b.Fatal(err)
		}
		wv, _ := w.Float32s()
		bv, _ := bias.Float32s()
		var s float64
		for j := range cols {
			s += float64((v[j] - bv[j]) / wv[j])
		}
		if math.Abs(s/cols) > 1e-3 {
			b.Fatalf("row 0 normalized mean %g, want 0", s/cols)
		}
	})
}
