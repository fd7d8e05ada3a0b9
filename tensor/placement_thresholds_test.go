package tensor_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

func TestPlacementDefaultThresholds(t *testing.T) {
	require.Equal(t, tensor.NeverThresholds, tensor.DefaultThresholds(hal.AdapterCPU), "software adapters never win")
	require.Equal(t, tensor.NeverThresholds, tensor.DefaultThresholds(hal.AdapterUnknown))
	gpu := tensor.DefaultThresholds(hal.AdapterDiscrete)
	require.Equal(t, int64(1<<18), gpu.Elementwise)
	require.Equal(t, int64(1<<24), gpu.MatMul)
}

func TestPlacementThresholdsFile(t *testing.T) {
	_, gpu := devices(t)
	path := filepath.Join(t.TempDir(), "sub", "thresholds.json")
	want := tensor.Thresholds{Elementwise: 1, Reduction: 2, MatMul: 3, Window: 4, Creation: tensor.Never}
	f := tensor.ThresholdsFile{
		Version:  tensor.ThresholdsFileVersion,
		Adapters: map[string]tensor.Thresholds{gpu.Info().Name: want, "other": tensor.NeverThresholds},
		Notes:    map[string]string{"other": "the GPU never wins"},
	}
	require.NoError(t, f.Write(path))
	got, err := tensor.ReadThresholdsFile(path)
	require.NoError(t, err)
	require.Equal(t, f, got)

	t.Cleanup(func() { _ = tensor.LoadThresholds(writeFile(t, `{"version":1,"adapters":{}}`)) })
	require.NoError(t, tensor.LoadThresholds(path))
	require.Equal(t, want, tensor.ThresholdsFor(gpu))
	tensor.SetThresholds(tinyThresholds)
	require.Equal(t, tinyThresholds, tensor.ThresholdsFor(gpu), "SetThresholds overrides the file")
	tensor.ResetThresholds()
	require.Equal(t, want, tensor.ThresholdsFor(gpu))

	for name, body := range map[string]string{
		"corrupt":  `{"version":1,"adapters":{`,
		"version":  `{"version":7,"adapters":{}}`,
		"negative": `{"version":1,"adapters":{"x":{"elementwise":-5}}}`,
	} {
		err := tensor.LoadThresholds(writeFile(t, body))
		require.Error(t, err, name)
		require.Equal(t, want, tensor.ThresholdsFor(gpu), "%s: a bad file changes nothing", name)
	}
	require.Error(t, tensor.LoadThresholds(filepath.Join(t.TempDir(), "missing.json")))
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "thresholds.json")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// A corrupt thresholds file in the user's config directory is logged and
// ignored at start-up. The check runs in a child process, because the file
// is read once per process.
func TestPlacementCorruptStartupFile(t *testing.T) {
	if os.Getenv("WEBTENSOR_PLACEMENT_CHILD") == "1" {
		cpu, _ := tensor.Open("cpu")
		require.Equal(t, tensor.DefaultThresholds(cpu.Info().Type), tensor.ThresholdsFor(cpu))
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "webtensor"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "webtensor", "thresholds.json"), []byte("{not json"), 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlacementCorruptStartupFile$")
	cmd.Env = append(os.Environ(), "WEBTENSOR_PLACEMENT_CHILD=1", "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "webtensor: ignoring thresholds")
}
