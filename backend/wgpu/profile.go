//go:build cgo || (js && wasm)

package wgpu

import "github.com/webtensor/webtensor/hal"

var _ hal.Profiler = (*Device)(nil)

// StartProfile starts timing every kernel issued from now on: with
// WebGPU timestamp queries where the device has timestamp-query (each
// kernel then runs in a compute pass of its own), else with host time
// around each kernel submitted alone. The pending fused group is
// recorded first, so that it is not profiled.
func (d *Device) StartProfile() error {
	d.fuse.flush()
	return d.rt.StartProfile()
}

// StopProfile records the pending fused group, waits for the profiled
// kernels and returns their times. The query set is released: a device
// that is not profiling holds no query.
func (d *Device) StopProfile() (hal.KernelProfile, error) {
	d.fuse.flush()
	return d.rt.StopProfile()
}
