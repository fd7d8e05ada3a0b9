//go:build cgo

package wgpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// openFreshDevice opens a device of its own, so that a test can cap its
// memory and count its pool exactly without disturbing the shared one.
func openFreshDevice(t *testing.T, a adapters.Adapter) *Device {
	t.Helper()
	h, err := Open(a.Index)
	require.NoError(t, err, "open %s (%s)", a.Name(), a.Info.Name)
	t.Cleanup(func() { assert.NoError(t, h.Close()) })
	return h.(*Device)
}

// TestAllocOOMAtLimit fills a capped device and checks that the next Alloc
// fails with ErrOutOfMemory, naming the size, the device and the pool, and
// that the counters stay exact through the failure.
func TestAllocOOMAtLimit(t *testing.T) { forEachTestAdapter(t, testAllocOOMAtLimit) }

func testAllocOOMAtLimit(t *testing.T, a adapters.Adapter) {
	d := openFreshDevice(t, a)
	d.SetMemoryLimit(4096)
	var held []hal.Buffer
	for range 4 {
		b, err := d.Alloc(513 + rand.Int64N(512)) // size class 1024
		require.NoError(t, err)
		held = append(held, b)
	}
	size := 513 + rand.Int64N(512)
	_, err := d.Alloc(size)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)
	for _, want := range []string{
		fmt.Sprintf("Alloc(%d bytes", size), d.info.Name,
		"4096 bytes live, 0 pooled", "limit 4096", MemoryLimitEnv,
	} {
		assert.Contains(t, err.Error(), want)
	}
	s := d.Stats()
	assert.Equal(t, int64(4096), s.LiveBytes)
	assert.Equal(t, int64(0), s.PooledBytes)
	assert.Equal(t, int64(4), s.Allocs)

	// A freed buffer serves the same size class again under the cap.
	d.Free(held[0])
	b, err := d.Alloc(size)
	require.NoError(t, err)
	held[0] = b
	s = d.Stats()
	assert.Equal(t, int64(4096), s.LiveBytes)
	assert.Equal(t, int64(1), s.Reuses)
	for _, b := range held {
		d.Free(b)
	}
	assert.Equal(t, hal.Stats{PooledBytes: 4096, Allocs: 4, Reuses: 1}, statsMemory(d.Stats()))
}

// statsMemory keeps the memory counters of s, which these tests predict.
func statsMemory(s hal.Stats) hal.Stats {
	return hal.Stats{LiveBytes: s.LiveBytes, PooledBytes: s.PooledBytes, Allocs: s.Allocs, Reuses: s.Reuses}
}

// TestAllocOOMTrimsPoolAndRetries: the pool holds the whole cap in buffers
// of the wrong size class; an Alloc of another class must release them and
// succeed, and the buffer it returns must work.
func TestAllocOOMTrimsPoolAndRetries(t *testing.T) {
	forEachTestAdapter(t, testAllocOOMTrimsPoolAndRetries)
}

func testAllocOOMTrimsPoolAndRetries(t *testing.T, a adapters.Adapter) {
	d := openFreshDevice(t, a)
	d.SetMemoryLimit(4096)
	for range 2 {
		var held []hal.Buffer
		for range 4 {
			b, err := d.Alloc(1000)
			require.NoError(t, err)
			held = append(held, b)
		}
		for _, b := range held {
			d.Free(b)
		}
	}
	require.Equal(t, hal.Stats{PooledBytes: 4096, Allocs: 4, Reuses: 4}, statsMemory(d.Stats()))

	n := 513 + rand.IntN(400) // 2052…3652 bytes: size class 4096
	b, err := d.Alloc(int64(4 * n))
	require.NoError(t, err, "trimming the pool makes room")
	defer d.Free(b)
	assert.Equal(t, hal.Stats{LiveBytes: 4096, Allocs: 5, Reuses: 4}, statsMemory(d.Stats()))

	want := make([]float32, n)
	for i := range want {
		want[i] = rand.Float32()
	}
	require.NoError(t, d.Write(b, floats(want)))
	got := make([]byte, 4*n)
	require.NoError(t, d.Read(b, got))
	assert.Equal(t, floats(want), got)
}

// TestAllocOOMTrimKeepsPendingWork: a pending (fused, not yet recorded)
// kernel reads a buffer that was freed into the pool; trimming releases
// that buffer, so it must run the kernel first or the result is lost.
func TestAllocOOMTrimKeepsPendingWork(t *testing.T) {
	forEachTestAdapter(t, testAllocOOMTrimKeepsPendingWork)
}

func testAllocOOMTrimKeepsPendingWork(t *testing.T, a adapters.Adapter) {
	d := openFreshDevice(t, a)
	n := 333 + rand.IntN(100)
	x, err := d.Alloc(int64(4 * n))
	require.NoError(t, err)
	y, err := d.Alloc(int64(4 * n))
	require.NoError(t, err)
	defer d.Free(y)
	in := make([]float32, n)
	want := make([]float32, n)
	for i := range in {
		in[i] = rand.Float32()*2 - 1
		want[i] = max(in[i], 0)
	}
	require.NoError(t, d.Write(x, floats(in)))
	require.NoError(t, d.Unary(hal.ReLU, hal.Contiguous(y, hal.Float32, n), hal.Contiguous(x, hal.Float32, n), hal.Args{}))
	d.Free(x) // into the pool, still read by the pending ReLU

	// Room for the next buffer only once x's is released: it must trim.
	s := d.Stats()
	bigClass := device.SizeClass(s.PooledBytes + 1) // another size class than x's
	d.SetMemoryLimit(s.LiveBytes + bigClass)
	big, err := d.Alloc(bigClass)
	require.NoError(t, err)
	defer d.Free(big)
	assert.Equal(t, int64(0), d.Stats().PooledBytes, "x was released")

	got := make([]byte, 4*n)
	require.NoError(t, d.Read(y, got))
	assert.Equal(t, floats(want), got)
}

// TestAllocOOMAfterTrimStillFails: live buffers cannot be trimmed; the
// failure says how much trimming released.
func TestAllocOOMAfterTrimStillFails(t *testing.T) {
	forEachTestAdapter(t, testAllocOOMAfterTrimStillFails)
}

func testAllocOOMAfterTrimStillFails(t *testing.T, a adapters.Adapter) {
	d := openFreshDevice(t, a)
	d.SetMemoryLimit(8192)
	live, err := d.Alloc(4096)
	require.NoError(t, err)
	defer d.Free(live)
	pooled, err := d.Alloc(2048)
	require.NoError(t, err)
	d.Free(pooled)
	_, err = d.Alloc(4097)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)
	assert.Contains(t, err.Error(), "4096 bytes live, 0 pooled, 2048 released by trimming the pool, limit 8192")
	assert.Equal(t, hal.Stats{LiveBytes: 4096, Allocs: 2}, statsMemory(d.Stats()))
}

func TestAllocMemoryLimitEnv(t *testing.T) { forEachTestAdapter(t, testAllocMemoryLimitEnv) }

func testAllocMemoryLimitEnv(t *testing.T, a adapters.Adapter) {
	t.Setenv(MemoryLimitEnv, "2048")
	d := openFreshDevice(t, a)
	assert.Equal(t, int64(2048), d.SetMemoryLimit(2048), "the cap the environment set")
	b, err := d.Alloc(2048)
	require.NoError(t, err)
	defer d.Free(b)
	_, err = d.Alloc(1)
	assert.True(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)

	t.Setenv(MemoryLimitEnv, "2 GiB")
	_, err = Open(a.Index)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrInvalid), "%v", err)
	assert.Contains(t, err.Error(), MemoryLimitEnv)
}
