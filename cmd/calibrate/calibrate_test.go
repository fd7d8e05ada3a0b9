package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// calibrate's whole path on the test adapter with tiny sizes: it times,
// prints a row per point and writes a file that LoadThresholds accepts.
func TestCalibrateQuick(t *testing.T) { testdevice.ForEachWebGPU(t, testCalibrateQuick) }

func testCalibrateQuick(t *testing.T, gpu *tensor.Device) {
	path := filepath.Join(t.TempDir(), "thresholds.json")
	var out bytes.Buffer
	s := sweep{elements: []int{1, 64}, matmul: []int{1, 8}, images: []int{2, 8}, reps: 1}
	require.NoError(t, calibrate(&out, path, gpu.Name(), s))
	require.Contains(t, out.String(), "elementwise")
	require.Contains(t, out.String(), "wrote "+path)

	f, err := tensor.ReadThresholdsFile(path)
	require.NoError(t, err)
	key := tensor.AdapterKey(gpu.Info())
	require.Contains(t, key, gpu.Info().Backend, "adapters of one name on two graphics APIs get two entries")
	got, ok := f.Adapters[key]
	require.True(t, ok, "entry for %q in %+v", key, f)
	for _, v := range []int64{got.Elementwise, got.Reduction, got.MatMul, got.Window, got.Creation} {
		require.True(t, v == tensor.Never || v >= 1, "threshold %d", v)
	}
	require.NotEmpty(t, f.Notes[key])
	require.NoError(t, tensor.LoadThresholds(path))
	require.Equal(t, got, tensor.ThresholdsFor(gpu))
}

func TestCrossover(t *testing.T) {
	ms := time.Millisecond
	require.Equal(t, tensor.Never, crossover([]point{{1, ms, 2 * ms}, {2, ms, 2 * ms}}))
	require.Equal(t, int64(2), crossover([]point{{1, ms, 2 * ms}, {2, 2 * ms, ms}, {3, 3 * ms, ms}}))
	// A win followed by a loss is noise: the GPU must win from there on.
	require.Equal(t, int64(3), crossover([]point{{1, 2 * ms, ms}, {2, ms, 2 * ms}, {3, 3 * ms, ms}}))
}
