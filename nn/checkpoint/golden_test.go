package checkpoint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// The golden file and its expected values come from
// testdata/golden/gen_safetensors.py, which implements the format with
// torch and the Python standard library.
const goldenDir = "../../testdata/golden/nn"

type goldenTensor struct {
	Name  string   `json:"name"`
	DType string   `json:"dtype"`
	Shape []int    `json:"shape"`
	Bits  []uint64 `json:"bits"`
}

type golden struct {
	File     string            `json:"file"`
	Metadata map[string]string `json:"metadata"`
	Tensors  []goldenTensor    `json:"tensors"`
}

func loadGolden(t *testing.T) (golden, []byte) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(goldenDir, "safetensors.json"))
	require.NoError(t, err)
	var g golden
	require.NoError(t, json.Unmarshal(js, &g))
	require.NotEmpty(t, g.Tensors)
	file, err := os.ReadFile(filepath.Join(goldenDir, g.File))
	require.NoError(t, err)
	return g, file
}

func TestGoldenReadPythonWritten(t *testing.T) {
	g, file := loadGolden(t)
	dev := cpuDevice(t)
	tensors, meta, err := Read(bytes.NewReader(file), dev)
	require.NoError(t, err)
	defer releaseAll(tensors)
	require.Equal(t, g.Metadata, meta)
	require.Len(t, tensors, len(g.Tensors))
	for _, want := range g.Tensors {
		got := tensors[want.Name]
		require.NotNil(t, got, want.Name)
		require.Equal(t, want.DType, dtypeNames[got.DType()], want.Name)
		require.Equal(t, want.Shape, got.Shape(), want.Name)
		if want.Bits == nil {
			want.Bits = []uint64{}
		}
		got64 := bitsOf(t, got)
		if got64 == nil {
			got64 = []uint64{}
		}
		require.Equal(t, want.Bits, got64, want.Name)
	}
}

// TestGoldenWriteMatchesPython writes the golden tensors from Go and
// expects the Python writer's bytes exactly. With
// WEBTENSOR_SAFETENSORS_OUT set it also saves its file there, for
// `gen_safetensors.py verify`.
func TestGoldenWriteMatchesPython(t *testing.T) {
	g, file := loadGolden(t)
	dev := cpuDevice(t)
	tensors := map[string]*tensor.Tensor{}
	defer releaseAll(tensors)
	for _, gt := range g.Tensors {
		dt, _, ok := dtypeByName(gt.DType)
		require.True(t, ok, gt.DType)
		tensors[gt.Name] = fromBits(dev, dt, gt.Bits, gt.Shape)
		require.NoError(t, tensors[gt.Name].Err())
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, tensors, g.Metadata))
	require.Equal(t, file, buf.Bytes())
	if out := os.Getenv("WEBTENSOR_SAFETENSORS_OUT"); out != "" {
		require.NoError(t, WriteFile(out, tensors, g.Metadata))
		t.Logf("wrote %s", out)
	}
}
