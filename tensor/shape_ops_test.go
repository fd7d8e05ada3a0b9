package tensor_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// Bad arguments to the shape ops panic with an *Error that names the op,
// the shapes, dtypes and device.
func TestShapeOpsErrors(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		x := tensor.Zeros(dev, 2, 3)
		img := tensor.Zeros(dev, 1, 2, 3, 4)
		ints := tensor.FromInt32(dev, []int32{1, 0, 1, 1, 0, 1}, 2, 3)
		for _, c := range []struct {
			name, op string
			f        func()
			want     []string
		}{
			{"einsum shapes", "Einsum", func() { tensor.Einsum("ij,jk->ik", x, tensor.Zeros(dev, 4, 5)) },
				[]string{`"ij,jk->ik"`, "[[2 3] [4 5]]", "subscript j", "float32", dev.Name()}},
			{"einsum syntax", "Einsum", func() { tensor.Einsum("i?->i", x) }, []string{`"i?->i"`, "invalid subscript"}},
			{"einsum operands", "Einsum", func() { tensor.Einsum("ij,jk", x) }, []string{"2 operand terms for 1 operands"}},
			{"einsum output", "Einsum", func() { tensor.Einsum("ij->k", x) }, []string{"output subscript k"}},
			{"einsum dtypes", "Einsum", func() { tensor.Einsum("ij,ij->ij", x, ints) }, []string{"float32", "int32"}},
			{"interpolate mode", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{Size: []int{2}, Mode: "area"})
			}, []string{`unknown mode "area"`, "[1 2 3 4]", "float32", dev.Name()}},
			{"interpolate rank", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{Size: []int{2}, Mode: tensor.InterpolateLinear})
			}, []string{"3-D input", "[1 2 3 4]"}},
			{"interpolate size and scale", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{Size: []int{2}, ScaleFactor: []float64{2}, Mode: tensor.InterpolateNearest})
			}, []string{"only one of size"}},
			{"interpolate neither", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{Mode: tensor.InterpolateBicubic})
			}, []string{"either a size or a scale factor"}},
			{"interpolate align nearest", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{Size: []int{2}, Mode: tensor.InterpolateNearest, AlignCorners: true})
			}, []string{"alignCorners"}},
			{"interpolate sizes", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{Size: []int{2, 3, 4}, Mode: tensor.InterpolateBilinear})
			}, []string{"1 or 2 values"}},
			{"interpolate empty output", "Interpolate", func() {
				tensor.Interpolate(img, tensor.InterpolateOptions{ScaleFactor: []float64{0.1}, Mode: tensor.InterpolateBilinear})
			}, []string{"greater than 0"}},
			{"masked fill dtype", "MaskedFill", func() { x.MaskedFill(x, 1) }, []string{"Int32", "float32", "[2 3]"}},
			{"masked fill shape", "MaskedFill", func() { x.MaskedFill(tensor.FromInt32(dev, []int32{1, 0}, 2), 1) }, []string{"[2]", "[2 3]"}},
			{"masked fill nan int", "MaskedFill", func() { ints.MaskedFill(ints, math.NaN()) }, []string{"NaN"}},
			{"masked select shape", "MaskedSelect", func() { x.MaskedSelect(tensor.FromInt32(dev, []int32{1, 0}, 2)) }, []string{"[2 3]", "[2]"}},
			{"tril rank", "Tril", func() { tensor.Zeros(dev, 3).Tril(0) }, []string{"rank ≥ 2", "[3]"}},
			{"roll lengths", "Roll", func() { x.Roll([]int{1, 2}, 0) }, []string{"[1 2]", "[0]", "[2 3]"}},
			{"roll flat", "Roll", func() { x.Roll([]int{1, 2}) }, []string{"exactly one shift"}},
			{"roll dim", "Roll", func() { x.Roll([]int{1}, 2) }, []string{"2"}},
			{"flip repeat", "Flip", func() { x.Flip(0, -2) }, []string{"twice", "[2 3]"}},
			{"flip dim", "Flip", func() { x.Flip(5) }, []string{"5"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				err := tensor.Catch(c.f)
				var te *tensor.Error
				require.ErrorAs(t, err, &te)
				require.Equal(t, c.op, te.Op, "%v", err)
				for _, w := range c.want {
					require.Contains(t, err.Error(), w)
				}
			})
		}
		// Int32 images are not interpolated: the op is undefined there.
		err := tensor.Catch(func() {
			tensor.Interpolate(tensor.FromInt32(dev, make([]int32, 8), 1, 1, 2, 4), tensor.InterpolateOptions{Size: []int{3}, Mode: tensor.InterpolateNearest})
		})
		require.True(t, errors.Is(err, hal.ErrUnsupported), "%v", err)
	})
}

// The results of Roll, Flip, Tril and MaskedFill are new tensors, never
// views of their input, and they keep the input's values for every dtype
// the device runs, Int32 included (a float64 reference in Go).
func TestShapeOpsInt32(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		r := rand.New(rand.NewPCG(19, 2))
		data := make([]int32, 5*7)
		for i := range data {
			data[i] = int32(r.IntN(100) - 50)
		}
		x := tensor.FromInt32(dev, data, 5, 7)
		at := func(i, j int) int32 { return data[i*7+j] }
		got := func(y *tensor.Tensor) []int32 {
			v, err := y.Int32s()
			require.NoError(t, err)
			return v
		}
		flip, roll, tril := got(x.Flip(1)), got(x.Roll([]int{-2}, 0)), got(x.Tril(-1))
		fill := got(x.MaskedFill(x.GtScalar(0), 7))
		for i := range 5 {
			for j := range 7 {
				require.Equal(t, at(i, 6-j), flip[i*7+j])
				require.Equal(t, at((i+2)%5, j), roll[i*7+j])
				want := at(i, j)
				if j-i > -1 {
					want = 0
				}
				require.Equal(t, want, tril[i*7+j])
				want = at(i, j)
				if want > 0 {
					want = 7
				}
				require.Equal(t, want, fill[i*7+j])
			}
		}
	})
}

// Float16 runs the shape ops wherever the device computes in float16
// (Interpolate in Float32, rounding once): the results agree with the
// Float32 ones to float16's precision.
func TestShapeOpsFloat16(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		if !tensor.Supports(dev, "Interpolate", tensor.Float16) {
			t.Skip("no float16 on this device")
		}
		g := tensor.NewGenerator(7)
		x := g.Randn(dev, 2, 3, 5, 7)
		h := x.Cast(tensor.Float16)
		x = h.Cast(tensor.Float32) // the same values in both dtypes
		for name, f := range map[string]func(*tensor.Tensor) *tensor.Tensor{
			"Interpolate": func(x *tensor.Tensor) *tensor.Tensor {
				return tensor.Interpolate(x, tensor.InterpolateOptions{Size: []int{9, 4}, Mode: tensor.InterpolateBicubic})
			},
			"Einsum":     func(x *tensor.Tensor) *tensor.Tensor { return tensor.Einsum("nchw,nchv->ncwv", x, x) },
			"Tril":       func(x *tensor.Tensor) *tensor.Tensor { return x.Tril(1) },
			"Roll":       func(x *tensor.Tensor) *tensor.Tensor { return x.Roll([]int{3}, -1) },
			"Flip":       func(x *tensor.Tensor) *tensor.Tensor { return x.Flip(1, 3) },
			"MaskedFill": func(x *tensor.Tensor) *tensor.Tensor { return x.MaskedFill(x.GtScalar(0.5), -1) },
		} {
			if !tensor.Supports(dev, name, tensor.Float16) {
				continue
			}
			want := testdevice.Float64s(t, f(x))
			got := f(h)
			require.Equal(t, tensor.Float16, got.DType(), name)
			for i, v := range testdevice.Float64s(t, got) {
				require.InDelta(t, want[i], v, 2e-3*(1+math.Abs(want[i]))*4, "%s[%d]", name, i)
			}
		}
	})
}

// Einsum adds no kernel to the MatMul it lowers to, and Tril makes its mask
// on the device with the same kernels at any size (no per-element host
// work): counted in the device's dispatches, with no host reads.
func TestShapeOpsKernelCounts(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		count := func(f func() *tensor.Tensor) (dispatches, reads int64) {
			require.NoError(t, dev.Sync())
			before := dev.Stats()
			r := f()
			require.NoError(t, dev.Sync())
			after := dev.Stats()
			r.Release()
			return after.Dispatches - before.Dispatches, after.HostReads - before.HostReads
		}
		g := tensor.NewGenerator(3)
		x, y := g.Randn(dev, 4, 33, 17), g.Randn(dev, 4, 17, 9)
		einsum, _ := count(func() *tensor.Tensor { return tensor.Einsum("bij,bjk->bik", x, y) })
		matmul, _ := count(func() *tensor.Tensor { return tensor.MatMul(x, y) })
		require.Equal(t, matmul, einsum, "dispatches of Einsum and of MatMul")
		small, big := tensor.Ones(dev, 64, 64), tensor.Ones(dev, 1024, 1024)
		smallN, smallReads := count(func() *tensor.Tensor { return small.Tril(0) })
		bigN, bigReads := count(func() *tensor.Tensor { return big.Tril(0) })
		require.Equal(t, smallN, bigN, "Tril's dispatches at 64² and 1024²")
		require.Zero(t, smallReads+bigReads, "Tril reads nothing back")
	})
}

// The shape ops are placed once, at their entry, and run whole on one
// device under every policy (TestPlacementCompositesWhole).
func init() {
	compositeCases = append(compositeCases,
		compositeCase{"Interpolate", "elementwise", []operand{shape(2, 3, 5, 4)}, func(in []*tensor.Tensor) *tensor.Tensor {
			return tensor.Interpolate(in[0], tensor.InterpolateOptions{Size: []int{7, 9}, Mode: tensor.InterpolateBicubic})
		}},
		compositeCase{"Tril", "elementwise", []operand{shape(3, 6, 5)}, func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Tril(-1) }},
		compositeCase{"Roll", "elementwise", []operand{shape(4, 7)}, func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Roll([]int{2, -3}, 0, 1) }},
		compositeCase{"Flip", "elementwise", []operand{shape(4, 7)}, func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Flip(0, 1) }},
	)
}
