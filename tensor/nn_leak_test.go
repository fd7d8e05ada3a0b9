package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice/gcquiet"
)

// TestNNOpsReleaseTheirTemporaries runs each NN op once with the garbage
// collector off and requires the device's live bytes to return to where
// they were once the inputs and results are released: the composites free
// their intermediates themselves, not through cleanups.
func TestNNOpsReleaseTheirTemporaries(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		// The garbage collector off, after the cleanups of earlier tests'
		// leftovers have run.
		gcquiet.Quiet(t, func() int64 { return dev.Stats().LiveBytes })

		g := NewGenerator(1)
		x := g.Randn(dev, 2, 3, 6, 6)
		w := g.Randn(dev, 4, 3, 3, 3)
		b := g.Randn(dev, 4)
		rm, rv := Zeros(dev, 3), Ones(dev, 3)
		theta := g.Randn(dev, 2, 2, 3)
		pts := g.Randn(dev, 5, 3)
		w5, w1 := g.Randn(dev, 4, 1, 3, 3, 3), g.Randn(dev, 4, 2, 1, 1, 1)
		defer releaseAll(x, w, b, rm, rv, theta, pts, w5, w1)
		before := dev.Stats().LiveBytes

		ops := map[string]func() []*Tensor{
			"Conv2d":          func() []*Tensor { return []*Tensor{Conv2d(x, w, b, ConvOptions{Padding: [2]int{1, 1}})} },
			"ConvTranspose2d": func() []*Tensor { return []*Tensor{ConvTranspose2d(x, w.Transpose(0, 1), nil, ConvTransposeOptions{})} },
			"MaxPool2d": func() []*Tensor {
				v, i := MaxPool2d(x, PoolOptions{Kernel: [2]int{2, 2}})
				return []*Tensor{v, i}
			},
			"AvgPool2d": func() []*Tensor {
				return []*Tensor{AvgPool2d(x, PoolOptions{Kernel: [2]int{3, 3}, Padding: [2]int{1, 1}}, false)}
			},
			"AdaptiveAvgPool2d": func() []*Tensor { return []*Tensor{AdaptiveAvgPool2d(x, 2, 3)} },
			"BatchNorm":         func() []*Tensor { return []*Tensor{BatchNorm(x, rm, rv, nil, nil, true, 0.1, 1e-5)} },
			"LayerNorm":         func() []*Tensor { return []*Tensor{LayerNorm(x, []int{6, 6}, nil, nil, 1e-5)} },
			"Softmax":           func() []*Tensor { return []*Tensor{Softmax(x, 1)} },
			"Dropout":           func() []*Tensor { return []*Tensor{Dropout(x, 0.5, true, g)} },
			"RBFKernel":         func() []*Tensor { return []*Tensor{RBFKernel(pts, pts, 0.5)} },
			"AffineGrid":        func() []*Tensor { return []*Tensor{AffineGrid(theta, []int{2, 3, 4, 5}, false)} },
			// Conv3d over x read as [C, D, H, W] volumes, in both
			// compositions and the pointwise path.
			"Conv3d": func() []*Tensor {
				var out []*Tensor
				for _, v := range []Conv3dVariant{Conv3dStack, Conv3dTaps} {
					t.Setenv(EnvConv3d, string(v))
					out = append(out, Conv3d(x, w5, b, Conv3dOptions{Padding: [3]int{1, 1, 0}, Stride: [3]int{2, 1, 1}, Groups: 2}))
				}
				return append(out, Conv3d(x, w1, nil, Conv3dOptions{}))
			},
		}
		for name, op := range ops {
			results := op()
			for _, r := range results {
				require.NoError(t, r.Err(), name)
			}
			releaseAll(results...)
			require.Equal(t, before, dev.Stats().LiveBytes, "%s left temporaries behind", name)
		}
	})
}
