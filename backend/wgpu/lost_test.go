//go:build cgo

package wgpu

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// The tests below lose a device of their own (openFreshDevice): losing the
// shared test device would break every later test.

func vec(b hal.Buffer, n int) hal.View {
	return hal.View{Buf: b, DType: hal.Float32, Shape: []int{n}, Strides: []int{1}}
}

// requireLost checks that err reports the loss of d: the sentinel, the
// operation and the adapter's name.
func requireLost(t *testing.T, d *Device, op string, err error) {
	t.Helper()
	require.Error(t, err, op)
	require.True(t, errors.Is(err, hal.ErrDeviceLost), "%s: %v", op, err)
	require.Contains(t, err.Error(), op)
	require.Contains(t, err.Error(), d.info.Name)
}

// TestLostForceLossFailsEveryCall loses a device that has work recorded
// and not yet submitted, and checks that every entry point then fails
// promptly with hal.ErrDeviceLost instead of hanging or crashing.
func TestLostForceLossFailsEveryCall(t *testing.T) {
	forEachTestAdapter(t, testLostForceLossFailsEveryCall)
}

func testLostForceLossFailsEveryCall(t *testing.T, adapter adapters.Adapter) {
	d := openFreshDevice(t, adapter)
	const n = 1031 // odd: not a multiple of any workgroup size
	rng := rand.New(rand.NewPCG(7, 7))
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = rng.Float32()*4-2, rng.Float32()*4-2
	}
	ba, err := d.Alloc(4 * n)
	require.NoError(t, err)
	bb, err := d.Alloc(4 * n)
	require.NoError(t, err)
	out, err := d.Alloc(4 * n)
	require.NoError(t, err)
	require.NoError(t, d.Write(ba, floats(a)))
	require.NoError(t, d.Write(bb, floats(b)))

	// Alive: the device computes, and reports no loss.
	require.NoError(t, d.Binary(hal.Add, vec(out, n), vec(ba, n), vec(bb, n)))
	got := make([]byte, 4*n)
	require.NoError(t, d.Read(out, got))
	for i := range a {
		require.Equal(t, a[i]+b[i], math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])), "element %d", i)
	}
	require.False(t, d.Lost())
	require.NoError(t, d.LostErr())

	// Record work that is still pending when the device goes.
	require.NoError(t, d.Binary(hal.Mul, vec(out, n), vec(ba, n), vec(bb, n)))
	require.NoError(t, d.ForceLoss("test: simulated driver reset"))
	require.True(t, d.Lost())
	lerr := d.LostErr()
	requireLost(t, d, "device", lerr)
	require.Contains(t, lerr.Error(), "simulated driver reset")

	start := time.Now()
	requireLost(t, d, "Read", d.Read(out, got))
	requireLost(t, d, "Sync", d.Sync())
	requireLost(t, d, "Write", d.Write(ba, floats(a)))
	_, err = d.Alloc(64)
	requireLost(t, d, "Alloc", err)
	requireLost(t, d, "binary.add", d.Binary(hal.Add, vec(out, n), vec(ba, n), vec(bb, n)))
	requireLost(t, d, "fill", d.Fill(vec(out, n), 1, 0))
	requireLost(t, d, "reduce", d.Reduce(hal.Sum, hal.View{Buf: out, DType: hal.Float32, Shape: []int{}, Strides: []int{}}, vec(ba, n), 1))
	require.Less(t, time.Since(start), 10*time.Second, "calls on a lost device must not wait")

	// Freeing buffers of a lost device is safe, and the counters stay
	// consistent: freed buffers leave the live count.
	live := d.Stats().LiveBytes
	d.Free(ba)
	d.Free(bb)
	require.Less(t, d.Stats().LiveBytes, live)
	d.Free(out)
	require.Zero(t, d.Stats().LiveBytes)
	// A second ForceLoss is harmless: the device stays lost.
	require.NoError(t, d.ForceLoss("again"))
	require.Contains(t, d.LostErr().Error(), "simulated driver reset", "the first loss is kept")
}

// TestLostNewDeviceOnSameAdapter checks what recovery relies on: after a
// loss the same adapter opens a new, working device, and the lost one does
// not disturb it.
func TestLostNewDeviceOnSameAdapter(t *testing.T) {
	forEachTestAdapter(t, testLostNewDeviceOnSameAdapter)
}

func testLostNewDeviceOnSameAdapter(t *testing.T, a adapters.Adapter) {
	lost := openFreshDevice(t, a)
	require.NoError(t, lost.ForceLoss("test"))
	d := openFreshDevice(t, a)
	require.False(t, d.Lost())
	const n = 257
	buf, err := d.Alloc(4 * n)
	require.NoError(t, err)
	require.NoError(t, d.Fill(vec(buf, n), 3, 0.5))
	got := make([]byte, 4*n)
	require.NoError(t, d.Read(buf, got))
	for i := range n {
		require.Equal(t, float32(3+0.5*float64(i)), math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])))
	}
	requireLost(t, lost, "Sync", lost.Sync())
}

// TestLostAfterClose: ForceLoss on a closed device is ErrClosed, not a
// call into a destroyed device.
func TestLostAfterClose(t *testing.T) { forEachTestAdapter(t, testLostAfterClose) }

func testLostAfterClose(t *testing.T, a adapters.Adapter) {
	hd, err := Open(a.Index)
	require.NoError(t, err)
	d := hd.(*Device)
	require.NoError(t, d.Close())
	require.ErrorIs(t, d.ForceLoss("x"), hal.ErrClosed)
}
