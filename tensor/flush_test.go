package tensor_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// TestFlushKeepsReleasedStores checks that a result released after Flush
// is still computed: on a WebGPU device with fusion on, the add's kernel
// runs (one dispatch) although its result is released before the Sync,
// while the control, released without a Flush, is skipped by the lazy
// engine (no dispatch), which shows that the check can fail. The result
// itself is checked too: a tensor kept alive across the Flush holds
// a + b. On the CPU Flush is a no-op and the values are checked alone.
func TestFlushKeepsReleasedStores(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		g := tensor.NewGenerator(7)
		const n = 1001 // odd: not a whole number of vec4s
		a, b := g.Randn(dev, n), g.Randn(dev, n)
		defer a.Release()
		defer b.Release()
		av, bv := testdevice.Float64s(t, a), testdevice.Float64s(t, b)

		kept := a.Add(b)
		require.NoError(t, dev.Flush())
		got := testdevice.Float64s(t, kept)
		kept.Release()
		for i := range got {
			assert.InDelta(t, av[i]+bv[i], got[i], 1e-6, "element %d", i)
		}
		if dev.Info().Backend == "cpu" {
			return
		}

		dispatches := func(flush bool) int64 {
			require.NoError(t, dev.Sync())
			before := dev.Stats().Dispatches
			r := a.Add(b)
			if flush {
				require.NoError(t, dev.Flush())
			}
			r.Release()
			require.NoError(t, dev.Sync())
			return dev.Stats().Dispatches - before
		}
		assert.EqualValues(t, 1, dispatches(true), "a result released after Flush must still be computed")
		if os.Getenv("WEBTENSOR_FUSION") != "0" {
			assert.EqualValues(t, 0, dispatches(false), "the control: a result released unflushed is no longer skipped")
		}
	})
}
