// Package perop measures the per-op cost of chains of small ops for the
// SmallOps benchmarks of packages tensor and graph. It imports neither, so
// that tensor's own tests can use it.
package perop

import (
	"runtime"
	"testing"
	"time"
)

// Bench times batch, which issues ops small ops, reads the last result
// back and returns how long issuing them took (the host's share, without
// waiting for the device). It runs batch once untimed (it compiles kernels
// and fills pools), then b.Loop times, and reports per small op: ns, the
// issue-ns share, and heap allocations.
func Bench(b *testing.B, ops int, batch func() time.Duration) {
	batch()
	var issue time.Duration
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		issue += batch()
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N * ops)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/smallop")
	b.ReportMetric(float64(issue.Nanoseconds())/n, "issue-ns/smallop")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/smallop")
}
