package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// The failure catalogue: one test per failure mode, each asserting the
// sentinel (errors.Is) and that the message names the op, the shapes and
// dtypes, and the device. The backend's own side is in
// backend/wgpu/failures_test.go and memory_test.go; shader rejection is
// TestShaderRejected there (no tensor op can reach an invalid shader),
// device loss lost_test.go there and tensor's lost tests. That each
// failure is reported once and the device then works is isolation_test.go,
// here and in backend/wgpu.

// oomRandFloats returns n values in [-1, 1).
func oomRandFloats(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rand.Float32()*2 - 1
	}
	return v
}

// oomOperands puts two random vectors of n floats on gpu and then caps
// its memory at what it holds, so that the next new buffer fails (the
// pool is trimmed first, which frees nothing live).
func oomOperands(t *testing.T, gpu *tensor.Device, n int) (a, b *tensor.Tensor, av, bv []float32) {
	testdevice.QuietGC(t, gpu)
	prev := tensor.SetPlacement(tensor.Explicit)
	av, bv = oomRandFloats(n), oomRandFloats(n)
	a, b = tensor.FromFloat32(gpu, av, n), tensor.FromFloat32(gpu, bv, n)
	tensor.SetPlacement(prev)
	t.Cleanup(func() { a.Release(); b.Release() })
	require.NoError(t, gpu.Sync())
	tensor.SetMemoryLimitForTest(t, gpu, gpu.Stats().LiveBytes)
	return a, b, av, bv
}

// TestFailureOOMFallsBackToCPU: under Auto and MinimizeTransfers an op
// whose result does not fit on the GPU runs on the CPU, with the right
// values, counted in PlacementStats, and the GPU does not report the
// retracted failure.
func TestFailureOOMFallsBackToCPU(t *testing.T) {
	testdevice.ForEachWebGPU(t, testFailureOOMFallsBackToCPU)
}

func testFailureOOMFallsBackToCPU(t *testing.T, gpu *tensor.Device) {
	cpu := testdevice.CPU(t)
	for _, policy := range []tensor.Placement{tensor.Auto, tensor.MinimizeTransfers} {
		t.Run(policy.String(), func(t *testing.T) {
			n := 1000 + rand.IntN(3000)
			a, b, av, bv := oomOperands(t, gpu, n)
			live := gpu.Stats().LiveBytes
			defer tensor.SetPlacement(tensor.SetPlacement(policy))
			tensor.ResetPlacementStats()

			sum := tensor.Add(a, b)
			defer sum.Release()
			require.NoError(t, sum.Err())
			assert.Equal(t, cpu, sum.Device())
			got, err := sum.Float32s()
			require.NoError(t, err)
			for i := range got {
				require.Equal(t, av[i]+bv[i], got[i], "element %d", i)
			}

			dot := tensor.MatMul(a.Reshape(1, n), b.Reshape(n, 1)) // a reduction's worth of work
			defer dot.Release()
			assert.Equal(t, cpu, dot.Device())
			var want float64
			for i := range av {
				want += float64(av[i]) * float64(bv[i])
			}
			d, err := dot.Float32s()
			require.NoError(t, err)
			assert.InDelta(t, want, float64(d[0]), 1e-4*math.Sqrt(float64(n)))

			st := tensor.PlacementStats()
			assert.Equal(t, int64(2), st.OOMFallbacks)
			assert.Equal(t, int64(4), st.Moves, "two operands copied down per op")
			assert.Equal(t, int64(2), st.Ops[cpu.Name()])
			assert.NoError(t, gpu.Sync(), "the fallback retracts the GPU's failure")
			assert.Equal(t, live, gpu.Stats().LiveBytes, "nothing left behind on the GPU")
		})
	}
}

// TestFailureOOMTyped: under Explicit and ForceGPU the op fails with a
// *tensor.Error wrapping hal.ErrOutOfMemory that names the op, the result's
// dtype and shape, the device and the pool's state.
func TestFailureOOMTyped(t *testing.T) { testdevice.ForEachWebGPU(t, testFailureOOMTyped) }

func testFailureOOMTyped(t *testing.T, gpu *tensor.Device) {
	for _, policy := range []tensor.Placement{tensor.Explicit, tensor.ForceGPU} {
		t.Run(policy.String(), func(t *testing.T) {
			n := 1000 + rand.IntN(3000)
			a, b, _, _ := oomOperands(t, gpu, n)
			defer tensor.SetPlacement(tensor.SetPlacement(policy))
			defer tensor.ForgetFailuresForTest(gpu)
			tensor.ResetPlacementStats()

			sum := tensor.Mul(a, b)
			defer sum.Release()
			err := sum.Err()
			require.Error(t, err)
			assert.True(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)
			var te *tensor.Error
			require.True(t, errors.As(err, &te), "%T", err)
			assert.Equal(t, "Mul", te.Op)
			for _, want := range []string{"Mul", "float32", fmt.Sprintf("[%d]", n), gpu.Name(), "bytes live", "limit"} {
				assert.Contains(t, err.Error(), want)
			}
			_, readErr := sum.Float32s()
			assert.True(t, errors.Is(readErr, hal.ErrOutOfMemory), "%v", readErr)
			assert.NoError(t, gpu.Sync(), "the read reported the failure; Sync does not again")
			assert.Equal(t, int64(0), tensor.PlacementStats().OOMFallbacks)
		})
	}
}

// TestFailureTooLarge: a tensor beyond the device's maxBufferSize is
// ErrTooLarge, not out of memory, so placement does not try the CPU.
func TestFailureTooLarge(t *testing.T) { testdevice.ForEachWebGPU(t, testFailureTooLarge) }

func testFailureTooLarge(t *testing.T, gpu *tensor.Device) {
	defer tensor.SetPlacement(tensor.SetPlacement(tensor.Explicit))
	defer tensor.ForgetFailuresForTest(gpu)
	n := int(gpu.Info().Limits.MaxBufferSize/4) + 1
	big := tensor.Zeros(gpu, n)
	defer big.Release()
	err := big.Err()
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrTooLarge), "%v", err)
	assert.False(t, errors.Is(err, hal.ErrOutOfMemory), "%v", err)
	for _, want := range []string{"Zeros", "float32", fmt.Sprintf("[%d]", n), gpu.Name(), "maxBufferSize"} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestFailureUnsupportedDType: WebGPU has no float64; asking for it panics
// with an *Error wrapping ErrUnsupported naming op, dtype and device.
func TestFailureUnsupportedDType(t *testing.T) {
	testdevice.ForEachWebGPU(t, testFailureUnsupportedDType)
}

func testFailureUnsupportedDType(t *testing.T, gpu *tensor.Device) {
	defer tensor.SetPlacement(tensor.SetPlacement(tensor.Explicit))
	err := tensor.Catch(func() { tensor.Full(gpu, tensor.Float64, 1, 3, 5) })
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrUnsupported), "%v", err)
	for _, want := range []string{"Full", "float64", gpu.Name()} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestFailureNoAdapter: an adapter index past the last is ErrNoAdapter,
// naming the device asked for.
func TestFailureNoAdapter(t *testing.T) {
	testdevice.WebGPU(t) // skips, or fails under CI, without WebGPU
	_, err := tensor.Open("webgpu:99")
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrNoAdapter), "%v", err)
	assert.Contains(t, err.Error(), `"webgpu:99"`)
	assert.Contains(t, err.Error(), "adapter 99 does not exist")
}

// childEnv marks the test binary that TestFailureLibraryMissing starts:
// the library loads once per process, so a missing one needs a fresh one.
const childEnv = "WEBTENSOR_TEST_FAILURE_CHILD"

func TestFailureLibraryMissingChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestFailureLibraryMissing")
	}
	_, err := tensor.Open("webgpu")
	t.Logf("is-library-not-found=%v", errors.Is(err, hal.ErrLibraryNotFound))
	t.Logf("error=%v", err)
}

func TestFailureLibraryMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libwebgpu_dawn.so")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailureLibraryMissingChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "WEBTENSOR_WEBGPU_LIB="+missing)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "is-library-not-found=true")
	assert.Contains(t, string(out), `tensor: Open: "webgpu:0"`)
	assert.Contains(t, string(out), missing)
}
