package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// covered runs parallelFor over n items and checks every item is visited
// exactly once.
func covered(t *testing.T, n, grain int, inner func()) {
	seen := make([]atomic.Int32, n)
	parallelFor(n, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
		if inner != nil {
			inner()
		}
	})
	for i := range seen {
		if seen[i].Load() != 1 {
			require.Failf(t, "coverage", "item %d visited %d times", i, seen[i].Load())
		}
	}
}

// TestParallelForStress runs parallel kernels nested inside chunks, from
// many goroutines at once, and across GOMAXPROCS changes: each must cover
// its range exactly once and return, the helpers neither losing a wake-up
// nor waiting on themselves.
func TestParallelForStress(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	t.Run("nested", func(t *testing.T) {
		for range 200 {
			covered(t, 64, 1, func() { covered(t, 32, 1, func() { covered(t, 8, 1, nil) }) })
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 100 {
					covered(t, 1000, 10, nil)
				}
			}()
		}
		wg.Wait()
	})
	t.Run("gomaxprocs", func(t *testing.T) {
		for i := range 400 {
			runtime.GOMAXPROCS(1 + i%2*3)
			covered(t, 100, 1, nil)
			if i%50 == 0 {
				// Let the helpers park before the next offer.
				time.Sleep(2 * helperSpin)
			}
		}
	})
}
