//go:build cgo || (js && wasm)

package wgpu

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// The tests run on every adapter (WEBTENSOR_TEST_ADAPTERS and CI=true
// decide which; see internal/testdevice/adapters), and share one device per
// adapter: opening one per test would dominate the run time on a software
// adapter, where every device compiles its pipelines anew.

// testAdapters lists the adapters to test, once.
var testAdapters = sync.OnceValue(func() adapters.Selection {
	return adapters.Select(Adapters())
})

// deviceCache holds one device per adapter, opened on first use by open.
type deviceCache struct {
	open    func(index int) (*Device, error)
	devices sync.Map // adapter index → *cachedDevice
}

type cachedDevice struct {
	once sync.Once
	dev  *Device
	err  error
}

// get returns the device of adapter a, opening it the first time.
func (c *deviceCache) get(t testing.TB, a adapters.Adapter) *Device {
	t.Helper()
	v, _ := c.devices.LoadOrStore(a.Index, new(cachedDevice))
	cd := v.(*cachedDevice)
	cd.once.Do(func() { cd.dev, cd.err = c.open(a.Index) })
	require.NoError(t, cd.err, "open %s (%s)", a.Name(), a.Info.Name)
	return cd.dev
}

// openDevice opens a new device on adapter index.
func openDevice(index int) (*Device, error) {
	h, err := Open(index)
	if err != nil {
		return nil, err
	}
	return h.(*Device), nil
}

// sharedDevices are the devices most tests share, one per adapter.
var sharedDevices = &deviceCache{open: openDevice}

// testDevice returns the shared device on adapter a.
func testDevice(t testing.TB, a adapters.Adapter) *Device {
	t.Helper()
	return sharedDevices.get(t, a)
}

// forEachTestAdapter runs f as a subtest per adapter, named by index and
// graphics API ("webgpu:0-vulkan"), for tests that open devices of their
// own. Without an adapter it is skipped, except under CI=true, where it
// fails.
func forEachTestAdapter(t *testing.T, f func(t *testing.T, a adapters.Adapter)) {
	t.Helper()
	testAdapters().Run(t, f)
}

// forEachTestDevice runs f as a subtest on the shared device of each
// adapter.
func forEachTestDevice(t *testing.T, f func(t *testing.T, d *Device)) {
	t.Helper()
	forEachTestAdapter(t, func(t *testing.T, a adapters.Adapter) { f(t, testDevice(t, a)) })
}

// firstTestAdapter is the first adapter to test, for benchmarks and
// tests that need just one; it skips t without one (fails it under CI).
func firstTestAdapter(t testing.TB) adapters.Adapter {
	t.Helper()
	return testAdapters().First(t)
}

// openTestDevice returns the shared device on the first adapter.
func openTestDevice(t testing.TB) *Device {
	t.Helper()
	return testDevice(t, firstTestAdapter(t))
}
