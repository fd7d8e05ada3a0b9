package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/tensor"
)

// softwareWins are thresholds under which a software adapter wins, as a
// real GPU does under its defaults, scaled to the demo's sizes: training
// batches (32 digits, 2,048 pixels) stay on the CPU at creation, the
// convolutions of a batch (≥ 2¹⁸ multiply-adds) run on the GPU, and small
// elementwise work on the CPU stays there, so that ops keep meeting
// operands from the other device.
var softwareWins = tensor.Thresholds{Elementwise: 1 << 12, Reduction: 1 << 12, MatMul: 1 << 16, Window: 1 << 12, Creation: 1 << 12}

// webgpuAdapterNames lists the WebGPU adapters by device name; without
// one it skips, except under CI=true.
func webgpuAdapterNames(t *testing.T) []string {
	var names []string
	for _, a := range tensor.Adapters() {
		if strings.HasPrefix(a.Name, "webgpu:") {
			names = append(names, a.Name)
		}
	}
	if len(names) == 0 {
		if testdevice.CI() {
			t.Fatalf("CI=true requires a WebGPU adapter: %v", tensor.BackendErrors())
		}
		t.Skip("no WebGPU adapter")
	}
	return names
}

// TestTrainAuto trains the demo's CNN briefly under the Auto placement on
// each WebGPU adapter, made the accelerator with thresholds under which
// it wins: the path a real GPU takes under Auto. With the model on the
// GPU (-device webgpu:N), the training batches stay on the CPU and move
// with the first op; with the model on the CPU (a program that never
// names the GPU), the convolutions and the hidden layer go to the GPU and
// their results meet the CPU's parameters again in the next op and the
// optimizer step. The losses must be those of training on the CPU under
// Explicit: placement never changes values beyond float rounding.
func TestTrainAuto(t *testing.T) {
	all, err := loadDigits(digitsPath)
	require.NoError(t, err)
	const n = 256
	tiny := &data.Dataset{X: all.X[:n*64], Y: all.Y[:n], Shape: all.Shape}
	trainSet, testSet := tiny.Split(0.25, 3)
	c := config{epochs: 3, batchSize: 32, lr: 1e-2, seed: 5}
	cpu := testdevice.CPU(t)
	want, err := train(c, cpu, trainSet, testSet, io.Discard, io.Discard)
	require.NoError(t, err)
	for i := 1; i < len(want.losses); i++ {
		require.Less(t, want.losses[i], want.losses[i-1], "epoch %d on the CPU", i+1)
	}

	for _, name := range webgpuAdapterNames(t) {
		gpu, err := tensor.Open(name)
		require.NoError(t, err)
		for _, model := range []*tensor.Device{gpu, cpu} {
			t.Run(name+"/model-on-"+model.Name(), func(t *testing.T) {
				prev, prevGPU := tensor.SetPlacement(tensor.Auto), tensor.SetPlacementGPU(gpu)
				tensor.SetThresholds(softwareWins)
				t.Cleanup(func() {
					tensor.SetPlacement(prev)
					tensor.SetPlacementGPU(prevGPU)
					tensor.ResetThresholds()
				})
				tensor.ResetPlacementStats()

				var out bytes.Buffer
				res, err := train(c, model, trainSet, testSet, &out, io.Discard)
				require.NoError(t, err)
				st := tensor.PlacementStats()
				t.Logf("%splacement: %+v", out.String(), st)

				require.Len(t, res.losses, len(want.losses))
				for i := range want.losses {
					require.InDelta(t, want.losses[i], res.losses[i], 1e-3*want.losses[i], "epoch %d", i+1)
				}
				require.Equal(t, want.correct, res.correct, "held-out predictions")
				require.Positive(t, st.Ops[gpu.Name()], "ops ran on the GPU")
				require.Positive(t, st.Moves, "operands met across devices")
				if model == gpu {
					require.Positive(t, st.KeptOnCPU, "training batches stayed on the CPU")
				} else {
					require.Positive(t, st.Ops[cpu.Name()], "ops ran on the CPU")
				}
			})
		}
	}
}
