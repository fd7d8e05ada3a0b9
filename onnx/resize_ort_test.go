package onnx

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// resizeORTGolden is testdata/onnx/resize_ort.json, which
// testdata/golden/gen_resize_ort.py writes: the inputs of
// resize_ort.onnx and, per Resize node, its attributes and ONNX Runtime's
// output.
type resizeORTGolden struct {
	ORT    string                     `json:"ort"`
	Inputs map[string]resizeORTTensor `json:"inputs"`
	Cases  []struct {
		Input, Output, Mode, Coord string
		Rounding                   *string
		Scales                     []float64
		Sizes                      []int
		Shape                      []int
		Data                       []float64
	} `json:"cases"`
}

type resizeORTTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func loadResizeORT(t *testing.T) (*Model, resizeORTGolden) {
	t.Helper()
	dir := filepath.Join("..", "testdata", "onnx")
	raw, err := os.ReadFile(filepath.Join(dir, "resize_ort.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g resizeORTGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(filepath.Join(dir, "resize_ort.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, g
}

// resizeORTCaseName names golden case k by its output and attributes.
func resizeORTCaseName(k int, mode, coord string, rounding *string, scales []float64, sizes []int) string {
	r := ""
	if rounding != nil {
		r = *rounding
	}
	return fmt.Sprintf("y%d_%s_%s_%s_scales%v_sizes%v", k, mode, coord, r, scales, sizes)
}

// TestResizeMatchesONNXRuntime runs every Resize of resize_ort.onnx (the
// modes PyTorch never exports: TestResizeSpecModes's cases, and cubic) on
// every device against ONNX Runtime's outputs, within 1e-4·max|ref| +
// 1e-5.
func TestResizeMatchesONNXRuntime(t *testing.T) {
	m, g := loadResizeORT(t)
	t.Logf("references from ONNX Runtime %s", g.ORT)
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		in := map[string]*tensor.Tensor{}
		for name, v := range g.Inputs {
			f := make([]float32, len(v.Data))
			for k, x := range v.Data {
				f[k] = float32(x)
			}
			in[name] = tensor.FromFloat32(dev, f, v.Shape...)
			defer in[name].Release()
		}
		out, err := m.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, y := range out {
			defer y.Release()
		}
		for k, c := range g.Cases {
			t.Run(resizeORTCaseName(k, c.Mode, c.Coord, c.Rounding, c.Scales, c.Sizes), func(t *testing.T) {
				y := out[c.Output]
				if got := y.Shape(); !equalInts(got, c.Shape) {
					t.Fatalf("shape %v, ONNX Runtime's %v", got, c.Shape)
				}
				got := testdevice.Float64s(t, y)
				maxRef := 0.0
				for _, v := range c.Data {
					maxRef = max(maxRef, math.Abs(v))
				}
				for i := range c.Data {
					if d := math.Abs(got[i] - c.Data[i]); !(d <= 1e-4*maxRef+1e-5) {
						t.Fatalf("element %d: got %v, ONNX Runtime %v", i, got[i], c.Data[i])
					}
				}
			})
		}
	})
}

// TestONNXRuntimeResizeAgreesWithSpec compares ONNX Runtime's outputs with
// the float64 reference of the spec (resizeSpecRef) for every nearest and
// linear case: the two references agree (ORT 1.30.0 matches the spec's
// formulas in every mode here), so TestResizeMatchesONNXRuntime checks the
// importer against an implementation independent of this package's
// reading of the spec.
func TestONNXRuntimeResizeAgreesWithSpec(t *testing.T) {
	_, g := loadResizeORT(t)
	for k, c := range g.Cases {
		if c.Mode == "cubic" {
			continue
		}
		t.Run(resizeORTCaseName(k, c.Mode, c.Coord, c.Rounding, c.Scales, c.Sizes), func(t *testing.T) {
			x := g.Inputs[c.Input]
			scales := c.Scales
			if scales == nil {
				scales = make([]float64, len(c.Sizes))
				for i := range scales {
					scales[i] = float64(c.Sizes[i]) / float64(x.Shape[i])
				}
			}
			rounding := ""
			if c.Rounding != nil {
				rounding = *c.Rounding
			}
			want := resizeSpecRef(x.Data, x.Shape, c.Shape, scales, c.Mode, c.Coord, rounding)
			bad := 0
			first := -1
			for i := range want {
				if math.Abs(want[i]-c.Data[i]) > 1e-5*(1+math.Abs(want[i])) {
					bad++
					if first < 0 {
						first = i
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d elements differ, first %d: ORT %v, spec %v", bad, len(want), first, c.Data[first], want[first])
			}
		})
	}
}
