package haltest

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// Benchmark times each kernel on dev. Every iteration issues the kernel and
// then Syncs, so an asynchronous backend is timed on finished work, not on
// how fast it can queue.
func Benchmark(b *testing.B, dev hal.Device) {
	for _, n := range []int{1 << 10, 1 << 20} {
		for _, op := range []hal.BinaryOp{hal.Add, hal.Mul} {
			b.Run(fmt.Sprintf("%v/%s", op, count(n)), func(b *testing.B) {
				x, y, dst := benchBuffers(b, dev, n), benchBuffers(b, dev, n), benchBuffers(b, dev, n)
				b.SetBytes(3 * 4 * int64(n)) // two reads and a write
				loop(b, dev, func() error { return dev.Binary(op, dst, x, y, n) })
			})
		}
		for _, op := range []hal.UnaryOp{hal.ReLU, hal.Sigmoid} {
			b.Run(fmt.Sprintf("%v/%s", op, count(n)), func(b *testing.B) {
				x, dst := benchBuffers(b, dev, n), benchBuffers(b, dev, n)
				b.SetBytes(2 * 4 * int64(n))
				loop(b, dev, func() error { return dev.Unary(op, dst, x, n) })
			})
		}
	}
	for _, size := range []int{64, 256, 1024} {
		b.Run(fmt.Sprintf("matmul/%d", size), func(b *testing.B) {
			x, y, dst := benchBuffers(b, dev, size*size), benchBuffers(b, dev, size*size), benchBuffers(b, dev, size*size)
			loop(b, dev, func() error { return dev.MatMul(dst, x, y, size, size, size) })
			flops := 2 * float64(size) * float64(size) * float64(size) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
	benchmarkTinyOps(b, dev)
}

// benchmarkTinyOps measures the fixed cost of a kernel: 1,000 adds of 16
// elements, either queued back to back with one Sync at the end or each
// followed by its own Sync. The gap between the two is what batching saves.
func benchmarkTinyOps(b *testing.B, dev hal.Device) {
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
			x, dst := benchBuffers(b, dev, n), benchBuffers(b, dev, n)
			for b.Loop() {
				for range ops {
					if err := dev.Binary(hal.Add, dst, x, x, n); err != nil {
						b.Fatal(err)
					}
					if syncEach {
						if err := dev.Sync(); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := dev.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ops), "ns/tiny-op")
		})
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

// benchBuffers returns a buffer of n random float32s, freed after b.
func benchBuffers(b *testing.B, dev hal.Device, n int) hal.Buffer {
	return upload(b, dev, randValues(newRand(uint64(n)), n, -4, 4))
}

// count formats n as 1K, 1M, ….
func count(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}
