package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// TestTrainStepsReturnTheirFirstLoss: a training case's first step
// returns its loss, the timed ones nothing, so that checkResult compares
// the WebGPU device's first loss with the CPU's: it passes on every
// WebGPU device, and a loss 1% off fails it.
func TestTrainStepsReturnTheirFirstLoss(t *testing.T) {
	for _, bc := range trainCases(true)[:2] { // the MLP and CNN steps
		t.Run(bc.name, func(t *testing.T) {
			testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
				iter, free := bc.setup(dev)
				defer free()
				first := iter()
				require.NotNil(t, first)
				loss := testdevice.Float64s(t, first)
				shape := first.Shape()
				first.Release()
				require.Len(t, loss, 1)
				// Cross-entropy of 10 classes from small random weights:
				// near ln 10.
				require.InDelta(t, math.Log(10), loss[0], 1.5)
				require.Nil(t, iter(), "a timed step keeps nothing")
				if dev.Info().Backend != "cpu" {
					again, freeAgain := bc.setup(dev)
					defer freeAgain()
					got := again()
					require.NoError(t, checkResult(bc, got))
					got.Release()
					off := tensor.FromFloat32(dev, []float32{float32(loss[0] * 1.01)}, shape...)
					defer off.Release()
					require.Error(t, checkResult(bc, off), "a loss 1%% off")
				}
			})
		})
	}
}
