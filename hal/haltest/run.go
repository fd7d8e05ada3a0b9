package haltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// Run checks dev against the hal.Device contract. Subtests are named by
// area, kernel and size ("unary/sigmoid/n=1025", "matmul/129x257x65"), so
// one can be rerun with -run. The caller owns dev and closes it; Run frees
// everything it allocates. It must have dev to itself, since it asserts
// exact changes in dev.Stats.
func Run(t *testing.T, dev hal.Device) {
	t.Run("info", func(t *testing.T) {
		info := dev.Info()
		assert.NotEmpty(t, info.Name)
		assert.NotEmpty(t, info.Backend)
		assert.NotZero(t, info.Limits.MaxBufferSize)
	})
	t.Run("memory", func(t *testing.T) { testMemory(t, dev) })
	t.Run("binary", func(t *testing.T) { testBinary(t, dev) })
	t.Run("unary", func(t *testing.T) { testUnary(t, dev) })
	t.Run("matmul", func(t *testing.T) { testMatMul(t, dev) })
	t.Run("errors", func(t *testing.T) { testErrors(t, dev) })
	t.Run("stats", func(t *testing.T) { testStats(t, dev) })
	t.Run("sync", func(t *testing.T) { assert.NoError(t, dev.Sync()) })
}
