package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWordClass(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{0, 8}, {1, 8}, {8, 8}, {9, 16}, {1000, 1024}, {1025, 2048},
		{8 << 20, 8 << 20}, {8<<20 + 1, 10 << 20}, {10<<20 + 7, 12 << 20},
	} {
		assert.Equal(t, c.want, wordClass(c.n), "words %d", c.n)
	}
}

// TestPoolReuse frees a buffer and expects the next Alloc of its size
// class to get the same memory back, counted as a reuse, with the stats
// moving between LiveBytes and PooledBytes.
func TestPoolReuse(t *testing.T) {
	dev := New()
	defer dev.Close()
	a, err := dev.Alloc(1000 * 4)
	require.NoError(t, err)
	words := a.(*buffer).data
	s := dev.Stats()
	assert.Equal(t, int64(1), s.Allocs)
	assert.Equal(t, int64(512*8), s.LiveBytes)
	assert.Zero(t, s.PooledBytes)

	dev.Free(a)
	dev.Free(a) // twice: no second entry in the pool
	s = dev.Stats()
	assert.Zero(t, s.LiveBytes)
	assert.Equal(t, int64(512*8), s.PooledBytes)

	b, err := dev.Alloc(1023 * 4) // another size in the same class
	require.NoError(t, err)
	assert.Equal(t, int64(1023*4), b.Size())
	assert.Same(t, &words[0], &b.(*buffer).data[0], "the freed memory is reused")
	assert.Len(t, b.(*buffer).data, 512)
	s = dev.Stats()
	assert.Equal(t, int64(1), s.Allocs)
	assert.Equal(t, int64(1), s.Reuses)
	assert.Equal(t, int64(512*8), s.LiveBytes)
	assert.Zero(t, s.PooledBytes)

	c, err := dev.Alloc(8) // another class: a new allocation
	require.NoError(t, err)
	assert.Equal(t, int64(2), dev.Stats().Allocs)
	dev.Free(b)
	dev.Free(c)
	require.NoError(t, dev.Close())
	s = dev.Stats()
	assert.Zero(t, s.LiveBytes)
	assert.Zero(t, s.PooledBytes, "Close empties the pool")
}

// TestPoolBounded fills a small pool past its limit and expects the least
// recently freed buffers to be dropped first.
func TestPoolBounded(t *testing.T) {
	dev := New()
	defer dev.Close()
	dev.pool.limit = 3 * 1024 * 8
	var bufs [5]*buffer
	for i := range bufs {
		b, err := dev.Alloc(1024 * 8)
		require.NoError(t, err)
		bufs[i] = b.(*buffer)
	}
	first := make([]*uint64, len(bufs))
	for i, b := range bufs {
		first[i] = &b.data[0]
		dev.Free(b)
		assert.LessOrEqual(t, dev.Stats().PooledBytes, dev.pool.limit)
	}
	assert.Equal(t, dev.pool.limit, dev.Stats().PooledBytes)
	// The three newest remain, newest handed out first.
	for _, want := range []int{4, 3, 2} {
		b, err := dev.Alloc(1024 * 8)
		require.NoError(t, err)
		assert.Same(t, first[want], &b.(*buffer).data[0], "buffer %d", want)
	}
	assert.Zero(t, dev.Stats().PooledBytes)
	_, err := dev.Alloc(1024 * 8)
	require.NoError(t, err)
	s := dev.Stats()
	assert.Equal(t, int64(6), s.Allocs, "the two oldest were released")
	assert.Equal(t, int64(3), s.Reuses)

	// A buffer larger than the whole limit is not kept at all.
	big, err := dev.Alloc(4 * 1024 * 8)
	require.NoError(t, err)
	dev.Free(big)
	assert.LessOrEqual(t, dev.Stats().PooledBytes, dev.pool.limit)
}
