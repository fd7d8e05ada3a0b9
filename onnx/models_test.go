package onnx_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/internal/npy"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx"
	"github.com/webtensor/webtensor/tensor"
)

// The models of testdata/onnx are exported by testdata/golden/gen_onnx.py
// (PyTorch 1.13, torchvision 0.14) with PyTorch's outputs for the stored
// inputs.
var exportedModels = []string{"mlp", "resnet18", "mobilenetv2", "transformer", "unet", "conv3d", "convtranspose"}

func readNpy(t testing.TB, path string) *npy.Array {
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

// upload puts an npy array on dev as the model takes it: floats as
// Float32, integers as Int32.
func upload(t testing.TB, dev *tensor.Device, a *npy.Array) *tensor.Tensor {
	t.Helper()
	if a.Float != nil {
		f := make([]float32, len(a.Float))
		for k, v := range a.Float {
			f[k] = float32(v)
		}
		return tensor.FromFloat32(dev, f, a.Shape...)
	}
	v := make([]int32, len(a.Int))
	for k, x := range a.Int {
		v[k] = int32(x)
	}
	return tensor.FromInt32(dev, v, a.Shape...)
}

// assertClose checks got against want within 1e-4·max|want| + 1e-5.
func assertClose(t testing.TB, got []float64, gotShape []int, want *npy.Array) {
	t.Helper()
	if len(gotShape) != len(want.Shape) {
		t.Fatalf("shape %v, want %v", gotShape, want.Shape)
	}
	for k := range gotShape {
		if gotShape[k] != want.Shape[k] {
			t.Fatalf("shape %v, want %v", gotShape, want.Shape)
		}
	}
	maxRef := 0.0
	for _, v := range want.Float {
		maxRef = max(maxRef, math.Abs(v))
	}
	tol := 1e-4*maxRef + 1e-5
	worst, at := 0.0, 0
	for k, v := range want.Float {
		if d := math.Abs(got[k] - v); d > worst || math.IsNaN(got[k]) {
			worst, at = d, k
			if math.IsNaN(got[k]) {
				worst = math.Inf(1)
			}
		}
	}
	if worst > tol {
		t.Fatalf("element %d: got %v, want %v (|diff| %.3g > tolerance %.3g)", at, got[at], want.Float[at], worst, tol)
	}
	t.Logf("max |diff| %.3g (tolerance %.3g)", worst, tol)
}

func TestExportedModelsMatchPyTorch(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for _, name := range exportedModels {
			t.Run(name, func(t *testing.T) {
				runExported(t, dev, filepath.Join("..", "testdata", "onnx"), name)
			})
		}
	})
}

// TestFullSizeModels runs the full-size ResNet-18 and MobileNetV2 that
// `make golden` writes locally (not committed) when they are there.
func TestFullSizeModels(t *testing.T) {
	dir := filepath.Join("..", "testdata", "onnx", "full")
	if _, err := os.Stat(filepath.Join(dir, "resnet18.onnx")); err != nil {
		t.Skip("full-size models not generated (run make golden)")
	}
	dev := testdevice.CPU(t)
	for _, name := range []string{"resnet18", "mobilenetv2"} {
		t.Run(name, func(t *testing.T) { runExported(t, dev, dir, name) })
	}
}

func runExported(t *testing.T, dev *tensor.Device, dir, name string) {
	m, err := onnx.LoadFile(filepath.Join(dir, name+".onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	input := readNpy(t, filepath.Join(dir, name+".input.npy"))
	want := readNpy(t, filepath.Join(dir, name+".output.npy"))
	runAndCompare(t, m, dev, input, want)
	if input.Shape[0] > 1 {
		// The batch axis is dynamic: the first sample alone gives the
		// first row of the reference.
		runAndCompare(t, m, dev, firstSample(input), firstSample(want))
	}
}

func runAndCompare(t *testing.T, m *onnx.Model, dev *tensor.Device, input, want *npy.Array) {
	t.Helper()
	in := upload(t, dev, input)
	defer in.Release()
	out, err := m.Run(map[string]*tensor.Tensor{"input": in})
	if err != nil {
		t.Fatal(err)
	}
	y := out["output"]
	defer y.Release()
	assertClose(t, testdevice.Float64s(t, y), y.Shape(), want)
}

// firstSample returns a[0:1] along the first axis.
func firstSample(a *npy.Array) *npy.Array {
	shape := append([]int{1}, a.Shape[1:]...)
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := &npy.Array{Shape: shape, Descr: a.Descr}
	if a.Float != nil {
		out.Float = a.Float[:n]
	} else {
		out.Int = a.Int[:n]
	}
	return out
}

// In Float16 the exported models match PyTorch's float32 outputs within
// 3e-2·max|ref| + 1e-3 (half precision keeps about 3 decimal digits), on
// every device that runs Float16.
func TestExportedModelsFloat16(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		if !tensor.Supports(dev, "Conv2d", tensor.Float16) || !tensor.Supports(dev, "LayerNorm", tensor.Float16) {
			t.Skipf("%v does not run Float16", dev)
		}
		for _, name := range exportedModels {
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join("..", "testdata", "onnx")
				m, err := onnx.LoadFile(filepath.Join(dir, name+".onnx"))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				in := upload(t, dev, readNpy(t, filepath.Join(dir, name+".input.npy")))
				defer in.Release()
				want := readNpy(t, filepath.Join(dir, name+".output.npy"))
				out, err := m.RunWith(map[string]*tensor.Tensor{"input": in}, onnx.RunOptions{DType: tensor.Float16})
				if err != nil {
					t.Fatal(err)
				}
				y := out["output"]
				defer y.Release()
				if y.DType() != tensor.Float16 {
					t.Fatalf("output is %v, want float16", y.DType())
				}
				got := testdevice.Float64s(t, y)
				maxRef, worst := 0.0, 0.0
				for k, v := range want.Float {
					maxRef = max(maxRef, math.Abs(v))
					worst = max(worst, math.Abs(got[k]-v))
				}
				if tol := 3e-2*maxRef + 1e-3; !(worst <= tol) {
					t.Fatalf("max |diff| %.3g > tolerance %.3g", worst, tol)
				}
				t.Logf("max |diff| %.3g (max |ref| %.3g)", worst, maxRef)
			})
		}
	})
}
