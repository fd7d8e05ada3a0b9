package cpu

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkParallelDispatch measures what a parallel call costs beyond
// its work: chunks of 1K float32 adds (a few hundred nanoseconds each),
// one per worker, so the time is mostly handing out chunks and waiting
// for the last, at GOMAXPROCS 2 and 16.
func BenchmarkParallelDispatch(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 16} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			runtime.GOMAXPROCS(procs)
			const per = 1024
			x := make([]float32, procs*per)
			for i := range x {
				x[i] = float32(i % 7)
			}
			for b.Loop() {
				parallelChunks(len(x), procs, func(_, lo, hi int) {
					for i := lo; i < hi; i++ {
						x[i] += 1
					}
				})
			}
			if x[0] == 0 {
				b.Fatal("chunks did not run")
			}
		})
	}
}
