package haltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// Run checks dev against the hal.Device contract. Subtests are named by
// area, kernel, dtype and case ("kernels/unary.exp/float32/n=1025/stepped",
// "kernels/matmul/float32/129x257x65"), so one can be rerun with -run. The
// caller owns dev and closes it; Run frees everything it allocates. It must
// have dev to itself, since it asserts exact changes in dev.Stats.
func Run(t *testing.T, dev hal.Device) {
	s := &suite{dev: dev, caps: dev.Capabilities(), arith: ArithmeticOf(dev.Info()), big: map[string]operand{}}
	t.Cleanup(func() {
		for _, f := range s.cleanups {
			f()
		}
	})
	t.Run("info", func(t *testing.T) {
		info := dev.Info()
		assert.NotEmpty(t, info.Name)
		assert.NotEmpty(t, info.Backend)
		assert.NotZero(t, info.Limits.MaxBufferSize)
	})
	t.Run("capabilities", func(t *testing.T) { testCapabilities(t, s) })
	t.Run("memory", func(t *testing.T) { testMemory(t, dev) })
	t.Run("peak-live-bytes", func(t *testing.T) { testPeakLiveBytes(t, dev) })
	t.Run("kernels", func(t *testing.T) { testKernels(t, s) })
	t.Run("ordering", func(t *testing.T) { testOrdering(t, s) })
	t.Run("concurrent", func(t *testing.T) { testConcurrent(t, s) })
	t.Run("errors", func(t *testing.T) { testErrors(t, s) })
	t.Run("stats", func(t *testing.T) { testStats(t, s) })
	t.Run("sync", func(t *testing.T) { assert.NoError(t, dev.Sync()) })
}
