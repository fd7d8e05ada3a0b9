package haltest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// testMemory checks the byte-level contract of Alloc, Write, Read and
// Free, which every kernel test relies on.
func testMemory(t *testing.T, dev hal.Device) {
	// Random bytes include NaN payloads and subnormals, which must survive
	// untouched; 13 bytes is not a whole number of float32s.
	for _, size := range []int{0, 4, 13, 4096, 1<<20 + 4} {
		t.Run(fmt.Sprintf("roundtrip/%dB", size), func(t *testing.T) {
			src := randBytes(uint64(size), size)
			b := alloc(t, dev, int64(size))
			assert.Equal(t, int64(size), b.Size())
			require.NoError(t, dev.Write(b, src))
			got := make([]byte, size)
			require.NoError(t, dev.Read(b, got))
			assert.Equal(t, src, got)
		})
	}
	t.Run("read-prefix", func(t *testing.T) {
		src := randBytes(1000, 1000)
		b := alloc(t, dev, int64(len(src)))
		require.NoError(t, dev.Write(b, src))
		for _, n := range []int{0, 1, 6, 100} {
			got := make([]byte, n)
			require.NoError(t, dev.Read(b, got))
			assert.Equal(t, src[:n], got, "first %d bytes", n)
		}
	})
	t.Run("write-prefix", func(t *testing.T) {
		first, second := randBytes(64, 64), randBytes(20, 20)
		b := alloc(t, dev, int64(len(first)))
		require.NoError(t, dev.Write(b, first))
		require.NoError(t, dev.Write(b, second))
		got := make([]byte, len(first))
		require.NoError(t, dev.Read(b, got))
		assert.Equal(t, append(second, first[len(second):]...), got)
	})
	t.Run("write-source-reusable", func(t *testing.T) {
		// The caller may reuse src as soon as Write returns, even if
		// the device copies later.
		src := randBytes(77, 4096)
		want := append([]byte{}, src...)
		b := alloc(t, dev, int64(len(src)))
		require.NoError(t, dev.Write(b, src))
		for i := range src {
			src[i] = 0xAA
		}
		got := make([]byte, len(src))
		require.NoError(t, dev.Read(b, got))
		assert.Equal(t, want, got)
	})
	t.Run("free-twice", func(t *testing.T) {
		start := dev.Stats().LiveBytes
		b, err := dev.Alloc(256)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, dev.Stats().LiveBytes-start, int64(256))
		dev.Free(b)
		dev.Free(b)
		assert.Equal(t, start, dev.Stats().LiveBytes)
	})
	t.Run("pool-steady", func(t *testing.T) { testPoolSteady(t, dev) })
}

// testPoolSteady runs many Alloc/Free cycles of mixed sizes. Every cycle
// allocates one buffer of each size, in a shuffled order, and frees them in
// another, so whatever a pool needs it has seen by the end of cycle one;
// after a warm-up the device's footprint must stop growing.
func testPoolSteady(t *testing.T, dev hal.Device) {
	const (
		cycles = 10_000
		warmup = 100
	)
	sizes := []int64{4, 12, 1000, 4096, 65537}
	rng := newRand(t.Name())
	start := dev.Stats()
	var ceiling int64
	bufs := make([]hal.Buffer, len(sizes))
	for c := range cycles {
		for _, i := range rng.Perm(len(sizes)) {
			b, err := dev.Alloc(sizes[i])
			require.NoError(t, err, "cycle %d", c)
			bufs[i] = b
		}
		for _, i := range rng.Perm(len(sizes)) {
			dev.Free(bufs[i])
		}
		s := dev.Stats()
		require.Equal(t, start.LiveBytes, s.LiveBytes, "LiveBytes after cycle %d", c)
		footprint := s.LiveBytes + s.PooledBytes
		switch {
		case c+1 == warmup:
			ceiling = footprint
		case c+1 > warmup:
			require.LessOrEqual(t, footprint, ceiling, "LiveBytes+PooledBytes grew at cycle %d", c)
		}
	}
	end := dev.Stats()
	assert.Equal(t, int64(cycles*len(sizes)), end.Allocs+end.Reuses-start.Allocs-start.Reuses,
		"every Alloc counts as exactly one of Allocs or Reuses")
}
