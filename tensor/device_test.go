package tensor

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

func TestOpen(t *testing.T) {
	dev := openCPU(t)
	assert.Equal(t, "cpu", dev.Name())
	assert.Equal(t, dev.hal.Info(), dev.Info())
	assert.Contains(t, dev.String(), "cpu")

	again, err := Open("cpu:0")
	require.NoError(t, err)
	assert.Same(t, dev, again, "a device is opened once per process")

	second := openSecondCPU(t)
	assert.NotSame(t, dev, second)
	byIndex, err := Open(secondCPU + ":0")
	require.NoError(t, err)
	assert.Same(t, second, byIndex)
}

func TestOpenErrors(t *testing.T) {
	for name, want := range map[string]string{
		"":          `tensor: Open: invalid device name ""`,
		":0":        `tensor: Open: invalid device name ":0"`,
		"webgpu:x":  `tensor: Open: invalid adapter index "x" in device name "webgpu:x"`,
		"webgpu:-1": `tensor: Open: invalid adapter index "-1"`,
		"nope":      `tensor: Open: unknown device "nope" (registered backends: `,
	} {
		_, err := Open(name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want)
	}

	_, err := Open(brokenGPU)
	assert.ErrorIs(t, err, hal.ErrLibraryNotFound, "backend errors must stay visible to errors.Is")
	assert.Contains(t, err.Error(), `tensor: Open: "test-broken:0": libtest.so`)

	// The real WebGPU backend may or may not have adapters here; adapter
	// 999 exists nowhere.
	_, err = Open("webgpu:999")
	assert.Error(t, err)
}

func TestAdapters(t *testing.T) {
	names := map[string]bool{}
	for _, a := range Adapters() {
		names[a.Name] = true
	}
	assert.True(t, names["cpu"], "the CPU backend is always listed")
	assert.True(t, names[secondCPU+":0"])

	errs := BackendErrors()
	assert.ErrorIs(t, errs[brokenGPU], hal.ErrLibraryNotFound)
	assert.NotContains(t, errs, "cpu")
}

func TestToCopiesBetweenDevices(t *testing.T) {
	cpu, second := openCPU(t), openSecondCPU(t)
	data := randomFloat32s(newRand(t), 35)
	x := FromFloat32(cpu, data, 5, 7)
	y := x.To(second)
	same := x.To(cpu)
	x.Release() // copies are independent of their source
	defer releaseAll(y, same)

	assert.Same(t, second, y.Device())
	assert.Equal(t, []int{5, 7}, y.Shape())
	assert.Equal(t, data, read(t, y))
	assert.Same(t, cpu, same.Device())
	assert.Equal(t, data, read(t, same))
}

func TestDeviceFailuresAreRecorded(t *testing.T) {
	dev, fd := newFaultyDevice()
	x := FromFloat32(dev, []float32{1, 2, 3})
	defer x.Release()
	require.NoError(t, dev.Sync())

	fd.failAlloc.Store(true)
	var sum, activated *Tensor
	require.NotPanics(t, func() {
		sum = Add(x, x)
		fd.failAlloc.Store(false)
		activated = sum.ReLU() // inherits the failure without running
	})
	defer releaseAll(sum, activated)

	_, err := activated.Float32s()
	assert.ErrorIs(t, err, hal.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "tensor: Add: on faulty: allocating float32 [3]")
	assert.Contains(t, activated.String(), "failed")
	assert.NoError(t, dev.Sync(), "the read reported the failure; Sync does not again")

	// Unread, a failure is Sync's to report, once.
	fd.failKernel.Store(true)
	product := Mul(x, x)
	defer product.Release()
	fd.failKernel.Store(false)
	assert.ErrorIs(t, dev.Sync(), hal.ErrDeviceLost)
	assert.NoError(t, dev.Sync())
	_, err = product.Float32s()
	assert.ErrorIs(t, err, hal.ErrDeviceLost, "the failed tensor keeps its error")

	// Healthy tensors on the device still read back.
	assert.Equal(t, []float32{1, 2, 3}, read(t, x))

	// A failed tensor copied elsewhere stays failed.
	moved := activated.To(openCPU(t))
	_, err = moved.Float32s()
	assert.ErrorIs(t, err, hal.ErrOutOfMemory)
}

func TestLeakedTensorsAreFreed(t *testing.T) {
	dev, fd := newFaultyDevice()
	Zeros(dev, 16) // dropped without Release
	deadline := time.Now().Add(5 * time.Second)
	for fd.frees.Load() == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, int64(1), fd.frees.Load())
}

func TestErrorUnwraps(t *testing.T) {
	err := &Error{Op: "Sync", Msg: "on cpu", Err: hal.ErrDeviceLost}
	assert.True(t, errors.Is(err, hal.ErrDeviceLost))
	assert.Equal(t, "tensor: Sync: on cpu: device lost", err.Error())
}

func TestDeviceString(t *testing.T) {
	gpu := &Device{name: "webgpu:0", info: hal.Info{Name: "NVIDIA H100", Backend: "vulkan", Type: hal.AdapterDiscrete}}
	assert.Equal(t, "webgpu:0 (NVIDIA H100, vulkan, discrete)", gpu.String())
	cpu := &Device{name: "cpu", info: hal.Info{Name: "Go CPU", Backend: "cpu", Type: hal.AdapterCPU}}
	assert.Equal(t, "cpu (Go CPU)", cpu.String())
}

// Devices are shared by the whole process; ops from many goroutines must
// be safe (run with -race).
func TestConcurrentUse(t *testing.T) {
	dev := openCPU(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			x := FromFloat32(dev, []float32{float32(g), -1, 2})
			y := x.Add(x).ReLU()
			defer releaseAll(x, y)
			got, err := y.Float32s()
			assert.NoError(t, err)
			assert.Equal(t, []float32{float32(2 * g), 0, 4}, got)
		})
	}
	wg.Wait()
	assert.NoError(t, dev.Sync())
}
