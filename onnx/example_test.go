package onnx_test

import (
	"fmt"
	"path/filepath"

	"github.com/webtensor/webtensor/onnx"
	"github.com/webtensor/webtensor/tensor"
)

// Load the exported MLP and run it on the CPU on a batch of zeros.
func ExampleModel_Run() {
	m, err := onnx.LoadFile(filepath.Join("..", "testdata", "onnx", "mlp.onnx"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	fmt.Println(m.Inputs[0], "→", m.Outputs[0])
	fmt.Println("parameters:", m.ParameterCount())

	dev, _ := tensor.Open("cpu")
	x := tensor.Zeros(dev, 4, 20) // any batch size
	defer x.Release()
	out, err := m.Run(map[string]*tensor.Tensor{"input": x})
	if err != nil {
		fmt.Println(err)
		return
	}
	y := out["output"]
	defer y.Release()
	fmt.Println("output shape:", y.Shape())

	// A wrong input name is an error that names what the model takes.
	_, err = m.Run(map[string]*tensor.Tensor{"x": x})
	fmt.Println(err)
	// Output:
	// input FLOAT[batch, 20] → output FLOAT[batch, 7]
	// parameters: 3655
	// output shape: [4 7]
	// onnx: Run: unknown inputs ["x"], missing inputs ["input"]; the model takes input FLOAT[batch, 20]
}
