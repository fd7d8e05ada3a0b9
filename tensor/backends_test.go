package tensor

import (
	"fmt"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// Test backends. "cpu" always opens the same process-wide device, so tests
// that need a second, distinct device use "test-second-cpu", which opens
// the CPU backend again under another name.
const (
	secondCPU = "test-second-cpu"
	brokenGPU = "test-broken"
)

var errBrokenLibrary = fmt.Errorf("libtest.so: %w", hal.ErrLibraryNotFound)

func init() {
	cpu, ok := hal.Lookup(cpuBackend)
	if !ok {
		panic("tensor tests: cpu backend not registered")
	}
	hal.Register(hal.Backend{Name: secondCPU, Adapters: cpu.Adapters, Open: cpu.Open})
	hal.Register(hal.Backend{
		Name:     brokenGPU,
		Adapters: func() ([]hal.Info, error) { return nil, errBrokenLibrary },
		Open:     func(int) (hal.Device, error) { return nil, errBrokenLibrary },
	})
}

// faultyDevice wraps a working device and fails on demand, to check that
// device failures are recorded rather than panicked.
type faultyDevice struct {
	hal.Device
	failAlloc  atomic.Bool
	failKernel atomic.Bool
	frees      atomic.Int64
}

func (d *faultyDevice) Alloc(size int64) (hal.Buffer, error) {
	if d.failAlloc.Load() {
		return nil, fmt.Errorf("faulty: %d bytes: %w", size, hal.ErrOutOfMemory)
	}
	return d.Device.Alloc(size)
}

func (d *faultyDevice) Free(b hal.Buffer) {
	d.frees.Add(1)
	d.Device.Free(b)
}

func (d *faultyDevice) Binary(op hal.BinaryOp, dst, a, b hal.View) error {
	if d.failKernel.Load() {
		return fmt.Errorf("faulty: %v: %w", op, hal.ErrDeviceLost)
	}
	return d.Device.Binary(op, dst, a, b)
}

// newFaultyDevice returns a fresh, uncached Device over the CPU backend,
// so that its sticky error and counters belong to one test only.
func newFaultyDevice() (*Device, *faultyDevice) {
	cpu, _ := hal.Lookup(cpuBackend)
	hd, err := cpu.Open(0)
	if err != nil {
		panic(err)
	}
	fd := &faultyDevice{Device: hd}
	return newDevice("faulty", fd), fd
}
