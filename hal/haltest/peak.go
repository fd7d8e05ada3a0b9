package haltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// testPeakLiveBytes checks Stats' PeakLiveBytes: it follows LiveBytes up
// but not down, whether a buffer is new or comes from the pool, and
// ResetPeakLiveBytes restarts it from the bytes live at the call.
func testPeakLiveBytes(t *testing.T, dev hal.Device) {
	dev.ResetPeakLiveBytes()
	start := dev.Stats()
	assert.Equal(t, start.LiveBytes, start.PeakLiveBytes, "after a reset the peak is what is live")

	// Two buffers live at once, then freed: the peak keeps both.
	a, err := dev.Alloc(4096)
	require.NoError(t, err)
	b, err := dev.Alloc(3001)
	require.NoError(t, err)
	both := dev.Stats().LiveBytes
	assert.GreaterOrEqual(t, both-start.LiveBytes, int64(4096+3001))
	dev.Free(a)
	dev.Free(b)
	s := dev.Stats()
	assert.Equal(t, start.LiveBytes, s.LiveBytes)
	assert.Equal(t, both, s.PeakLiveBytes, "the peak stays at the two buffers after they are freed")

	// A reset brings it down; one buffer at a time, from the pool now,
	// raises it to one buffer's worth only.
	dev.ResetPeakLiveBytes()
	assert.Equal(t, start.LiveBytes, dev.Stats().PeakLiveBytes)
	for range 3 {
		c, err := dev.Alloc(4096)
		require.NoError(t, err)
		one := dev.Stats().LiveBytes
		dev.Free(c)
		assert.Equal(t, one, dev.Stats().PeakLiveBytes, "a pooled buffer counts toward the peak")
		assert.Less(t, one, both)
	}
}
