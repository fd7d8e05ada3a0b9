package tensor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAffineGrid(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, align := range []bool{false, true} {
			for _, size := range [][]int{{2, 3, 4, 5}, {1, 1, 1, 3}, {3, 2, 6, 1}} {
				name := fmt.Sprintf("size %v align %v", size, align)
				t.Run(name, func(t *testing.T) {
					theta, ts := nnInput(t, dev, nnRand(t), size[0], 2, 3)
					want := refAffineGrid(ts, size[0], size[2], size[3], align)
					grid := AffineGrid(theta, size, align)
					require.Equal(t, []int{size[0], size[2], size[3], 2}, grid.Shape())
					nnRequireClose(t, name, want, nnRead(t, grid), nnValueTol(want))
				})
			}
		}
	})
}

func TestGridSample(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		const n, c, h, w, oh, ow = 2, 3, 5, 4, 3, 6
		for _, padding := range []GridPadding{GridZeros, GridBorder} {
			for _, align := range []bool{false, true} {
				name := fmt.Sprintf("%v align %v", padding, align)
				t.Run(name, func(t *testing.T) {
					rng := nnRand(t)
					x, xs := nnInput(t, dev, rng, n, c, h, w)
					// Reach past [−1, 1] so that the padding matters.
					gdata := nnUniform(rng, n*oh*ow*2, -1.3, 1.3)
					grid := FromFloat32(dev, gdata, n, oh, ow, 2)
					defer grid.Release()
					want := refGridSample(xs, n, c, h, w, nnFloat64s(gdata), oh, ow, padding == GridBorder, align)
					y := GridSample(x, grid, padding, align)
					require.Equal(t, []int{n, c, oh, ow}, y.Shape())
					nnRequireClose(t, name, want, nnRead(t, y), func(int) float64 { return nnTolerance.sample })
				})
			}
		}
	})
}

// TestAffineGridSampleIdentity: the identity transform with align_corners
// samples every pixel centre exactly, so it reproduces the input.
func TestAffineGridSampleIdentity(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, align := range []bool{false, true} {
			x, xs := nnInput(t, dev, nnRand(t), 2, 2, 4, 5)
			theta := FromFloat32(dev, []float32{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0}, 2, 2, 3)
			grid := AffineGrid(theta, []int{2, 2, 4, 5}, align)
			got := nnRead(t, GridSample(x, grid, GridZeros, align))
			releaseAll(theta, grid)
			nnRequireClose(t, fmt.Sprint("identity align ", align), xs, got, func(int) float64 { return nnTolerance.sample })
		}
	})
}
