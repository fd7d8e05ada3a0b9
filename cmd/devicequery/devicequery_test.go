package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

var testAdapters = []tensor.Adapter{
	{Name: "cpu", Info: hal.Info{Name: "Go CPU", Vendor: "webtensor", Backend: "cpu", Type: hal.AdapterCPU,
		Limits: hal.Limits{MaxBufferSize: 1 << 40}}},
	{Name: "webgpu:0", Info: hal.Info{Name: "llvmpipe (LLVM 15)", Vendor: "mesa", Backend: "opengles", Type: hal.AdapterCPU}},
	{Name: "webgpu:1", Info: hal.Info{Name: "NVIDIA H100", Vendor: "nvidia", Architecture: "hopper", Backend: "vulkan",
		Type: hal.AdapterDiscrete, Features: []string{"shader-f16", "timestamp-query"},
		Limits: hal.Limits{MaxBufferSize: 3 << 29, MaxComputeWorkgroupSizeX: 1024}}},
}

// testCapabilities declares a few kernels for every device but webgpu:0,
// which fails to open.
func testCapabilities(device string) (hal.Capabilities, error) {
	if device == "webgpu:0" {
		return nil, fmt.Errorf("opening %s: %w", device, hal.ErrDeviceLost)
	}
	return hal.Capabilities{
		hal.KernelFill:       hal.SetOf(hal.Float32, hal.Int32),
		hal.KernelCopy:       hal.SetOf(hal.Float32, hal.Int32),
		hal.Exp.Kernel():     hal.SetOf(hal.Float32),
		hal.Log.Kernel():     hal.SetOf(hal.Float32),
		hal.Neg.Kernel():     hal.SetOf(hal.Float32, hal.Int32),
		hal.Sum.Kernel():     hal.SetOf(hal.Float32, hal.Int32),
		hal.KernelMatMul:     hal.SetOf(hal.Float32),
		hal.KernelGridSample: 0,
	}, nil
}

func TestBuildEntries(t *testing.T) {
	entries := buildEntries(testAdapters, "webgpu:1", testCapabilities)
	require.Len(t, entries, 3)
	assert.Equal(t, "cpu", entries[0].Backend)
	assert.False(t, entries[0].Default)
	assert.True(t, entries[2].Default)
	assert.Equal(t, "discrete", entries[2].Type)
	assert.NotNil(t, entries[0].Features)
	assert.Equal(t, []string{"float32", "int32"}, entries[0].Kernels["fill"])
	assert.Empty(t, entries[1].Kernels)
	assert.Contains(t, entries[1].OpenError, "device lost")
}

func TestKernelRows(t *testing.T) {
	entries := buildEntries(testAdapters, "", testCapabilities)
	var buf bytes.Buffer
	require.NoError(t, writeText(&buf, entries, "cpu", nil))
	out := buf.String()
	for _, row := range []string{
		`\n      float32,int32 +fill copy\n`,
		`\n      float32,int32 +unary: neg\n`,
		`\n      float32 +unary: exp log\n`,
		`\n      float32,int32 +reduce: sum\n`,
		`\n      float32 +matmul\n`,
		`\n    kernels +unknown: opening webgpu:0: device lost\n`,
	} {
		assert.Regexp(t, row, out)
	}
	assert.NotContains(t, out, "grid_sample", "a kernel with no dtypes is not run")
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeJSON(&buf, buildEntries(testAdapters, "webgpu:1", testCapabilities)))

	var got []map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	require.Len(t, got, 3)
	for _, key := range []string{"name", "vendor", "backend", "type", "driver", "limits", "features", "default", "kernels"} {
		assert.Contains(t, got[0], key)
	}
	assert.Equal(t, []any{}, got[0]["features"], "features must be [] rather than null")
	assert.Equal(t, "cpu", got[0]["backend"])
	assert.Equal(t, true, got[2]["default"])
	assert.Equal(t, []any{"float32"}, got[2]["kernels"].(map[string]any)["unary.exp"])
	assert.Equal(t, map[string]any{}, got[1]["kernels"], "kernels must be {} rather than null")
	assert.Contains(t, got[1]["openError"], "device lost")
	assert.NotContains(t, got[0], "openError")
	assert.Equal(t, float64(1024), got[2]["limits"].(map[string]any)["maxComputeWorkgroupSizeX"])

	buf.Reset()
	require.NoError(t, writeJSON(&buf, nil))
	assert.Equal(t, "[]\n", buf.String())
}

func TestWriteText(t *testing.T) {
	problems := backendProblems(map[string]error{
		"webgpu": fmt.Errorf("webgpu: libwebgpu_dawn.so: %w", hal.ErrLibraryNotFound),
	}, "")
	var buf bytes.Buffer
	require.NoError(t, writeText(&buf, buildEntries(testAdapters, "webgpu:1", testCapabilities), "webgpu:1 (test)", problems))
	out := buf.String()

	assert.Contains(t, out, "tensor.Default() picks: webgpu:1 (test)")
	assert.Contains(t, out, "\n* webgpu:1  NVIDIA H100\n")
	assert.Contains(t, out, "\n  cpu  Go CPU\n")
	assert.Contains(t, out, "shader-f16, timestamp-query")
	assert.Contains(t, out, "1099511627776 (1 TiB)")
	assert.Contains(t, out, "1610612736 (1.5 GiB)")
	assert.Contains(t, out, "make deps")
	assert.Contains(t, out, "WEBTENSOR_WEBGPU_LIB")
	for _, line := range strings.Split(out, "\n") {
		assert.Equal(t, strings.TrimRight(line, " "), line, "trailing spaces")
	}

	// Values line up: every property row puts its value in the same column.
	column := -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "    ") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		at := strings.Index(line[len("    "+fields[0]):], fields[1]) + len("    "+fields[0])
		if column == -1 {
			column = at
		}
		assert.Equal(t, column, at, "misaligned: %q", line)
	}
}

func TestBackendProblems(t *testing.T) {
	lines := backendProblems(map[string]error{
		"webgpu": fmt.Errorf("built without cgo: %w", hal.ErrUnavailable),
		"cuda":   fmt.Errorf("libcuda.so: %w", hal.ErrLibraryNotFound),
	}, "")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "cuda backend lists no adapters: libcuda.so"), "sorted by backend name")
	assert.Contains(t, lines[0], "make deps")
	assert.NotContains(t, lines[1], "make deps", "the install hint is for a missing library only")
}

// TestBackendProblemsNoAdapter checks the hint when the library loaded but
// no driver offered an adapter: where to look, and what the drivers said.
func TestBackendProblemsNoAdapter(t *testing.T) {
	noAdapter := map[string]error{"webgpu": fmt.Errorf("offers no adapter: %w", hal.ErrNoAdapter)}
	lines := backendProblems(noAdapter, "error: XDG_RUNTIME_DIR is invalid\nFailed to load libEGL.so\n")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "vulkaninfo")
	assert.Contains(t, lines[0], "\n    error: XDG_RUNTIME_DIR is invalid\n    Failed to load libEGL.so")
	assert.Contains(t, lines[0], "WEBTENSOR_WEBGPU_VERBOSE=1 prints it")

	quiet := backendProblems(noAdapter, "")
	assert.Contains(t, quiet[0], "set WEBTENSOR_WEBGPU_VERBOSE=1 to see")
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 256 << 20: "256 MiB", 1 << 40: "1 TiB",
	} {
		assert.Equal(t, want, formatBytes(n))
	}
}
