package tensor

import (
	"testing"
)

// The issue asks whether views should be read by strided kernels or
// materialized by one strided-copy kernel before a dense one. These
// benchmarks measure both on a transposed 1024×1024 float32 operand (the
// worst case for a strided read: every step along the fast axis jumps a
// row), next to the all-contiguous baseline:
//
//	go test ./tensor -run XXX -bench 'StridedRead' -benchtime 50x
//
// Each iteration issues the op and waits for the device (Sync), so the
// time is the device's. SetBytes counts the bytes the op itself moves
// (two operands in, one result out), so MB/s compares like with like.
func BenchmarkStridedRead(b *testing.B) {
	const n = 1024
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		g := NewGenerator(1)
		x, y := g.Rand(dev, n, n), g.Rand(dev, n, n)
		xt := x.T()
		defer releaseAll(x, y, xt)
		if err := dev.Sync(); err != nil {
			b.Fatal(err)
		}

		run := func(b *testing.B, bytes int64, op func() *Tensor) {
			op().Release() // compile kernels, warm pools
			if err := dev.Sync(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(bytes)
			b.ResetTimer()
			for range b.N {
				op().Release()
				if err := dev.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		}
		const addBytes, sumBytes = 3 * 4 * n * n, 4*n*n + 4*n
		b.Run("Add/contiguous", func(b *testing.B) { run(b, addBytes, func() *Tensor { return x.Add(y) }) })
		b.Run("Add/transposed-view", func(b *testing.B) { run(b, addBytes, func() *Tensor { return xt.Add(y) }) })
		b.Run("Add/transposed-materialized", func(b *testing.B) {
			run(b, addBytes, func() *Tensor {
				packed := xt.Contiguous()
				defer packed.Release()
				return packed.Add(y)
			})
		})
		b.Run("Sum-rows/contiguous", func(b *testing.B) { run(b, sumBytes, func() *Tensor { return x.Sum([]int{1}, false) }) })
		b.Run("Sum-rows/transposed-view", func(b *testing.B) { run(b, sumBytes, func() *Tensor { return xt.Sum([]int{1}, false) }) })
		b.Run("Sum-rows/transposed-materialized", func(b *testing.B) {
			run(b, sumBytes, func() *Tensor {
				packed := xt.Contiguous()
				defer packed.Release()
				return packed.Sum([]int{1}, false)
			})
		})
	})
}

// forEachBenchDevice runs f on the CPU and on every WebGPU adapter that
// opens.
func forEachBenchDevice(b *testing.B, f func(b *testing.B, dev *Device)) {
	for _, a := range Adapters() {
		if a.Name != "cpu" && a.Name[:min(len(a.Name), 6)] != "webgpu" {
			continue
		}
		dev, err := Open(a.Name)
		if err != nil {
			b.Logf("skipping %s: %v", a.Name, err)
			continue
		}
		b.Run(a.Name, func(b *testing.B) { f(b, dev) })
	}
}
