// Package shapegolden loads testdata/golden/shape/ops.json, the PyTorch
// 1.13 golden cases of einsum, interpolate, masked_fill, masked_select,
// tril/triu, roll and flip that testdata/golden/gen_shape_ops.py writes,
// and makes their inputs on a device. The tests of package tensor and of
// package graph both read it.
package shapegolden

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/tensor"
)

// Number is a JSON number or one of "nan", "inf", "-inf".
type Number float64

func (n *Number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"nan"`:
		*n = Number(math.NaN())
	case `"inf"`:
		*n = Number(math.Inf(1))
	case `"-inf"`:
		*n = Number(math.Inf(-1))
	default:
		var f float64
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		*n = Number(f)
	}
	return nil
}

// Input is one operand: a contiguous base, optionally viewed transposed.
type Input struct {
	DType     string   `json:"dtype"`
	Shape     []int    `json:"shape"`
	Data      []Number `json:"data"`
	Transpose []int    `json:"transpose"`
}

// Output is an expected result.
type Output struct {
	Shape []int    `json:"shape"`
	Data  []Number `json:"data"`
}

// Case is one golden case.
type Case struct {
	Name   string                     `json:"name"`
	Op     string                     `json:"op"`
	Args   map[string]json.RawMessage `json:"args"`
	Inputs []Input                    `json:"inputs"`
	Out    Output                     `json:"out"`
	GOut   []Number                   `json:"gout"`
	Grads  [][]Number                 `json:"grads"`
}

// Arg decodes argument name into v, panicking on a malformed file.
func (c Case) Arg(name string, v any) {
	raw, ok := c.Args[name]
	if !ok {
		panic(fmt.Sprintf("case %s: no argument %q", c.Name, name))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		panic(fmt.Sprintf("case %s: argument %q: %v", c.Name, name, err))
	}
}

// Has reports whether the case has argument name (and it is not null).
func (c Case) Has(name string) bool {
	raw, ok := c.Args[name]
	return ok && string(raw) != "null"
}

// Load reads the cases.
func Load() ([]Case, error) {
	// Tests run in their package's folder, one level below the module
	// root (tensor, graph), and so does a test binary built with
	// -trimpath and run elsewhere (../shared/gpu), where this file's own
	// path is a module path, not a folder.
	path := filepath.Join("..", "testdata", "golden", "shape", "ops.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Torch string `json:"torch"`
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Cases, nil
}

// Floats returns numbers as float64s.
func Floats(ns []Number) []float64 {
	out := make([]float64, len(ns))
	for i, n := range ns {
		out[i] = float64(n)
	}
	return out
}

// Tensor makes the input on dev: the base tensor, transposed when the case
// says so (a non-contiguous view).
func (in Input) Tensor(dev *tensor.Device) *tensor.Tensor {
	var t *tensor.Tensor
	switch in.DType {
	case "float32":
		d := make([]float32, len(in.Data))
		for i, v := range in.Data {
			d[i] = float32(v)
		}
		t = tensor.FromFloat32(dev, d, in.Shape...)
	case "float64":
		t = tensor.FromFloat64(dev, Floats(in.Data), in.Shape...)
	case "int32":
		d := make([]int32, len(in.Data))
		for i, v := range in.Data {
			d[i] = int32(v)
		}
		t = tensor.FromInt32(dev, d, in.Shape...)
	default:
		panic("shapegolden: dtype " + in.DType)
	}
	if in.Transpose == nil {
		return t
	}
	defer t.Release()
	return t.Transpose(in.Transpose[0], in.Transpose[1])
}
