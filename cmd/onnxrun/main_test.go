package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/internal/npy"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// With ONNXRUN_TEST_MAIN=1 the test binary is the command itself, so the
// bad-argument tests see real exit codes without building it again.
func TestMain(m *testing.M) {
	if os.Getenv("ONNXRUN_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const models = "../../testdata/onnx/"

// call runs the command in this process.
func call(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = onnxrun(args, &o, &e)
	return code, o.String(), e.String()
}

func readNpy(t *testing.T, path string) *npy.Array {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := npy.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}

// The facts printed are checked against Python onnx's reading of the
// files (node op types counted, initializer elements summed), and the
// written outputs against PyTorch's within the tolerance,
// 1e-4·max|ref| + 1e-5, on the CPU and every WebGPU adapter; the
// transformer's int64 token ids come from the .npy as Int64.
func TestExportedModels(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string // printed lines, as regular expressions
	}{
		{"mlp", []string{`  input  input FLOAT\[batch, 20\]`, `  output output FLOAT\[batch, 7\]`,
			`operators: 5 nodes .*`, `  Gemm +3`, `  Relu +1`, `  Tanh +1`, `parameters: 3655`,
			`  input input: float32 \[5 20\]`, `output output: float32 \[5 7\]`}},
		{"resnet18", []string{`  input  input FLOAT\[batch, 3, 40, 40\]`, `  output output FLOAT\[batch, 10\]`,
			`operators: 49 nodes .*`, `  Add +8`, `  Conv +20`, `  Flatten +1`, `  Gemm +1`, `  GlobalAveragePool +1`,
			`  MaxPool +1`, `  Relu +17`, `parameters: 702186`, `output output: float32 \[2 10\]`}},
		{"transformer", []string{`  input  input INT64\[batch, 12\]`, `operators: 248 nodes .*`, `parameters: 10597`,
			`  input input: int(32|64) \[3 12\]`, `output output: float32 \[3 12 5\]`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
				out := t.TempDir()
				code, stdout, stderr := call(models+c.name+".onnx", "-device", dev.Name(), "-runs", "2",
					"-input", "input="+models+c.name+".input.npy", "-out", out)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				for _, l := range append(c.lines, `device: `+regexp.QuoteMeta(dev.Name())+` \(.*\)`, `latency: first run .*, steady state median .* \(min .*, 2 runs\)`) {
					if !regexp.MustCompile(`(?m)^` + l + `$`).MatchString(stdout) {
						t.Errorf("no line %q in:\n%s", l, stdout)
					}
				}
				assertClose(t, readNpy(t, filepath.Join(out, "output.npy")), readNpy(t, models+c.name+".output.npy"))
			})
		})
	}
}

func assertClose(t *testing.T, got, want *npy.Array) {
	t.Helper()
	if !equalShapes(got.Shape, want.Shape) {
		t.Fatalf("shape %v, want %v", got.Shape, want.Shape)
	}
	maxRef := 0.0
	for _, v := range want.Float {
		maxRef = max(maxRef, math.Abs(v))
	}
	tol := 1e-4*maxRef + 1e-5
	for k, v := range want.Float {
		if d := math.Abs(got.Float[k] - v); !(d <= tol) {
			t.Fatalf("element %d: got %v, want %v (tolerance %.3g)", k, got.Float[k], v, tol)
		}
	}
}

func equalShapes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// Random inputs take -batch for the symbolic dimension, and -seed decides
// them: the same seed gives the same outputs, another seed others.
// Integer inputs (the transformer's ids) stay in [0, -intmax).
func TestRandomInputs(t *testing.T) {
	run := func(model string, args ...string) *npy.Array {
		out := t.TempDir()
		code, stdout, stderr := call(append([]string{models + model + ".onnx", "-runs", "0", "-out", out}, args...)...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d: %s", model, args, code, stderr)
		}
		if strings.Contains(stdout, "steady state") {
			t.Errorf("-runs 0 printed a steady state:\n%s", stdout)
		}
		return readNpy(t, filepath.Join(out, "output.npy"))
	}
	a, b, c := run("mlp", "-batch", "3", "-seed", "7"), run("mlp", "-seed", "7", "-batch", "3"), run("mlp", "-batch", "3", "-seed", "8")
	if !equalShapes(a.Shape, []int{3, 7}) {
		t.Fatalf("shape %v, want [3 7]", a.Shape)
	}
	same, differ := true, false
	for k := range a.Float {
		if math.IsNaN(a.Float[k]) || math.IsInf(a.Float[k], 0) {
			t.Fatalf("element %d is %v", k, a.Float[k])
		}
		same = same && a.Float[k] == b.Float[k]
		differ = differ || a.Float[k] != c.Float[k]
	}
	if !same || !differ {
		t.Errorf("seed 7 twice gave equal outputs: %v; seeds 7 and 8 differed: %v", same, differ)
	}
	if tr := run("transformer", "-batch", "2", "-intmax", "50"); !equalShapes(tr.Shape, []int{2, 12, 5}) {
		t.Errorf("transformer shape %v, want [2 12 5]", tr.Shape)
	}
}

// Bad arguments exit 2 with usage or the reason; a model or input that
// cannot be used exits 1 naming it. The command runs as its own process.
func TestBadArguments(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.onnx")
	if err := os.WriteFile(corrupt, []byte("\x0a\xff\xff\xff\xff not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	mlp := models + "mlp.onnx"
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "usage: onnxrun"},
		{[]string{mlp, "-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{mlp, "-input", "input"}, 2, `want name=file.npy, got "input"`},
		{[]string{mlp, mlp}, 2, "more than one model"},
		{[]string{mlp, "-batch", "0"}, 2, "-batch (0)"},
		{[]string{filepath.Join(dir, "missing.onnx")}, 1, "missing.onnx: no such file"},
		{[]string{corrupt}, 1, "onnxrun: onnx"},
		{[]string{mlp, "-device", "tpu"}, 1, `unknown device "tpu"`},
		{[]string{mlp, "-input", "x=" + models + "mlp.input.npy"}, 1, `the model has no input "x"`},
		{[]string{mlp, "-input", "input=" + models + "resnet18.input.npy"}, 1, `input "input" has shape [2 3 40 40]`},
		{[]string{mlp, "-input", "input=" + corrupt}, 1, "input input: " + corrupt},
	} {
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Env = append(os.Environ(), "ONNXRUN_TEST_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.code {
			t.Errorf("%v: got %v, want exit %d (stderr %s)", c.args, err, c.code, stderr.String())
			continue
		}
		if !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%v: stderr %q does not say %q", c.args, stderr.String(), c.stderr)
		}
	}
}
