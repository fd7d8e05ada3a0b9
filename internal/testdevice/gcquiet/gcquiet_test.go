package gcquiet

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuietRunsPendingCleanups drops objects whose cleanups lower a
// counter, as a forgotten tensor's cleanup lowers its device's live bytes:
// Quiet must return only after every one of them ran, with automatic
// collection off until the end of its test, and restore it then.
func TestQuietRunsPendingCleanups(t *testing.T) {
	const objects, size = 1000, 128
	var live atomic.Int64
	for range objects {
		live.Add(size)
		runtime.AddCleanup(new([64]byte), func(n int64) { live.Add(-n) }, size)
	}
	t.Run("quiet", func(t *testing.T) {
		Quiet(t, live.Load)
		require.Zero(t, live.Load(), "cleanups still to run after Quiet")
		off := debug.SetGCPercent(-1)
		require.Equal(t, -1, off, "automatic collection is off for the rest of the test")
	})
	restored := debug.SetGCPercent(100)
	debug.SetGCPercent(restored)
	require.NotEqual(t, -1, restored, "automatic collection is back on after the test")
}
