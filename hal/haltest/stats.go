package haltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// testStats checks that kernels stay on the device: a chain of kernels
// makes no host reads, and each Read makes exactly one.
func testStats(t *testing.T, dev hal.Device) {
	const (
		n     = 1000
		steps = 100
	)
	rng := newRand(steps)
	x, c := randValues(rng, n, -4, 4), randValues(rng, n, -4, 4)
	ping, step := upload(t, dev, x), upload(t, dev, c)
	pong := alloc(t, dev, n*4)

	before := dev.Stats()
	for range steps {
		require.NoError(t, dev.Binary(hal.Add, pong, ping, step, n))
		ping, pong = pong, ping
	}
	require.NoError(t, dev.Sync())
	mid := dev.Stats()
	assert.Equal(t, before.HostReads, mid.HostReads, "kernels and Sync must not read back to the host")
	assert.GreaterOrEqual(t, mid.Dispatches-before.Dispatches, int64(steps), "every kernel is a dispatch")

	got := download(t, dev, ping, n)
	assert.Equal(t, mid.HostReads+1, dev.Stats().HostReads, "one Read is one host read")

	// The reference repeats the same float32 additions in the same order.
	want := make([]float64, n)
	for i := range want {
		v := x[i]
		for range steps {
			v = float32(float64(v) + float64(c[i]))
		}
		want[i] = float64(v)
	}
	checkExact(t, got, want)
}
