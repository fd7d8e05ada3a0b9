package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// Run leaves nothing on the device but the cached weights and the outputs
// it returns: repeated runs do not grow memory, and once the outputs are
// released, Close (which frees only the cached weights) brings the device
// back to where it was, so no intermediate survived a run. QuietGC keeps
// the garbage collector from freeing leaked tensors behind the test's back.
func TestRunReleasesIntermediates(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		testdevice.QuietGC(t, dev)
		for _, name := range []string{"resnet18", "transformer"} {
			t.Run(name, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("..", "testdata", "onnx", name+".onnx"))
				if err != nil {
					t.Fatal(err)
				}
				m, err := Load(data, Options{})
				if err != nil {
					t.Fatal(err)
				}
				var x *tensor.Tensor
				if name == "transformer" {
					x = tensor.FromInt32(dev, make([]int32, 2*12), 2, 12)
				} else {
					x = tensor.Zeros(dev, 2, 3, 40, 40)
				}
				defer x.Release()
				live := func() int64 {
					if err := dev.Sync(); err != nil {
						t.Fatal(err)
					}
					return dev.Stats().LiveBytes
				}
				base := live()
				runOnce := func() (held int64) {
					out, err := m.Run(map[string]*tensor.Tensor{"input": x})
					if err != nil {
						t.Fatal(err)
					}
					held = live()
					for _, y := range out {
						held -= int64(y.Len() * 4)
						y.Release()
					}
					return held
				}
				first := runOnce()
				for range 3 {
					if again := runOnce(); again != first {
						t.Errorf("live bytes went from %d to %d between runs", first, again)
					}
				}
				m.Close()
				if after := live(); after != base {
					t.Errorf("after Close %d bytes live, %d before loading", after, base)
				}
			})
		}
	})
}
