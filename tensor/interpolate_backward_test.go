package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// InterpolateBackward is Interpolate's adjoint: ⟨Interpolate(x), g⟩ =
// ⟨x, InterpolateBackward(g)⟩ for random x and g, in every mode, up- and
// downsampling by odd ratios (so that the transposed rows have different
// lengths), on non-contiguous inputs, on every device. The sums are taken
// in float64 on the host, independently of the kernels.
func TestInterpolateBackwardIsTheAdjoint(t *testing.T) {
	cases := []struct {
		in []int
		o  tensor.InterpolateOptions
	}{
		{[]int{2, 3, 5, 7}, tensor.InterpolateOptions{Size: []int{13, 4}, Mode: tensor.InterpolateBilinear}},
		{[]int{1, 2, 6, 5}, tensor.InterpolateOptions{Size: []int{3, 17}, Mode: tensor.InterpolateBilinear, AlignCorners: true}},
		{[]int{2, 2, 5, 4}, tensor.InterpolateOptions{Size: []int{9, 11}, Mode: tensor.InterpolateBicubic}},
		{[]int{1, 3, 7, 3}, tensor.InterpolateOptions{ScaleFactor: []float64{1.7}, Mode: tensor.InterpolateNearest}},
		{[]int{2, 3, 11}, tensor.InterpolateOptions{Size: []int{4}, Mode: tensor.InterpolateLinear}},
		{[]int{1, 2, 3, 4, 5}, tensor.InterpolateOptions{Size: []int{5, 3, 8}, Mode: tensor.InterpolateTrilinear}},
		{[]int{1, 1, 2, 3}, tensor.InterpolateOptions{Size: []int{2, 3000}, Mode: tensor.InterpolateBicubic}},
		// 2 → 70,000: a transposed row reads ~70,000 outputs, more than
		// hal.MaxResampleRow, so the gradient runs as split tables.
		{[]int{1, 1, 2}, tensor.InterpolateOptions{Size: []int{70000}, Mode: tensor.InterpolateLinear}},
	}
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for i, c := range cases {
			t.Run(fmt.Sprintf("%d-%s", i, c.o.Mode), func(t *testing.T) {
				g := tensor.NewGenerator(uint64(i + 1))
				// x is a transposed view of a contiguous tensor: the
				// kernel's strided path.
				shape := append([]int(nil), c.in...)
				r := len(shape)
				shape[r-1], shape[r-2] = shape[r-2], shape[r-1]
				base := g.Randn(dev, shape...)
				defer base.Release()
				x := base.Transpose(r-2, r-1)
				defer x.Release()
				y := tensor.Interpolate(x, c.o)
				defer y.Release()
				grad := g.Randn(dev, y.Shape()...)
				defer grad.Release()
				dx := tensor.InterpolateBackward(grad, c.in, c.o)
				defer dx.Release()
				require.Equal(t, c.in, dx.Shape())
				lhs, lmag := dot(testdevice.Float64s(t, y), testdevice.Float64s(t, grad))
				rhs, rmag := dot(testdevice.Float64s(t, x), testdevice.Float64s(t, dx))
				require.InDelta(t, lhs, rhs, 1e-5*(lmag+rmag), "⟨Interpolate(x), g⟩ vs ⟨x, InterpolateBackward(g)⟩")
			})
		}
	})
}

func dot(a, b []float64) (sum, mag float64) {
	for i := range a {
		sum += a[i] * b[i]
		mag += math.Abs(a[i] * b[i])
	}
	return sum, mag
}

// A grad of the wrong shape is a misuse naming the op and both shapes.
func TestInterpolateBackwardBadGrad(t *testing.T) {
	dev := testdevice.CPU(t)
	g := tensor.Zeros(dev, 1, 1, 4, 4)
	defer g.Release()
	err := tensor.Catch(func() {
		tensor.InterpolateBackward(g, []int{1, 1, 2, 2}, tensor.InterpolateOptions{Size: []int{5, 4}, Mode: tensor.InterpolateBilinear})
	})
	var te *tensor.Error
	require.ErrorAs(t, err, &te)
	for _, s := range []string{"InterpolateBackward", "[1 1 4 4]", "[1 1 5 4]", "[1 1 2 2]", "float32", "cpu"} {
		require.Contains(t, te.Error(), s)
	}
}
