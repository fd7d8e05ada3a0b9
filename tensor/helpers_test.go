package tensor

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func openCPU(t *testing.T) *Device {
	t.Helper()
	dev, err := Open("cpu")
	require.NoError(t, err)
	return dev
}

// forEachDevice runs f as a subtest on the CPU device and on the first
// WebGPU adapter, so the same assertions hold on both. Without a WebGPU
// device the second subtest is skipped, except under CI=true, where it is
// required to run.
func forEachDevice(t *testing.T, f func(t *testing.T, dev *Device)) {
	t.Run("cpu", func(t *testing.T) { f(t, openCPU(t)) })
	t.Run("webgpu", func(t *testing.T) {
		dev, err := Open("webgpu")
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true requires a WebGPU device: %v", err)
			}
			t.Skipf("no WebGPU device: %v", err)
		}
		f(t, dev)
	})
}

func openSecondCPU(t *testing.T) *Device {
	t.Helper()
	dev, err := Open(secondCPU)
	require.NoError(t, err)
	return dev
}

// randomFloat32s returns n values in [-2, 2) from a seeded generator, so
// failures reproduce.
func randomFloat32s(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = rng.Float32()*4 - 2
	}
	return out
}

func newRand(t *testing.T) *rand.Rand {
	var seed uint64
	for _, c := range t.Name() {
		seed = seed*31 + uint64(c)
	}
	return rand.New(rand.NewPCG(seed, 1))
}

// read returns t's values and releases nothing; it fails the test on error.
func read(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	got, err := x.Float32s()
	require.NoError(t, err)
	return got
}

// requireClose checks got against float64 references, element by element,
// with tolerance tol(i).
func requireClose(t *testing.T, want []float64, got []float32, tol func(i int) float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if diff := math.Abs(float64(got[i]) - want[i]); !(diff <= tol(i)) {
			t.Fatalf("element %d: got %v, want %v (|diff| %g > %g)", i, got[i], want[i], diff, tol(i))
		}
	}
}

// float32 rounding of one result, with headroom for fused or reordered
// arithmetic and approximate transcendental functions on GPUs.
func elementwiseTol(want []float64) func(int) float64 {
	return func(i int) float64 { return 4e-7*math.Abs(want[i]) + 1e-7 }
}

func releaseAll(ts ...*Tensor) {
	for _, t := range ts {
		t.Release()
	}
}
