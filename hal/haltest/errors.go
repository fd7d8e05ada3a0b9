package haltest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// testErrors checks that broken contracts come back as errors wrapping the
// documented sentinels rather than panics, and leave the device usable.
func testErrors(t *testing.T, dev hal.Device) {
	small, big := alloc(t, dev, 16), alloc(t, dev, 64) // 4 and 16 floats
	invalid := func(t *testing.T, err error) {
		t.Helper()
		assert.ErrorIs(t, err, hal.ErrInvalid)
	}
	t.Run("binary-n-too-large", func(t *testing.T) {
		invalid(t, dev.Binary(hal.Add, small, big, big, 16)) // dst too small
		invalid(t, dev.Binary(hal.Add, big, small, big, 16)) // a too small
		invalid(t, dev.Binary(hal.Mul, big, big, small, 16)) // b too small
		invalid(t, dev.Binary(hal.Add, big, big, big, 17))   // all too small
	})
	t.Run("unary-n-too-large", func(t *testing.T) {
		invalid(t, dev.Unary(hal.ReLU, small, big, 16))
		invalid(t, dev.Unary(hal.Sigmoid, big, small, 16))
	})
	t.Run("negative-n", func(t *testing.T) {
		invalid(t, dev.Binary(hal.Add, big, big, big, -1))
		invalid(t, dev.Unary(hal.ReLU, big, big, -1))
		invalid(t, dev.MatMul(big, small, small, -1, 2, 2))
		invalid(t, dev.MatMul(big, small, small, 2, -1, 2))
		invalid(t, dev.MatMul(big, small, small, 2, 2, -1))
	})
	t.Run("matmul-shape-too-large", func(t *testing.T) {
		a, b := alloc(t, dev, 64), alloc(t, dev, 64)
		invalid(t, dev.MatMul(big, a, b, 4, 5, 4))   // a is 4×5 > 16
		invalid(t, dev.MatMul(big, a, b, 2, 4, 5))   // b is 4×5 > 16
		invalid(t, dev.MatMul(small, a, b, 4, 4, 4)) // dst is 4×4 > 4
		invalid(t, dev.MatMul(big, a, b, 1<<40, 1<<40, 1))
	})
	t.Run("copy-too-large", func(t *testing.T) {
		invalid(t, dev.Write(small, make([]byte, 17)))
		invalid(t, dev.Read(small, make([]byte, 17)))
	})
	t.Run("negative-alloc", func(t *testing.T) {
		_, err := dev.Alloc(-1)
		invalid(t, err)
	})
	t.Run("foreign-buffer", func(t *testing.T) {
		alien := foreignBuffer{size: 64}
		invalid(t, dev.Write(alien, make([]byte, 4)))
		invalid(t, dev.Read(alien, make([]byte, 4)))
		invalid(t, dev.Binary(hal.Add, big, alien, big, 1))
		invalid(t, dev.Unary(hal.ReLU, alien, big, 1))
		invalid(t, dev.MatMul(big, big, alien, 1, 1, 1))
		dev.Free(alien) // must not panic
	})
	t.Run("freed-buffer", func(t *testing.T) {
		b, err := dev.Alloc(64)
		require.NoError(t, err)
		dev.Free(b)
		assert.ErrorIs(t, dev.Write(b, make([]byte, 4)), hal.ErrClosed)
		assert.ErrorIs(t, dev.Read(b, make([]byte, 4)), hal.ErrClosed)
		assert.ErrorIs(t, dev.Unary(hal.ReLU, big, b, 1), hal.ErrClosed)
		assert.ErrorIs(t, dev.Binary(hal.Add, b, big, big, 1), hal.ErrClosed)
	})
	t.Run("unknown-op", func(t *testing.T) {
		assert.Error(t, dev.Binary(hal.BinaryOp(99), big, big, big, 1))
		assert.Error(t, dev.Unary(hal.UnaryOp(99), big, big, 1))
	})
	t.Run("still-usable", func(t *testing.T) {
		x := []float32{1, -2, 3, -4}
		dx, dst := upload(t, dev, x), alloc(t, dev, 16)
		require.NoError(t, dev.Binary(hal.Add, dst, dx, dx, 4))
		assert.Equal(t, []float32{2, -4, 6, -8}, download(t, dev, dst, 4))
		assert.NoError(t, dev.Sync())
	})
}
