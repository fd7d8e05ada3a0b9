// Package gcquiet lets a test count a device's live bytes exactly: it
// turns automatic garbage collection off and first runs the cleanups of
// tensors that earlier tests forgot. It knows nothing of the tensor
// package, so that the tensor package's own tests can use it as well as
// internal/testdevice (QuietGC).
package gcquiet

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Quiet turns automatic garbage collection off for the rest of t and
// first runs the cleanups of tensors that earlier tests forgot, so that
// liveBytes (a device's live bytes) then moves only by what t does: a
// cleanup that ran during t would free bytes t never allocated.
//
// It collects until liveBytes holds still over several collections, each
// of which waits for the cleanups it queued to run: since Go 1.25 they run
// on up to GOMAXPROCS/4 goroutines, after the collection that found them,
// so that on a machine with many cores a runtime.GC() returns while the
// cleanup of an earlier test's tensor is still to come.
func Quiet(t testing.TB, liveBytes func() int64) {
	t.Helper()
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	const want = 3 // collections in a row that change nothing
	prev, stable := int64(-1), 0
	for i := 0; i < 200 && stable < want; i++ {
		collect()
		cur := liveBytes()
		if cur == prev {
			stable++
		} else {
			stable = 0
		}
		prev = cur
	}
	require.Equal(t, want, stable, "live bytes did not settle")
}

// collect runs a garbage collection and waits until the cleanups it
// queued have been taken up: a sentinel that becomes unreachable in the
// same collection has run. The wait is bounded, in case the runtime ever
// defers a cleanup; Quiet's stability check then still holds.
func collect() {
	ran := make(chan struct{})
	runtime.AddCleanup(new([8]uint64), func(ran chan struct{}) { close(ran) }, ran)
	runtime.GC()
	select {
	case <-ran:
	case <-time.After(time.Second):
	}
	// Let a cleanup goroutine that took a block next to the sentinel's
	// finish it.
	time.Sleep(time.Millisecond)
}
