//go:build cgo

package wgpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

func TestShaderRejected(t *testing.T) { forEachTestDevice(t, testShaderRejected) }

func testShaderRejected(t *testing.T, d *Device) {
	_, err := d.rt.Kernel("broken", 1, 1, func() (string, error) {
		return "@compute @workgroup_size(1) fn main() { let x: f32 = undefined_name; }", nil
	})
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrShaderRejected), "%v", err)
	// The compiler's own diagnosis travels with the error.
	assert.Contains(t, err.Error(), "undefined_name")
	assert.Contains(t, err.Error(), "kernel broken")

	// The device stays usable: a rejected shader is not a device failure.
	assert.NoError(t, d.Sync())
}

// childEnv marks a test binary started by a test below to probe library
// loading, which happens once per process.
const childEnv = "WEBTENSOR_TEST_LOAD_CHILD"

func TestLibraryLoadingChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestLibraryNotFound and TestLibraryMissingSymbol")
	}
	_, err := Adapters()
	t.Logf("is-library-not-found=%v", errors.Is(err, hal.ErrLibraryNotFound))
	t.Logf("error=%v", err)
}

// loadInChild runs Adapters in a fresh process with WEBTENSOR_WEBGPU_LIB set
// to lib and returns what it reported.
func loadInChild(t *testing.T, lib string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLibraryLoadingChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", LibraryEnv+"="+lib)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

func TestLibraryNotFound(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libwebgpu_dawn.so")
	out := loadInChild(t, missing)
	assert.Contains(t, out, "is-library-not-found=true")
	assert.Contains(t, out, missing+": not found")
	assert.Contains(t, out, "make deps", "the error says how to install the library")
}

func TestLibraryMissingSymbol(t *testing.T) {
	libs, _ := filepath.Glob("/lib/*/libm.so.6")
	if len(libs) == 0 {
		libs, _ = filepath.Glob("/usr/lib*/libm.so.6")
	}
	if len(libs) == 0 {
		t.Skip("no libm.so.6 to stand in for a library without WebGPU symbols")
	}
	out := loadInChild(t, libs[0])
	assert.Contains(t, out, "is-library-not-found=true")
	assert.Contains(t, out, "missing symbol wgpuCreateInstance", "the first missing symbol is named")
}

// TestBatching checks that kernels are recorded, not run one by one: 1,000
// dependent kernels take a handful of submissions and no read-back, and the
// one read-back at the end sees every one of them.
func TestBatching(t *testing.T) { forEachTestDevice(t, testBatching) }

func testBatching(t *testing.T, d *Device) {
	defer unfused(d)() // one dispatch per kernel; fusion_test.go counts fused ones
	const n, steps = 300, 1000
	acc, err := d.Alloc(n * 4)
	require.NoError(t, err)
	defer d.Free(acc)
	one, err := d.Alloc(n * 4)
	require.NoError(t, err)
	defer d.Free(one)
	require.NoError(t, d.Write(acc, floats(make([]float32, n))))
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	require.NoError(t, d.Write(one, floats(ones)))

	av, ov := hal.Contiguous(acc, hal.Float32, n), hal.Contiguous(one, hal.Float32, n)
	before := d.Stats()
	for range steps {
		require.NoError(t, d.Binary(hal.Add, av, av, ov))
	}
	mid := d.Stats()
	got := make([]byte, n*4)
	require.NoError(t, d.Read(acc, got))
	after := d.Stats()

	assert.Equal(t, int64(0), mid.HostReads-before.HostReads)
	assert.Equal(t, int64(1), after.HostReads-before.HostReads)
	assert.Equal(t, int64(steps), after.Dispatches-before.Dispatches)
	assert.LessOrEqual(t, after.Submits-before.Submits, int64(steps/device.DispatchesPerBatch+1))
	for i := range n {
		require.Equal(t, float32(steps), math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])), "element %d", i)
	}
}

func TestClosedDevice(t *testing.T) { forEachTestAdapter(t, testClosedDevice) }

func testClosedDevice(t *testing.T, a adapters.Adapter) {
	h, err := Open(a.Index)
	require.NoError(t, err)
	b, err := h.Alloc(16)
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.NoError(t, h.Close(), "closing twice is a no-op")
	for _, err := range []error{
		h.Write(b, make([]byte, 16)),
		h.Read(b, make([]byte, 16)),
		h.Unary(hal.ReLU, hal.Contiguous(b, hal.Float32, 4), hal.Contiguous(b, hal.Float32, 4), hal.Args{}),
		h.Sync(),
	} {
		assert.True(t, errors.Is(err, hal.ErrClosed), "%v", err)
	}
	_, err = h.Alloc(16)
	assert.True(t, errors.Is(err, hal.ErrClosed), "%v", err)
	h.Free(b) // no-op, no crash
}

// TestFailureTooLarge: a buffer beyond maxBufferSize can never fit, so it
// is ErrTooLarge, not ErrOutOfMemory (which the placement policy may
// answer by running on the CPU), and nothing is allocated or trimmed.
func TestFailureTooLarge(t *testing.T) { forEachTestDevice(t, testFailureTooLarge) }

func testFailureTooLarge(t *testing.T, d *Device) {
	before := d.Stats()
	size := int64(d.limits.MaxBufferSize) + 1
	_, err := d.Alloc(size)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrTooLarge), "%v", err)
	assert.False(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)
	for _, want := range []string{"maxBufferSize", strconv.FormatInt(size, 10), d.info.Name} {
		assert.Contains(t, err.Error(), want)
	}
	after := d.Stats()
	assert.Equal(t, before.Allocs, after.Allocs)
	assert.Equal(t, before.PooledBytes, after.PooledBytes)
}

func floats(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// TestFailureNoAdapter: an adapter index past the last one is ErrNoAdapter,
// and the message says how many adapters there are.
func TestFailureNoAdapter(t *testing.T) {
	firstTestAdapter(t) // skips, or fails under CI, without a library
	infos, err := Adapters()
	require.NoError(t, err)
	_, err = Open(len(infos))
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrNoAdapter), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("adapter %d does not exist (%d found)", len(infos), len(infos)))
	_, err = Open(-1)
	assert.True(t, errors.Is(err, hal.ErrNoAdapter), "%v", err)
}

// TestFailureDeviceLost: after a loss, Alloc fails with ErrDeviceLost,
// naming the op and the device, rather than handing out a dead buffer.
// lost_test.go covers every other call and recovery.
func TestFailureDeviceLost(t *testing.T) { forEachTestAdapter(t, testFailureDeviceLost) }

func testFailureDeviceLost(t *testing.T, a adapters.Adapter) {
	d := openFreshDevice(t, a)
	if err := d.ForceLoss("failure catalogue"); errors.Is(err, hal.ErrUnsupported) {
		t.Skip(err)
	} else {
		require.NoError(t, err)
	}
	_, err := d.Alloc(64)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrDeviceLost), "%v", err)
	assert.Contains(t, err.Error(), "Alloc")
	assert.Contains(t, err.Error(), d.info.Name)
}
