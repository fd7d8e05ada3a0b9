package onnx_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx"
	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkExportedModels times Run plus a device sync for the exported
// models at batch 1 and 32 on the CPU and the first WebGPU adapter; the
// PyTorch peer is bench/peers/onnx_peers.py (same models, same shapes).
// WEBTENSOR_BENCH_WEBGPU=1 adds the first WebGPU adapter.
//
//	go test -run XXX -bench ExportedModels ./onnx
func BenchmarkExportedModels(b *testing.B) {
	devs := []*tensor.Device{testdevice.CPU(b)}
	if os.Getenv("WEBTENSOR_BENCH_WEBGPU") == "1" {
		devs = append(devs, testdevice.WebGPU(b))
	}
	for _, dev := range devs {
		for _, name := range exportedModels {
			m, err := onnx.LoadFile(filepath.Join("..", "testdata", "onnx", name+".onnx"))
			if err != nil {
				b.Fatal(err)
			}
			for _, batch := range []int{1, 32} {
				b.Run(fmt.Sprintf("%s/%s/batch%d", dev.Name(), name, batch), func(b *testing.B) {
					x := m.Inputs[0].RandomInput(dev, batch, rand.New(rand.NewPCG(1, 2)), 50)
					defer x.Release()
					in := map[string]*tensor.Tensor{m.Inputs[0].Name: x}
					for b.Loop() {
						out, err := m.Run(in)
						if err == nil {
							err = dev.Sync()
						}
						if err != nil {
							b.Fatal(err)
						}
						for _, t := range out {
							t.Release()
						}
					}
				})
			}
			m.Close()
		}
	}
}
