package haltest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// testStats checks that kernels stay on the device: a chain of kernels
// and a Sync make no host reads, each Read makes exactly one, and kernels
// count as dispatches.
func testStats(t *testing.T, s *suite) {
	const (
		n     = 1000
		steps = 100
	)
	dt := hal.Float32
	if !s.has(hal.Add.Kernel(), dt) {
		t.Skip("add is not declared for float32")
	}
	rng := newRand(t.Name())
	x := s.operand(t, dt, []int{n}, contiguous, bind(wide, rng, dt))
	c := s.operand(t, dt, []int{n}, contiguous, bind(wide, rng, dt))
	pong := s.output(t, dt, []int{n}, contiguous)
	ping := x

	before := s.dev.Stats()
	for range steps {
		require.NoError(t, s.dev.Binary(hal.Add, pong.View, ping.View, c.View))
		ping, pong = pong, ping
	}
	require.NoError(t, s.dev.Sync())
	mid := s.dev.Stats()
	assert.Equal(t, before.HostReads, mid.HostReads, "kernels and Sync must not read back to the host")
	// A backend that fuses elementwise chains (webgpu) runs them in fewer.
	assert.Positive(t, mid.Dispatches-before.Dispatches, "kernels are dispatches")

	got := download(t, s.dev, ping.Buf, dt, n)
	assert.Equal(t, mid.HostReads+1, s.dev.Stats().HostReads, "one Read is one host read")

	// The reference repeats the same float32 additions in the same order.
	// Under WGSL each may round to the other neighbour: up to an ulp
	// (2u·|v|) per step away from the nearest-rounded sequence.
	xs, cs := x.values(), c.values()
	want, drift := make([]float64, n), make([]float64, n)
	for i := range want {
		v := xs[i]
		for range steps {
			v = roundTo(dt, v+cs[i])
			drift[i] += 2 * unitRoundoff(dt) * math.Abs(v)
		}
		want[i] = v
	}
	if s.arith.Faithful() {
		checkWithin(t, s.arith, dt, got, want, drift, nil)
	} else {
		checkExact(t, dt, got, want, nil)
	}
}
