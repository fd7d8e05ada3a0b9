package cpu

import (
	"runtime"
	"sync"
)

// parallelFor calls fn on disjoint chunks [lo, hi) covering [0, n). It
// splits only when every worker would get at least grain items: starting a
// goroutine costs around a microsecond, which dwarfs a small kernel, so tiny
// ops stay on the caller's goroutine.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	lo := 0
	for w := range workers {
		// Spread the remainder so chunk sizes differ by at most one.
		hi := lo + n/workers
		if w < n%workers {
			hi++
		}
		if w == workers-1 {
			fn(lo, hi) // the caller does the last share instead of idling
			break
		}
		start := lo // lo moves on before the goroutine runs
		wg.Go(func() { fn(start, hi) })
		lo = hi
	}
	wg.Wait()
}
