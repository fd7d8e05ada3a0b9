package tensor

import (
	"testing"
	"time"

	"github.com/webtensor/webtensor/internal/perop"
)

// BenchmarkSmallOps measures the host cost of a tiny op, the issue's
// "per-op cost of 1,000 small batched ops": each iteration chains 1,000
// Adds of two [8] float32 tensors (every one consumes the previous
// result, releasing it), then reads the last result back once, so the
// device runs them as one batch. It reports ns and heap allocations per
// small op (the read-back amortized over the 1,000), and issue-ns, the
// host's share: the time to issue an op, without waiting for the device.
//
//	go test ./tensor -run '^$' -bench SmallOps -benchtime 20x
func BenchmarkSmallOps(b *testing.B) {
	const ops = 1000
	forEachBenchDevice(b, func(b *testing.B, dev *Device) {
		x := FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 8)
		y := FromFloat32(dev, []float32{0, 0, 0, 0, 0, 0, 0, 0}, 8)
		defer releaseAll(x, y)
		perop.Bench(b, ops, func() time.Duration {
			start := time.Now()
			h := x.Add(y)
			for range ops - 1 {
				next := h.Add(y)
				h.Release()
				h = next
			}
			issue := time.Since(start)
			got, err := h.Float32s()
			h.Release()
			if err != nil || got[7] != 8 {
				b.Fatalf("after %d adds of zero: %v, %v", ops, got, err)
			}
			return issue
		})
	})
}
