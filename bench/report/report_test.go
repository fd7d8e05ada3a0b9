package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/bench/schema"
)

func result(impl, backend, name, group, unit string, size, median float64, threads int) schema.Result {
	dev := backend
	if impl == "webtensor" && backend != "cpu" {
		dev = "webgpu:0"
	}
	return schema.Result{Case: name, Group: group, Size: size, Impl: impl, Device: dev, Backend: backend,
		Type: map[bool]string{true: "cpu", false: "discrete"}[backend == "cpu"], Threads: threads, Unit: unit,
		Median: median, Best: median, MedianSeconds: 1, BestSeconds: 1, Samples: 5, Iters: 1}
}

// writeFixtures writes a webtensor run and a peers run with round
// numbers, so that every ratio is known.
func writeFixtures(t *testing.T, dir string) (ours, peers string) {
	file := func(tool string, rs ...schema.Result) *schema.File {
		return &schema.File{Suite: schema.Suite, Schema: schema.Version, Tool: tool,
			Started: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC),
			Machine: schema.Machine{CPU: "Test CPU", Cores: 2, OS: "linux", Arch: "amd64", Go: "go1.26"}, Results: rs}
	}
	ours, peers = filepath.Join(dir, "ours.json"), filepath.Join(dir, "peers.json")
	require.NoError(t, schema.Write(ours, file("webtensor",
		result("webtensor", "cpu", "matmul/1024", "matmul", schema.GFLOPS, 1024, 100, 2),
		result("webtensor", "cpu", "matmul/2048", "matmul", schema.GFLOPS, 2048, 90, 2),
		result("webtensor", "cpu", "add/16M", "add", schema.GBs, 1<<24, 10, 2),
		result("webtensor", "cpu", "mlp-step/784-512-512-10-b128", "train", schema.Ms, 128, 4, 2),
		result("webtensor", "vulkan", "matmul/4096", "matmul", schema.GFLOPS, 4096, 30000, 2),
		result("webtensor", "vulkan", "add/16M", "add", schema.GBs, 1<<24, 1800, 2),
		result("webtensor", "vulkan", "copy/16M", "copy", schema.GBs, 1<<24, 2400, 2),
		result("webtensor", "vulkan", "add/16M fusion=off", "add", schema.GBs, 1<<24, 1710, 2),
		result("webtensor", "vulkan", "sum/1M", "sum", schema.GBs, 1<<20, 300, 2),
		result("webtensor", "cpu", "onnx/resnet18-b32", "onnx-resnet18", schema.Ms, 32, 20, 2),
	)))
	require.NoError(t, schema.Write(peers, file("peers",
		result("torch", "cpu", "matmul/1024", "matmul", schema.GFLOPS, 1024, 125, 2),
		result("numpy", "cpu", "matmul/1024", "matmul", schema.GFLOPS, 1024, 110, 2),
		result("torch", "cpu", "matmul/2048", "matmul", schema.GFLOPS, 2048, 100, 2),
		result("torch", "cpu", "add/16M", "add", schema.GBs, 1<<24, 8, 2),
		result("numpy", "cpu", "add/16M", "add", schema.GBs, 1<<24, 12.5, 2),
		result("torch", "cpu", "copy/16M", "copy", schema.GBs, 1<<24, 20, 2),
		result("torch", "cpu", "mlp-step/784-512-512-10-b128", "train", schema.Ms, 128, 5, 2),
		result("torch", "cuda", "matmul/4096", "matmul", schema.GFLOPS, 4096, 50000, 16),
		result("torch", "cuda", "copy/16M", "copy", schema.GBs, 1<<24, 2000, 16),
		result("torch", "cuda", "add/16M", "add", schema.GBs, 1<<24, 1900, 16),
		result("torch", "cpu", "onnx/resnet18-b32", "onnx-resnet18", schema.Ms, 32, 25, 2),
		result("onnxruntime", "cpu", "onnx/resnet18-b32", "onnx-resnet18", schema.Ms, 32, 10, 2),
	)))
	return ours, peers
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	ours, peers := writeFixtures(t, dir)
	md := filepath.Join(dir, "BENCHMARKS.md")
	require.NoError(t, os.WriteFile(md, []byte("# Benchmarks\n\nhand-written intro\n\n"+beginMarker+"\nold\n"+endMarker+"\n\nhand-written outro\n"), 0o644))
	charts := filepath.Join(dir, "results")

	var stdout bytes.Buffer
	require.NoError(t, run([]string{"-md", md, "-charts", charts, peers, ours}, &stdout))
	data, err := os.ReadFile(md)
	require.NoError(t, err)
	text := string(data)

	assert.True(t, strings.HasPrefix(text, "# Benchmarks\n\nhand-written intro\n\n"+beginMarker+"\n"), text)
	assert.True(t, strings.HasSuffix(text, endMarker+"\n\nhand-written outro\n"), text)
	assert.NotContains(t, text, "\nold\n")
	assert.Equal(t, 1, strings.Count(text, "| onnx/resnet18-b32 |"), "the ONNX rows are in their own table only")
	for _, row := range []string{
		// speed over PyTorch and over the faster peer (numpy for add)
		"| matmul/1024 | GFLOPS | 100.0 | 125.0 | 110.0 | 0.80× | 0.80× |",
		"| matmul/2048 | GFLOPS | 90.00 | 100.0 |  | 0.90× | 0.90× |",
		"| add/16M | GB/s | 10.00 | 8.000 | 12.50 | 1.25× | 0.80× |",
		// a peer-only case sits next to its neighbour from the peers' run
		"| add/16M | GB/s | 10.00 | 8.000 | 12.50 | 1.25× | 0.80× |\n| copy/16M | GB/s |  | 20.00 |  |  |  |",
		// times: 4 ms against 5 ms is 1.25× as fast
		"| mlp-step/784-512-512-10-b128 | ms | 4.000 | 5.000 |  | 1.25× | 1.25× |",
		"| matmul/4096 | GFLOPS | 30000 | 50000 | 0.60× |  |  |",
		// each side against its own copy
		"| add/16M | GB/s | 1800 | 1900 | 0.95× | 0.75× | 0.95× |",
		"| copy/16M | GB/s | 2400 | 2000 | 1.20× |  |  |",
		"| SGEMM 1024 vs PyTorch | 2 | 0.80× | ≥ 0.80× | yes |",
		"| SGEMM 2048 vs PyTorch | 2 | 0.90× | ≥ 0.80× | yes |",
		"| add/16M vs faster of PyTorch, NumPy | 2 | 0.80× | ≥ 0.90× | no |",
		"| MLP step vs PyTorch | 2 | 1.25× | ≥ 1.00× | yes |",
		"| GPU SGEMM 4096 (TF32 off) vs PyTorch CUDA | – | 0.60× | ≥ 0.75× | no |",
		// fusion off: every op its own kernel, against PyTorch's add
		"| add/16M fusion=off | GB/s | 1710 | 1900 | 0.90× | 0.71× | 0.95× |",
		"| GPU add/16M fusion=off vs PyTorch CUDA | – | 0.90× | ≥ 0.85× | yes |",
		// an absolute goal: 300 GB/s is 4 MB in 14 µs
		"| GPU sum/1M under 15 µs (GB/s ≥ 4 MiB / 15 µs) | – | 300 | ≥ 279.6 | yes |",
		"#### CPU, 2 threads",
		// exported models beside PyTorch eager and ONNX Runtime: 20 ms
		// against 25 ms is 1.25× as fast, against 10 ms 0.5×
		"#### ONNX models, CPU, 2 threads",
		"| onnx/resnet18-b32 | ms | 20.00 | 25.00 | 10.00 | 1.25× | 0.50× |",
		"| ONNX ResNet-18 b32 vs PyTorch eager (within 1.5×) | 2 | 1.25× | ≥ 0.67× | yes |",
		"![matmul](results/matmul.svg)",
		"**peers**, 2026-01-02 03:04 UTC: Test CPU, 2 logical CPUs",
	} {
		assert.Contains(t, text, row)
	}

	for _, name := range []string{"matmul.svg", "add.svg"} {
		svg, err := os.ReadFile(filepath.Join(charts, name))
		require.NoError(t, err)
		assert.Contains(t, string(svg), "<svg")
		assert.Contains(t, string(svg), "webtensor cpu T=2")
	}
	assert.NoFileExists(t, filepath.Join(charts, "relu.svg"), "no relu results, no chart")

	// Idempotent: a second run gives the same file.
	require.NoError(t, run([]string{"-md", md, "-charts", charts, peers, ours}, &stdout))
	again, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Equal(t, text, string(again))
}

func TestLaterFileWins(t *testing.T) {
	dir := t.TempDir()
	ours, peers := writeFixtures(t, dir)
	f, err := schema.Read(ours)
	require.NoError(t, err)
	f.Results = []schema.Result{result("webtensor", "cpu", "matmul/1024", "matmul", schema.GFLOPS, 1024, 250, 2)}
	rerun := filepath.Join(dir, "rerun.json")
	require.NoError(t, schema.Write(rerun, f))

	var stdout bytes.Buffer
	require.NoError(t, run([]string{"-md", "", "-charts", dir, ours, peers, rerun}, &stdout))
	assert.Contains(t, stdout.String(), "| matmul/1024 | GFLOPS | 250.0 | 125.0 | 110.0 | 2.00× | 2.00× |")
}

func TestRewriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	require.NoError(t, os.WriteFile(path, []byte("intro"), 0o644))
	require.NoError(t, rewriteSection(path, "body"))
	data, _ := os.ReadFile(path)
	assert.Equal(t, "intro\n\n"+beginMarker+"\n\nbody\n\n"+endMarker+"\n", string(data))

	require.NoError(t, os.WriteFile(path, []byte(beginMarker+" only"), 0o644))
	assert.Error(t, rewriteSection(path, "body"))
}

func TestReadRefusesOtherSchemas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"suite":"webtensor-bench","schema":99}`), 0o644))
	var stdout bytes.Buffer
	assert.ErrorContains(t, run([]string{"-md", "", path}, &stdout), "schema 99")
}

// TestTfjsTables checks that TensorFlow.js's WebGPU rows pair with
// webtensor's on the same WebGPU API and adapter type only: each
// software adapter gets its table and its ratios, and a hardware
// adapter's row (a discrete Vulkan GPU) is in neither.
func TestTfjsTables(t *testing.T) {
	dir := t.TempDir()
	soft := func(impl, dev, backend, name, group, unit string, size, median float64) schema.Result {
		r := result(impl, backend, name, group, unit, size, median, 2)
		r.Device, r.Type, r.Adapter = dev, "cpu", "llvmpipe (LLVM 15.0.6, 256 bits)"
		return r
	}
	file := func(tool string, rs ...schema.Result) string {
		path := filepath.Join(dir, tool+".json")
		require.NoError(t, schema.Write(path, &schema.File{Suite: schema.Suite, Schema: schema.Version, Tool: tool,
			Started: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC),
			Machine: schema.Machine{CPU: "Test CPU", Cores: 2, OS: "linux", Arch: "amd64"}, Results: rs}))
		return path
	}
	ours := file("webtensor",
		soft("webtensor", "webgpu:0", "vulkan", "matmul/256", "matmul", schema.GFLOPS, 256, 30),
		soft("webtensor", "webgpu:1", "opengles", "matmul/256", "matmul", schema.GFLOPS, 256, 20),
		soft("webtensor", "webgpu:1", "opengles", "mlp-step/784-512-512-10-b128", "train", schema.Ms, 128, 50),
		soft("webtensor", "webgpu:1", "opengles", "cumsum/16M", "cumsum", schema.GBs, 1<<24, 1),
	)
	f, err := schema.Read(ours)
	require.NoError(t, err)
	gpu := result("webtensor", "vulkan", "matmul/256", "matmul", schema.GFLOPS, 256, 9000, 2) // a discrete GPU
	gpu.Device = "webgpu:2"
	f.Results = append(f.Results, gpu)
	require.NoError(t, schema.Write(ours, f))
	tfjs := file("tfjs-webgpu",
		soft("tfjs-webgpu", "webgpu/vulkan", "vulkan", "matmul/256", "matmul", schema.GFLOPS, 256, 60),
		soft("tfjs-webgpu", "webgpu/opengles", "opengles", "matmul/256", "matmul", schema.GFLOPS, 256, 10),
		soft("tfjs-webgpu", "webgpu/opengles", "opengles", "mlp-step/784-512-512-10-b128", "train", schema.Ms, 128, 200),
	)
	var stdout bytes.Buffer
	require.NoError(t, run([]string{"-md", "", "-charts", dir, ours, tfjs}, &stdout))
	text := stdout.String()
	gles := "#### WebGPU (opengles, adapter type cpu) vs TensorFlow.js\n\n" +
		"TensorFlow.js's WebGPU backend on llvmpipe (LLVM 15.0.6, 256 bits) through its own Dawn (npm webgpu); above 1, webtensor is faster.\n\n" +
		"| Case | Unit | webtensor | tfjs-webgpu | ÷ tfjs |\n|---|---|--:|--:|--:|\n" +
		"| matmul/256 | GFLOPS | 20.00 | 10.00 | 2.00× |\n" +
		// times: 50 ms against 200 ms is 4× as fast
		"| mlp-step/784-512-512-10-b128 | ms | 50.00 | 200.0 | 4.00× |\n"
	vk := "#### WebGPU (vulkan, adapter type cpu) vs TensorFlow.js\n\n" +
		"TensorFlow.js's WebGPU backend on llvmpipe (LLVM 15.0.6, 256 bits) through its own Dawn (npm webgpu); above 1, webtensor is faster.\n\n" +
		"| Case | Unit | webtensor | tfjs-webgpu | ÷ tfjs |\n|---|---|--:|--:|--:|\n" +
		"| matmul/256 | GFLOPS | 30.00 | 60.00 | 0.50× |\n"
	assert.Contains(t, text, gles+"\n"+vk, "one table per adapter, only the cases tfjs has")
	assert.Equal(t, 2, strings.Count(text, "vs TensorFlow.js\n"))
	assert.Contains(t, text, "**tfjs-webgpu**, 2026-01-02 03:04 UTC")
}
