package tensor_test

// The ops of issue 19's shape family (Einsum, Interpolate, MaskedFill,
// MaskedSelect, Tril, Triu, Roll, Flip) against PyTorch 1.13:
// testdata/golden/shape/ops.json, written by
// testdata/golden/gen_shape_ops.py (`make golden`). Every case runs on the
// CPU and on every WebGPU adapter; graph's twin test checks the gradients.

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/shapegolden"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// runShapeCase calls the case's op on the inputs.
func runShapeCase(c shapegolden.Case, in []*tensor.Tensor) *tensor.Tensor {
	switch c.Op {
	case "einsum":
		var eq string
		c.Arg("equation", &eq)
		return tensor.Einsum(eq, in...)
	case "interpolate":
		return tensor.Interpolate(in[0], InterpolateArgs(c))
	case "masked_fill":
		var v shapegolden.Number
		c.Arg("value", &v)
		return in[0].MaskedFill(in[1], float64(v))
	case "masked_select":
		return in[0].MaskedSelect(in[1])
	case "tril", "triu":
		var d int
		c.Arg("diagonal", &d)
		if c.Op == "tril" {
			return in[0].Tril(d)
		}
		return in[0].Triu(d)
	case "roll":
		var shifts, dims []int
		c.Arg("shifts", &shifts)
		c.Arg("dims", &dims)
		return in[0].Roll(shifts, dims...)
	case "flip":
		var dims []int
		c.Arg("dims", &dims)
		return in[0].Flip(dims...)
	}
	panic("unknown op " + c.Op)
}

// InterpolateArgs maps F.interpolate's keyword arguments.
func InterpolateArgs(c shapegolden.Case) tensor.InterpolateOptions {
	var o tensor.InterpolateOptions
	var mode string
	c.Arg("mode", &mode)
	o.Mode = tensor.InterpolateMode(mode)
	c.Arg("align_corners", &o.AlignCorners)
	if c.Has("size") {
		c.Arg("size", &o.Size)
	}
	if c.Has("scale_factor") {
		c.Arg("scale_factor", &o.ScaleFactor)
	}
	if c.Has("recompute_scale_factor") {
		c.Arg("recompute_scale_factor", &o.RecomputeScaleFactor)
	}
	return o
}

// shapeTol is the error bound of a float32 result: the cases accumulate at
// most a few tens of products of values in [−2, 2].
func shapeTol(dtype tensor.DType, want float64) float64 {
	if dtype == tensor.Float64 {
		return 1e-12 * (1 + math.Abs(want))
	}
	return 2e-5 * (1 + math.Abs(want))
}

func checkValues(t *testing.T, what string, dtype tensor.DType, want []float64, got []float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		w, g := want[i], got[i]
		if math.IsNaN(w) || math.IsInf(w, 0) {
			require.True(t, math.IsNaN(w) && math.IsNaN(g) || w == g, "%s[%d] = %v, want %v", what, i, g, w)
			continue
		}
		require.InDelta(t, w, g, shapeTol(dtype, w), "%s[%d]", what, i)
	}
}

func TestShapeOpsGolden(t *testing.T) {
	cases, err := shapegolden.Load()
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				if slices.ContainsFunc(c.Inputs, func(in shapegolden.Input) bool { return in.DType == "float64" }) &&
					!tensor.Supports(dev, "Copy", tensor.Float64) && !tensor.Supports(dev, "Einsum", tensor.Float64) {
					t.Skip("the device holds no float64")
				}
				var in []*tensor.Tensor
				for _, s := range c.Inputs {
					in = append(in, s.Tensor(dev))
				}
				out := runShapeCase(c, in)
				require.Equal(t, c.Out.Shape, out.Shape())
				checkValues(t, "out", out.DType(), shapegolden.Floats(c.Out.Data), testdevice.Float64s(t, out))
			})
		}
	})
}
