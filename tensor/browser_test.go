//go:build js && wasm

package tensor

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu"
)

// TestBrowserDefault runs in a browser page (make test-browser): with
// wgpu.FallbackEnv set, as the headless test page sets it, Default is the
// page's WebGPU, and a matrix product on it matches a float64 reference.
func TestBrowserDefault(t *testing.T) {
	if os.Getenv(wgpu.FallbackEnv) == "" {
		t.Skipf("%s is not set: the page did not ask for its fallback adapter", wgpu.FallbackEnv)
	}
	dev := Default()
	require.True(t, strings.HasPrefix(dev.Name(), "webgpu:"), "Default() = %s, want the page's WebGPU", dev.Name())

	const m, k, n = 13, 29, 7
	rng := rand.New(rand.NewPCG(21, 1))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rng.Float32()*2 - 1
	}
	got, err := MatMul(FromFloat32(dev, a, m, k), FromFloat32(dev, b, k, n)).Float32s()
	require.NoError(t, err)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var want float64
			for p := 0; p < k; p++ {
				want += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			require.LessOrEqual(t, math.Abs(float64(got[i*n+j])-want), 1e-4, "[%d,%d]", i, j)
		}
	}
}
