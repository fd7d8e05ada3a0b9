package checkpoint_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/checkpoint"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

func ExampleWrite() {
	dev, _ := tensor.Open("cpu")
	w := tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	steps := tensor.FromInt32(dev, []int32{100})
	defer w.Release()
	defer steps.Release()

	var buf bytes.Buffer
	err := checkpoint.Write(&buf, map[string]*tensor.Tensor{"weight": w, "steps": steps},
		map[string]string{"format": "pt"})
	if err != nil {
		panic(err)
	}
	// The 8-byte length, then the JSON header, padded to 8 bytes.
	n := binary.LittleEndian.Uint64(buf.Bytes())
	fmt.Printf("%q\n", bytes.TrimRight(buf.Bytes()[8:8+n], " "))

	tensors, meta, err := checkpoint.Read(&buf, dev)
	if err != nil {
		panic(err)
	}
	got, _ := tensors["weight"].Float32s()
	fmt.Println(tensors["weight"].Shape(), got, meta["format"])
	for _, t := range tensors {
		t.Release()
	}
	// Output:
	// "{\"__metadata__\":{\"format\":\"pt\"},\"steps\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]},\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[4,28]}}"
	// [2 3] [1 2 3 4 5 6] pt
}

func ExampleSave() {
	dev, _ := tensor.Open("cpu")
	model := nn.NewSequential(nn.NewLinear(dev, 4, 8, true, tensor.NewGenerator(1)), nn.ReLU{},
		nn.NewLinear(dev, 8, 2, true, tensor.NewGenerator(2)))
	defer nn.Release(model)
	opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 1e-3})

	dir, _ := os.MkdirTemp("", "checkpoint")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	if err := checkpoint.Save(path, model, opt); err != nil {
		panic(err)
	}

	// A model of the same shape, initialized differently, takes the weights.
	restored := nn.NewSequential(nn.NewLinear(dev, 4, 8, true, tensor.NewGenerator(3)), nn.ReLU{},
		nn.NewLinear(dev, 8, 2, true, tensor.NewGenerator(4)))
	defer nn.Release(restored)
	opt2 := optim.NewAdam(restored.Parameters(), optim.AdamConfig{})
	if err := checkpoint.Load(path, restored, opt2); err != nil {
		panic(err)
	}
	a, _ := model.Parameters()[0].Value.Float32s()
	b, _ := restored.Parameters()[0].Value.Float32s()
	fmt.Println(model.Parameters()[0].Name, a[0] == b[0], opt2.LR())

	// A model of another shape does not.
	other := nn.NewSequential(nn.NewLinear(dev, 4, 3, true, tensor.NewGenerator(5)))
	defer nn.Release(other)
	fmt.Println(checkpoint.Load(path, other, nil) != nil)
	// Output:
	// 0.weight true 0.001
	// true
}

// A model and its optimizer in two streams, with user metadata: the model
// stream is a plain state_dict that PyTorch loads, and the optimizer's
// state travels beside it.
func ExampleWriteModule() {
	dev, _ := tensor.Open("cpu")
	model := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(1))
	defer nn.Release(model)
	opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 1e-3})

	var modelBuf, optBuf bytes.Buffer
	meta := map[string]string{"epoch": "7", "config": `{"hidden":2}`}
	if err := checkpoint.WriteModule(&modelBuf, model, meta); err != nil {
		panic(err)
	}
	if err := checkpoint.WriteOptimizer(&optBuf, opt, meta); err != nil {
		panic(err)
	}

	tensors, _, _ := checkpoint.Read(bytes.NewReader(modelBuf.Bytes()), dev)
	fmt.Println(len(tensors), "tensors:", tensors["weight"].Shape(), tensors["bias"].Shape())
	for _, t := range tensors {
		t.Release()
	}
	// Output: 2 tensors: [2 3] [2]
}

func ExampleReadModule() {
	dev, _ := tensor.Open("cpu")
	model := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(1))
	defer nn.Release(model)
	var buf bytes.Buffer
	_ = checkpoint.WriteModule(&buf, model, map[string]string{"epoch": "7"})

	// A model of the same shape, initialized differently, takes the
	// weights and gets the metadata back.
	restored := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(2))
	defer nn.Release(restored)
	meta, err := checkpoint.ReadModule(&buf, restored)
	if err != nil {
		panic(err)
	}
	a, _ := model.Weight.Float32s()
	b, _ := restored.Weight.Float32s()
	fmt.Println(meta["epoch"], a[0] == b[0])
	// Output: 7 true
}

func ExampleReadOptimizer() {
	dev, _ := tensor.Open("cpu")
	model := nn.NewLinear(dev, 3, 2, true, tensor.NewGenerator(1))
	defer nn.Release(model)
	opt := optim.NewAdam(model.Parameters(), optim.AdamConfig{LR: 0.02})
	var buf bytes.Buffer
	_ = checkpoint.WriteOptimizer(&buf, opt, map[string]string{"step": "0"})

	resumed := optim.NewAdam(model.Parameters(), optim.AdamConfig{})
	meta, err := checkpoint.ReadOptimizer(&buf, resumed)
	if err != nil {
		panic(err)
	}
	fmt.Println(meta, resumed.LR())
	// Output: map[step:0] 0.02
}
