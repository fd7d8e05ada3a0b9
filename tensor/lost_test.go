package tensor

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// forEachPrivateWebGPU runs f as a subtest per WebGPU adapter (see
// forEachWebGPU) on a device of its own, not the process-wide "webgpu:N",
// so that losing it cannot disturb other tests.
func forEachPrivateWebGPU(t *testing.T, f func(t *testing.T, dev *Device)) {
	webgpuAdapters().Run(t, func(t *testing.T, a adapters.Adapter) {
		b, ok := hal.Lookup(webgpuBackend)
		require.True(t, ok, "the WebGPU backend is registered")
		hd, err := b.Open(a.Index)
		require.NoError(t, err, "open %s (%s)", a.Name(), a.Info.Name)
		f(t, newDevice(a.Device(), hd))
	})
}

func randFloats(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, seed))
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*8 - 4
	}
	return v
}

// Tensors of the lost device fail every use with a *Error naming the op,
// shape, dtype and device; new tensors on the same *Device work.
func TestLostTensorsFailNewTensorsWork(t *testing.T) {
	forEachPrivateWebGPU(t, testLostTensorsFailNewTensorsWork)
}

func testLostTensorsFailNewTensorsWork(t *testing.T, dev *Device) {
	a := randFloats(1, 37*5)
	x := FromFloat32(dev, a, 37, 5)
	got, err := x.Add(x).Float32s()
	require.NoError(t, err)
	require.Equal(t, a[3]*2, got[3])
	require.False(t, dev.Lost())

	require.NoError(t, dev.ForceLoss("unit test"))
	b := randFloats(2, 37*5)
	y := FromFloat32(dev, b, 37, 5) // recovers, then allocates anew
	prod, err := y.Mul(y).Float32s()
	require.NoError(t, err)
	for i := range b {
		require.Equal(t, b[i]*b[i], prod[i], "element %d", i)
	}
	require.True(t, dev.Lost())
	require.Equal(t, 1, dev.Generation())

	for _, c := range []struct {
		op  string
		err error
	}{
		{"Float32s", func() error { _, err := x.Float32s(); return err }()},
		{"Err", x.Err()},
		{"Add", x.Add(y).Err()},
		{"Sum", x.Sum(nil, false).Err()},
	} {
		require.ErrorIs(t, c.err, hal.ErrDeviceLost, c.op)
		var te *Error
		require.True(t, errors.As(c.err, &te), c.op)
		require.Contains(t, c.err.Error(), "[37 5]", c.op)
		require.Contains(t, c.err.Error(), "float32", c.op)
		require.Contains(t, c.err.Error(), dev.Name(), c.op)
		require.Contains(t, c.err.Error(), "unit test", c.op)
	}
	x.Release() // releasing a lost tensor is fine
	y.Release()
}

// The hook runs once per loss, even when many goroutines hit the lost
// device at once, and Sync reports the loss once.
func TestLostHookFiresOnce(t *testing.T) { forEachPrivateWebGPU(t, testLostHookFiresOnce) }

func testLostHookFiresOnce(t *testing.T, dev *Device) {
	var fired atomic.Int32
	var event LostEvent
	remove := OnDeviceLost(func(e LostEvent) {
		if e.Device == dev {
			fired.Add(1)
			event = e
		}
	})
	defer remove()
	warm := FromFloat32(dev, randFloats(3, 10), 10)
	require.NoError(t, dev.ForceLoss("hook test"))
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			v := randFloats(uint64(10+g), 33)
			r, err := FromFloat32(dev, v, 33).Neg().Float32s()
			if err == nil { // a goroutine may race the recovery and fail
				for i := range v {
					assert.Equal(t, -v[i], r[i])
				}
			} else {
				assert.ErrorIs(t, err, hal.ErrDeviceLost)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), fired.Load())
	require.Equal(t, 1, event.Generation)
	require.ErrorIs(t, event.Err, hal.ErrDeviceLost)
	require.Equal(t, dev.LostErr(), event.Err)
	require.ErrorIs(t, dev.Sync(), hal.ErrDeviceLost)
	require.NoError(t, dev.Sync())
	require.ErrorIs(t, warm.Err(), hal.ErrDeviceLost)

	// A second loss is a second event.
	require.NoError(t, dev.ForceLoss("again"))
	require.True(t, dev.Lost())
	require.Equal(t, int32(2), fired.Load())
	require.Equal(t, 2, dev.Generation())
}

// Stats after a loss are the new backend device's: the lost tensors'
// memory is not counted, and releasing them does not disturb the count.
func TestLostStats(t *testing.T) { forEachPrivateWebGPU(t, testLostStats) }

func testLostStats(t *testing.T, dev *Device) {
	old := FromFloat32(dev, randFloats(4, 1000), 1000)
	require.Positive(t, dev.Stats().LiveBytes)
	require.NoError(t, dev.ForceLoss("stats test"))
	require.True(t, dev.Lost())
	require.Zero(t, dev.Stats().LiveBytes)
	n := FromFloat32(dev, randFloats(5, 999), 999)
	live := dev.Stats().LiveBytes
	require.GreaterOrEqual(t, live, int64(4*999))
	old.Release()
	require.Equal(t, live, dev.Stats().LiveBytes)
	n.Release()
	require.Zero(t, dev.Stats().LiveBytes)
}

// The CPU cannot be lost on purpose.
func TestLostForceLossUnsupportedOnCPU(t *testing.T) {
	err := openCPU(t).ForceLoss("x")
	require.ErrorIs(t, err, hal.ErrUnsupported)
	require.False(t, openCPU(t).Lost())
}
