package cpu

import "runtime"

func maxWorkers() int { return runtime.GOMAXPROCS(0) }

// workersFor is how many chunks parallelFor cuts n items into: as many as
// there are processors, but only so many that each gets at least grain
// items. Starting a goroutine costs around a microsecond, which dwarfs a
// small kernel, so tiny ops stay on the caller's goroutine.
func workersFor(n, grain int) int { return max(1, min(maxWorkers(), n/max(grain, 1))) }

// parallelFor calls fn on disjoint chunks [lo, hi) covering [0, n), in
// parallel once every chunk gets at least grain items.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	parallelChunks(n, workersFor(n, grain), func(_, lo, hi int) { fn(lo, hi) })
}

// parallelChunks cuts [0, n) into `workers` chunks whose sizes differ by at
// most one and calls fn(k, lo, hi) on chunk k, on the caller, which would
// otherwise idle, and on helpers (see workers.go).
// Chunks may run one after another on one goroutine, so a chunk must not
// wait for another chunk of the same call; the call's return is the
// barrier between two phases.
func parallelChunks(n, workers int, fn func(k, lo, hi int)) {
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	bounds := make([][2]int, workers)
	lo := 0
	for k := range bounds {
		hi := lo + n/workers
		if k < n%workers {
			hi++
		}
		bounds[k] = [2]int{lo, hi}
		lo = hi
	}
	runChunks(bounds, fn)
}
