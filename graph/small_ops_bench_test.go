package graph

import (
	"testing"
	"time"

	"github.com/webtensor/webtensor/internal/perop"
	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkSmallOps is tensor's BenchmarkSmallOps with recording: 1,000
// chained Adds of [8] float32 values, one of them a parameter, so every
// op records a node, then one read. The gap to the tensor benchmark is
// the recording's own cost per op.
//
//	go test ./graph -run '^$' -bench SmallOps -benchtime 20x
func BenchmarkSmallOps(b *testing.B) {
	const ops = 1000
	forEachBenchDevice(b, func(b *testing.B, dev *tensor.Device) {
		x := Param(tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 8))
		y := Constant(tensor.FromFloat32(dev, make([]float32, 8), 8))
		defer x.Release()
		defer y.Release()
		perop.Bench(b, ops, func() time.Duration {
			start := time.Now()
			h := Add(x, y)
			for range ops - 1 {
				next := Add(h, y)
				h.Release()
				h = next
			}
			issue := time.Since(start)
			got, err := h.Tensor().Float32s()
			h.Release()
			if err != nil || got[7] != 8 {
				b.Fatalf("after %d adds of zero: %v, %v", ops, got, err)
			}
			return issue
		})
	})
}
