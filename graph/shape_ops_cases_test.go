package graph

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/shapegolden"
	"github.com/webtensor/webtensor/tensor"
)

// Gradient cases of issue 19's shape family, checked against finite
// differences (TestGradCheck, float64 on the CPU, first and second order)
// and across devices (TestGradsAgreeAcrossDevices). Odd sizes, views and
// broadcasting throughout.
func init() {
	bilinear := tensor.InterpolateOptions{Size: []int{7, 4}, Mode: tensor.InterpolateBilinear}
	gradCases = append(gradCases,
		gradCase{name: "Einsum/matmul", inputs: []input{{shape: []int{3, 5}}, {shape: []int{5, 2}}},
			f: func(in []*Value) *Value { return Einsum("ij,jk->ik", in[0], in[1]) }},
		gradCase{name: "Einsum/trace and diagonal", inputs: []input{{shape: []int{4, 4}}, {shape: []int{4, 3}}},
			f: func(in []*Value) *Value { return Einsum("ii,ij->j", in[0], in[1]) }},
		gradCase{name: "Einsum/ellipsis broadcast transposed", inputs: []input{{shape: []int{2, 1, 4, 3}}, {shape: []int{3, 3, 5}}},
			f: func(in []*Value) *Value { return Einsum("...ji,...jk->...ik", in[0].Transpose(2, 3), in[1]) }},
		gradCase{name: "Einsum/three operands", inputs: []input{{shape: []int{3, 4}}, {shape: []int{2, 4, 5}}, {shape: []int{3, 5}}},
			f: func(in []*Value) *Value { return Einsum("bn,anm,bm->ba", in[0], in[1], in[2]) }},
		gradCase{name: "Interpolate/nearest", inputs: []input{{shape: []int{1, 2, 3, 5}}}, firstOrder: true,
			f: func(in []*Value) *Value {
				return Interpolate(in[0], tensor.InterpolateOptions{ScaleFactor: []float64{1.7}, Mode: tensor.InterpolateNearest})
			}},
		gradCase{name: "Interpolate/bilinear", inputs: []input{{shape: []int{2, 1, 5, 3}}},
			f: func(in []*Value) *Value { return Interpolate(in[0], bilinear) }},
		gradCase{name: "Interpolate/bilinear align corners view", inputs: []input{{shape: []int{1, 2, 3, 5}}},
			f: func(in []*Value) *Value {
				o := bilinear
				o.AlignCorners = true
				return Interpolate(in[0].Transpose(2, 3), o)
			}},
		gradCase{name: "Interpolate/bicubic", inputs: []input{{shape: []int{1, 1, 4, 5}}}, firstOrder: true,
			f: func(in []*Value) *Value {
				return Interpolate(in[0], tensor.InterpolateOptions{ScaleFactor: []float64{1.5, 0.7}, Mode: tensor.InterpolateBicubic})
			}},
		gradCase{name: "Interpolate/linear", inputs: []input{{shape: []int{2, 3, 5}}},
			f: func(in []*Value) *Value {
				return Interpolate(in[0], tensor.InterpolateOptions{Size: []int{9}, Mode: tensor.InterpolateLinear, AlignCorners: true})
			}},
		gradCase{name: "MaskedFill/broadcast", inputs: []input{{shape: []int{3, 4, 5}}, {shape: []int{4, 1}, index: 2}},
			f: func(in []*Value) *Value { return in[0].MaskedFill(in[1], -2.5).Square() }},
		gradCase{name: "MaskedSelect/broadcast input", inputs: []input{{shape: []int{4, 1}}, {shape: []int{3, 4, 5}, index: 2}},
			f: func(in []*Value) *Value { return in[0].MaskedSelect(in[1]).Square() }},
		gradCase{name: "MaskedSelect/view", inputs: []input{{shape: []int{5, 3}}, {shape: []int{3, 5}, index: 2}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).MaskedSelect(in[1]).Square() }},
		gradCase{name: "Tril/batch", inputs: []input{{shape: []int{2, 3, 5}}},
			f: func(in []*Value) *Value { return in[0].Tril(1).Square() }},
		gradCase{name: "Triu/view", inputs: []input{{shape: []int{5, 3}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Triu(-1).Square() }},
		gradCase{name: "Roll/dims", inputs: []input{{shape: []int{3, 4, 5}}},
			f: func(in []*Value) *Value { return in[0].Roll([]int{2, -7}, 0, 2).Square() }},
		gradCase{name: "Roll/flattened", inputs: []input{{shape: []int{3, 5}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Roll([]int{4}).Square() }},
		gradCase{name: "Flip", inputs: []input{{shape: []int{3, 4, 5}}},
			f: func(in []*Value) *Value { return in[0].Flip(0, -1).Square() }},
	)
}

// runShapeCase calls the golden case's op on values.
func runShapeCase(c shapegolden.Case, in []*Value) *Value {
	switch c.Op {
	case "einsum":
		var eq string
		c.Arg("equation", &eq)
		return Einsum(eq, in...)
	case "interpolate":
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
		return Interpolate(in[0], o)
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

// TestShapeOpsGoldenGrads checks the recorded ops' results and gradients
// (the vector-Jacobian product with the golden output gradient) against
// PyTorch's on every device.
func TestShapeOpsGoldenGrads(t *testing.T) {
	cases, err := shapegolden.Load()
	require.NoError(t, err)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				if slices.ContainsFunc(c.Inputs, func(in shapegolden.Input) bool { return in.DType == "float64" }) &&
					!tensor.Supports(dev, "Einsum", tensor.Float64) {
					t.Skip("the device holds no float64")
				}
				var in []*Value
				for _, s := range c.Inputs {
					x := s.Tensor(dev)
					if x.DType().IsFloat() {
						in = append(in, Param(x))
					} else {
						in = append(in, Constant(x))
					}
				}
				out := runShapeCase(c, in)
				require.Equal(t, c.Out.Shape, out.Shape())
				dtype := out.DType()
				checkShapeValues(t, "out", dtype, shapegolden.Floats(c.Out.Data), read(t, out))
				if c.GOut == nil {
					return
				}
				seed := shapegolden.Input{DType: c.Inputs[0].DType, Shape: c.Out.Shape, Data: c.GOut}
				var wrt []*Value
				var want [][]float64
				for i, g := range c.Grads {
					if g != nil {
						wrt = append(wrt, in[i])
						want = append(want, shapegolden.Floats(g))
					}
				}
				grads, err := Grad([]*Value{out}, wrt, []*Value{Constant(seed.Tensor(dev))})
				require.NoError(t, err)
				for i, g := range grads {
					checkShapeValues(t, "grad", dtype, want[i], read(t, g))
				}
			})
		}
	})
}

func checkShapeValues(t *testing.T, what string, dtype tensor.DType, want, got []float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		w, g := want[i], got[i]
		if math.IsNaN(w) || math.IsInf(w, 0) {
			require.True(t, math.IsNaN(w) && math.IsNaN(g) || w == g, "%s[%d] = %v, want %v", what, i, g, w)
			continue
		}
		tol := 2e-5 * (1 + math.Abs(w))
		if dtype == tensor.Float64 {
			tol = 1e-12 * (1 + math.Abs(w))
		}
		require.InDelta(t, w, g, tol, "%s[%d]", what, i)
	}
}

// A malformed equation is a *tensor.Error naming the equation, the
// operands' shapes, their dtype and device, as tensor.Einsum's.
func TestEinsumErrors(t *testing.T) {
	dev := cpuDevice(t)
	a := Param(tensor.Zeros(dev, 2, 3))
	err := tensor.Catch(func() { Einsum("ij,jk->ik", a, a) })
	var te *tensor.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, "Einsum", te.Op)
	for _, want := range []string{`"ij,jk->ik"`, "[[2 3] [2 3]]", "subscript j", "float32", dev.Name()} {
		require.Contains(t, err.Error(), want)
	}
}
