package tensor

import (
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// OpenWrappedForTest opens adapter name ("webgpu:0") again as a private
// Device whose backend device is wrap(the new backend device), so that a
// test can make the backend fail on purpose; the backend device closes
// with the test.
func OpenWrappedForTest(t testing.TB, name string, wrap func(hal.Device) hal.Device) *Device {
	t.Helper()
	backend, index, err := parseDeviceName(name)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := hal.Lookup(backend)
	if !ok {
		t.Fatalf("no backend %q", backend)
	}
	hd, err := b.Open(index)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hd.Close() })
	return newDevice(name+"-wrapped", wrap(hd))
}
