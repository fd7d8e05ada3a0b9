//go:build cgo

package wgpu

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/hal"
)

// profileOps runs a known sequence on d: matmul, softmax, matmul, with
// host reads of nothing in between.
func profileOps(t *testing.T, d *Device) {
	t.Helper()
	alloc := func(n int) hal.Buffer {
		b, err := d.Alloc(int64(4 * n))
		require.NoError(t, err)
		t.Cleanup(func() { d.Free(b) })
		require.NoError(t, d.Write(b, make([]byte, 4*n)))
		return b
	}
	const m, k, n = 37, 29, 41
	a := hal.Contiguous(alloc(m*k), hal.Float32, m, k)
	b := hal.Contiguous(alloc(k*n), hal.Float32, k, n)
	c := hal.Contiguous(alloc(m*n), hal.Float32, m, n)
	s := hal.Contiguous(alloc(m*n), hal.Float32, m, n)
	require.NoError(t, d.MatMul(c, a, b, 1, 0))
	require.NoError(t, d.Softmax(s, c, false))
	require.NoError(t, d.MatMul(c, a, b, 1, 0))
}

// TestProfileKernels: a profile lists the kernels of a known sequence in
// issue order, with positive, ordered times: on the device's clock on
// lavapipe (timestamp-query), on the host's on llvmpipe.
func TestProfileKernels(t *testing.T) { forEachTestDevice(t, testProfileKernels) }

func testProfileKernels(t *testing.T, d *Device) {
	writtenBefore, setsBefore := d.rt.TimestampQueries()
	require.NoError(t, d.StartProfile())
	profileOps(t, d)
	p, err := d.StopProfile()
	require.NoError(t, err)
	for _, k := range p.Kernels {
		t.Logf("%s %v %v %v", k.Name, k.Start, k.End-k.Start, k.Grid)
	}
	t.Logf("clock %v: %s", p.Clock, p.Note)
	written, sets := d.rt.TimestampQueries()
	if d.rt.HasTimestamps() {
		assert.Equal(t, hal.ClockDevice, p.Clock)
		assert.Equal(t, int64(2*len(p.Kernels)), written-writtenBefore, "two timestamps per kernel")
		assert.Equal(t, int64(1), sets-setsBefore, "one query set per profile")
	} else {
		assert.Equal(t, hal.ClockHost, p.Clock)
		assert.Zero(t, written-writtenBefore)
	}
	require.Len(t, p.Kernels, 3)
	assert.Equal(t, p.Kernels[0].Name, p.Kernels[2].Name, "the two matmuls run one kernel")
	assert.NotEqual(t, p.Kernels[0].Name, p.Kernels[1].Name)
	assert.Contains(t, p.Kernels[1].Name, "softmax")
	for i, k := range p.Kernels {
		assert.Greater(t, k.End, k.Start, "kernel %d %s takes time", i, k.Name)
		assert.GreaterOrEqual(t, k.Start, time.Duration(0))
		if i > 0 {
			assert.GreaterOrEqual(t, k.Start, p.Kernels[i-1].End, "kernel %d starts after kernel %d ends", i, i-1)
		}
		assert.NotZero(t, k.Grid[0])
	}
	if p.Clock == hal.ClockDevice {
		// Dawn's timestamp_quantization toggle, which the binding turns
		// off, would make every time a multiple of 2^16 ns.
		exact := false
		for _, k := range p.Kernels {
			exact = exact || k.Start%(1<<16) != 0 || k.End%(1<<16) != 0
		}
		assert.True(t, exact, "timestamps are quantized to 65.536 µs")
		assert.NotContains(t, p.Note, "quantizes")
	}
}

// TestProfileOffRecordsNothing: work outside a profile writes no
// timestamp and creates no query set, and stopping twice or starting
// twice is refused.
func TestProfileOffRecordsNothing(t *testing.T) { forEachTestDevice(t, testProfileOff) }

func testProfileOff(t *testing.T, d *Device) {
	written, sets := d.rt.TimestampQueries()
	profileOps(t, d)
	require.NoError(t, d.Sync())
	w, s := d.rt.TimestampQueries()
	assert.Equal(t, written, w)
	assert.Equal(t, sets, s)

	_, err := d.StopProfile()
	assert.True(t, errors.Is(err, hal.ErrInvalid), "stop without start: %v", err)
	require.NoError(t, d.StartProfile())
	assert.True(t, errors.Is(d.StartProfile(), hal.ErrInvalid), "second start")
	_, err = d.StopProfile()
	require.NoError(t, err)
}

// TestProfileManyBatches: more dispatches than one batch holds (its query
// set has 2·DispatchesPerBatch queries, reused by every batch) are all
// timed, in order.
func TestProfileManyBatches(t *testing.T) { forEachTestDevice(t, testProfileManyBatches) }

func testProfileManyBatches(t *testing.T, d *Device) {
	src, err := d.Alloc(4 * 3 * 5)
	require.NoError(t, err)
	dst, err := d.Alloc(4 * 3 * 5)
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(src); d.Free(dst) })
	require.NoError(t, d.Write(src, make([]byte, 4*3*5)))
	x, y := hal.Contiguous(src, hal.Float32, 3, 5), hal.Contiguous(dst, hal.Float32, 3, 5)
	require.NoError(t, d.StartProfile())
	const n = 300 // DispatchesPerBatch + 44
	for range n {
		require.NoError(t, d.Softmax(y, x, false))
	}
	p, err := d.StopProfile()
	require.NoError(t, err)
	require.Len(t, p.Kernels, n)
	assert.NotContains(t, p.Note, "not timed")
	for i, k := range p.Kernels {
		assert.Greater(t, k.End, k.Start, "kernel %d", i)
		if i > 0 {
			assert.GreaterOrEqual(t, k.Start, p.Kernels[i-1].End, "kernel %d after kernel %d", i, i-1)
		}
	}
}
