package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/onnx"
	"github.com/webtensor/webtensor/tensor"
)

// onnxModels are testdata/golden/gen_onnx.py's exported models, which
// bench/peers/onnx_peers.py (PyTorch eager) and bench/peers/ort
// (ONNX Runtime) time under the same case names: inference latency, one
// Run plus a device sync, at batch 1 and 32.
var onnxModels = []string{"mlp", "resnet18", "mobilenetv2", "transformer"}

// onnxModelPath finds testdata/onnx/<name>.onnx from the working folder
// or a folder above it: go run ./bench runs from the repository root, its
// tests from bench/.
func onnxModelPath(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "testdata", "onnx", name+".onnx")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no testdata/onnx/%s.onnx in the working folder or above (run from the repository)", name)
		}
		dir = up
	}
}

func onnxCases(quick bool) []benchCase {
	models, batches := onnxModels, []int{1, 32}
	if quick {
		models, batches = []string{"mlp", "resnet18"}, []int{1}
	}
	var cs []benchCase
	for _, name := range models {
		for _, batch := range batches {
			cs = append(cs, onnxCase(name, batch))
		}
	}
	return cs
}

func onnxCase(name string, batch int) benchCase {
	return benchCase{
		name:  fmt.Sprintf("onnx/%s-b%d", name, batch),
		group: "onnx-" + name, size: float64(batch), unit: schema.Ms,
		// Convolution networks at batch 32 take seconds per run on a
		// software adapter.
		heavy: batch > 1 && name != "mlp",
		tol:   1e-3,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			path, err := onnxModelPath(name)
			if err != nil {
				panic(err)
			}
			m, err := onnx.LoadFile(path)
			if err != nil {
				panic(err)
			}
			in := m.Inputs[0]
			x := in.RandomInput(dev, batch, rand.New(rand.NewPCG(1, 2)), 50) // token ids in [0, 50), as the peers use
			inputs := map[string]*tensor.Tensor{in.Name: x}
			out := m.Outputs[0].Name
			run := func() *tensor.Tensor {
				res, err := m.Run(inputs)
				if err != nil {
					panic(err)
				}
				for k, t := range res {
					if k != out {
						t.Release()
					}
				}
				return res[out]
			}
			return run, func() { x.Release(); m.Close() }
		},
	}
}
