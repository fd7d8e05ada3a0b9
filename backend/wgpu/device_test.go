//go:build cgo

package wgpu

import (
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// The tests share one device: opening one per test would dominate the run
// time on a software adapter.
var (
	testDeviceOnce sync.Once
	testDevice     *Device
	testDeviceErr  error
)

// openTestDevice returns the shared device on the first adapter. Without a
// WebGPU device the test is skipped, except under CI=true, where the
// WebGPU tests are required to run and a missing device fails them.
func openTestDevice(t testing.TB) *Device {
	t.Helper()
	testDeviceOnce.Do(func() {
		var d hal.Device
		d, testDeviceErr = Open(0)
		if testDeviceErr == nil {
			testDevice = d.(*Device)
		}
	})
	if testDeviceErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true requires a WebGPU device: %v", testDeviceErr)
		}
		t.Skipf("no WebGPU device: %v", testDeviceErr)
	}
	require.NotNil(t, testDevice)
	return testDevice
}
