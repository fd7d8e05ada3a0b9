package graph

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

func init() {
	// The reductions' cases square x first where the op is linear, so
	// that the second-order check sees a gradient that depends on x.
	gradCases = append(gradCases,
		gradCase{name: "Prod/dims", inputs: []input{{shape: []int{3, 4}, lo: 0.5, hi: 1.5}},
			f: func(in []*Value) *Value { return in[0].Prod([]int{-1}, false) }},
		gradCase{name: "Prod/all keepDim", inputs: []input{{shape: []int{2, 3}}},
			f: func(in []*Value) *Value { return in[0].Prod(nil, true) }},
		gradCase{name: "Prod/size 1 and 7", inputs: []input{{shape: []int{1, 7}, lo: 0.5, hi: 1.5}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Prod([]int{0}, true) }},
		// Rows with no zero, one zero, two zeros and three zeros.
		gradCase{name: "Prod/zeros", inputs: []input{{shape: []int{4, 4}, values: []float64{
			1.5, -0.5, 2, 0.7,
			1.2, 0, -1.1, 0.9,
			0, 1.3, 0, -0.8,
			0, 0, 1.4, 0,
		}}},
			f: func(in []*Value) *Value { return in[0].Prod([]int{1}, false) }},
		gradCase{name: "Prod/zero in a column", inputs: []input{{shape: []int{3, 2}, values: []float64{
			0, 1.5,
			-2, 0.5,
			0.75, 0,
		}}},
			f: func(in []*Value) *Value { return in[0].Prod([]int{-2}, true) }},

		gradCase{name: "Max/dims", inputs: []input{{shape: []int{3, 5}}},
			f: func(in []*Value) *Value { return in[0].Max([]int{1}, false) }},
		gradCase{name: "Max/all transposed", inputs: []input{{shape: []int{4, 3}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Max(nil, false).Square() }},
		gradCase{name: "Min/keepDim", inputs: []input{{shape: []int{4, 3}}},
			f: func(in []*Value) *Value { return in[0].Square().Min([]int{-2}, true) }},
		// Two-way ties: the central difference at a tie sees half the slope
		// on each side, the even split. The gradient jumps at a tie, so the
		// second-order difference is meaningless there.
		gradCase{name: "Max/ties", firstOrder: true, inputs: []input{{shape: []int{2, 4}, values: []float64{
			1, 3, 3, -1,
			2, 0.5, 2, 1,
		}}},
			f: func(in []*Value) *Value { return in[0].Max([]int{1}, false) }},
		gradCase{name: "Min/ties", firstOrder: true, inputs: []input{{shape: []int{4}, values: []float64{0.5, -1, 2, -1}}},
			f: func(in []*Value) *Value { return in[0].Min(nil, true) }},

		// A scalar accepts dim 0 or −1 and reduces nothing.
		gradCase{name: "Max/scalar", inputs: []input{{shape: []int{}}},
			f: func(in []*Value) *Value { return in[0].Square().Max([]int{-1}, false).Prod([]int{0}, true) }},
		gradCase{name: "LogSumExp/dims", inputs: []input{{shape: []int{3, 4}}},
			f: func(in []*Value) *Value { return in[0].LogSumExp([]int{-1}, false) }},
		gradCase{name: "LogSumExp/all keepDim", inputs: []input{{shape: []int{2, 1, 3}}},
			f: func(in []*Value) *Value { return in[0].LogSumExp(nil, true) }},

		gradCase{name: "Mean", inputs: []input{{shape: []int{3, 4}}},
			f: func(in []*Value) *Value { return in[0].Square().Mean([]int{0}, false) }},
		gradCase{name: "Var/unbiased", inputs: []input{{shape: []int{3, 5}}},
			f: func(in []*Value) *Value { return in[0].Var([]int{-1}, 1, true) }},
		gradCase{name: "Var/population all", inputs: []input{{shape: []int{7}}},
			f: func(in []*Value) *Value { return in[0].Var(nil, 0, false) }},
		gradCase{name: "Std", inputs: []input{{shape: []int{2, 3, 2}}},
			f: func(in []*Value) *Value { return in[0].Std([]int{0, 2}, 1, false) }},
	)

	gradCases = append(gradCases,
		gradCase{name: "MatMul/2d", inputs: []input{{shape: []int{3, 4}}, {shape: []int{4, 5}}},
			f: func(in []*Value) *Value { return MatMul(in[0], in[1]) }},
		gradCase{name: "MatMul/batch broadcast", inputs: []input{{shape: []int{2, 1, 3, 4}}, {shape: []int{3, 4, 5}}},
			f: func(in []*Value) *Value { return MatMul(in[0], in[1]) }},
		gradCase{name: "MatMul/size 1 and 7", inputs: []input{{shape: []int{1, 7}}, {shape: []int{7, 1}}},
			f: func(in []*Value) *Value { return in[0].MatMul(in[1]) }},
		gradCase{name: "MatMul/transposed operands", inputs: []input{{shape: []int{4, 3}}, {shape: []int{2, 5, 4}}},
			f: func(in []*Value) *Value { return MatMul(in[0].T(), in[1].Transpose(-1, -2)) }},
		gradCase{name: "MatMul/vector matrix", inputs: []input{{shape: []int{4}}, {shape: []int{2, 4, 3}}},
			f: func(in []*Value) *Value { return MatMul(in[0], in[1]) }},
		gradCase{name: "MatMul/matrix vector", inputs: []input{{shape: []int{2, 3, 4}}, {shape: []int{4}}},
			f: func(in []*Value) *Value { return MatMul(in[0], in[1]) }},
		gradCase{name: "MatMul/dot", inputs: []input{{shape: []int{7}}, {shape: []int{7}}},
			f: func(in []*Value) *Value { return MatMul(in[0], in[1]) }},
		gradCase{name: "MatMul/self", inputs: []input{{shape: []int{3, 3}}},
			f: func(in []*Value) *Value { return MatMul(in[0], in[0]) }},
		gradCase{name: "MatVec", inputs: []input{{shape: []int{3, 4}}, {shape: []int{4}}},
			f: func(in []*Value) *Value { return MatVec(in[0], in[1]) }},
		gradCase{name: "Outer", inputs: []input{{shape: []int{3}}, {shape: []int{7}}},
			f: func(in []*Value) *Value { return Outer(in[0], in[1]).Square() }},
	)
	for _, tr := range []struct {
		name   string
		ta, tb bool
	}{{"NN", false, false}, {"NT", false, true}, {"TN", true, false}, {"TT", true, true}} {
		sa, sb := []int{3, 4}, []int{4, 5}
		if tr.ta {
			sa = []int{4, 3}
		}
		if tr.tb {
			sb = []int{5, 4}
		}
		gradCases = append(gradCases,
			gradCase{name: "Gemm/" + tr.name, inputs: []input{{shape: sa}, {shape: sb}, {shape: []int{5}}},
				f: func(in []*Value) *Value { return Gemm(0.7, in[0], tr.ta, in[1], tr.tb, 1.3, in[2]) }},
			gradCase{name: "Gemm/" + tr.name + " batched", inputs: []input{{shape: append([]int{2}, sa...)}, {shape: sb}, {shape: []int{3, 1}}},
				f: func(in []*Value) *Value { return Gemm(-1.5, in[0], tr.ta, in[1], tr.tb, 1, in[2]) }},
		)
	}
	gradCases = append(gradCases,
		gradCase{name: "Gemm/no c", inputs: []input{{shape: []int{2, 3}}, {shape: []int{2, 3}}},
			f: func(in []*Value) *Value { return Gemm(2, in[0], false, in[1], true, 0, nil) }},
		gradCase{name: "Gemm/self", inputs: []input{{shape: []int{3, 3}}},
			f: func(in []*Value) *Value { return Gemm(0.5, in[0], true, in[0], false, 2, in[0]) }},
	)

	gradCases = append(gradCases,
		gradCase{name: "Squeeze+Unsqueeze+Flatten", inputs: []input{{shape: []int{2, 1, 3}}},
			f: func(in []*Value) *Value {
				return in[0].Squeeze(1).Unsqueeze(-1).Transpose(0, 1).Flatten(0, -1).Square()
			}},
		gradCase{name: "BroadcastTo", inputs: []input{{shape: []int{3, 1}}, {shape: []int{2, 3, 4}, constant: true}},
			f: func(in []*Value) *Value { return Mul(in[0].Square().BroadcastTo(2, 3, 4), in[1]) }},
		gradCase{name: "Slice/step 1", inputs: []input{{shape: []int{4, 5}}},
			f: func(in []*Value) *Value { return in[0].Slice(1, 1, -1, 1).Square() }},
		gradCase{name: "Slice/step 2", inputs: []input{{shape: []int{7, 2}}},
			f: func(in []*Value) *Value { return in[0].Slice(0, -6, 7, 2).Square() }},
		gradCase{name: "Slice/step 3 transposed", inputs: []input{{shape: []int{3, 7}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Slice(-2, 0, 100, 3).Square() }},
		gradCase{name: "Slice/one element", inputs: []input{{shape: []int{2, 7}}},
			f: func(in []*Value) *Value { return in[0].Slice(1, 4, 6, 5).Square() }},
		gradCase{name: "Split+Chunk", inputs: []input{{shape: []int{2, 7}}},
			f: func(in []*Value) *Value {
				parts := in[0].Split(1, 3)   // 3, 3, 1
				chunks := in[0].Chunk(-1, 4) // 2, 2, 2, 1
				defer releaseValues(parts)
				defer releaseValues(chunks)
				return Concat(1, parts[2].Square(), parts[0], chunks[1].Square())
			}},
		gradCase{name: "Permute", inputs: []input{{shape: []int{2, 3, 4}}},
			f: func(in []*Value) *Value { return in[0].Square().Permute(2, -3, 1).Contiguous() }},
		gradCase{name: "T", inputs: []input{{shape: []int{3, 4}}, {shape: []int{4, 3}, constant: true}},
			f: func(in []*Value) *Value { return Mul(in[0].Square().T(), in[1]) }},

		gradCase{name: "Concat", inputs: []input{{shape: []int{2, 3}}, {shape: []int{2, 1}, constant: true}, {shape: []int{2, 4}}},
			f: func(in []*Value) *Value { return Concat(-1, in[0].Square(), in[1], in[2]).Square() }},
		gradCase{name: "Concat/transposed", inputs: []input{{shape: []int{3, 2}}, {shape: []int{2, 1}}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Concat(1, in[1]).Square() }},
		gradCase{name: "Stack", inputs: []input{{shape: []int{2, 3}}, {shape: []int{2, 3}}},
			f: func(in []*Value) *Value { return Stack(-1, in[0], in[1].Square(), in[0]) }},
		gradCase{name: "Pad/constant", inputs: []input{{shape: []int{2, 3, 4}}},
			f: func(in []*Value) *Value { return in[0].Pad([]int{1, 2, 0, 1}, tensor.PadConstant, 0.5).Square() }},
		gradCase{name: "Pad/constant crop", inputs: []input{{shape: []int{3, 5}}},
			f: func(in []*Value) *Value {
				return in[0].Transpose(0, 1).Pad([]int{-1, 2, 1, -2}, tensor.PadConstant, -1).Square()
			}},
		gradCase{name: "Pad/reflect", inputs: []input{{shape: []int{2, 3, 4}}},
			f: func(in []*Value) *Value { return in[0].Pad([]int{3, 1, 2, 2}, tensor.PadReflect, 0).Square() }},

		gradCase{name: "Gather", inputs: []input{{shape: []int{3, 4}}, {shape: []int{3, 5}, index: 4}},
			f: func(in []*Value) *Value { return in[0].Square().Gather(1, in[1]) }},
		gradCase{name: "Gather/smaller index", inputs: []input{{shape: []int{4, 3}}, {shape: []int{2, 2}, index: 4}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Square().Gather(-1, in[1]) }},
		gradCase{name: "IndexSelect", inputs: []input{{shape: []int{3, 4}}, {shape: []int{5}, index: 3}},
			f: func(in []*Value) *Value { return in[0].Square().IndexSelect(0, in[1]) }},
		gradCase{name: "IndexSelect/last dim", inputs: []input{{shape: []int{2, 1, 4}}, {shape: []int{7}, index: 4}},
			f: func(in []*Value) *Value { return in[0].IndexSelect(-1, in[1]).Square() }},
		gradCase{name: "ScatterAdd", inputs: []input{{shape: []int{3, 4}}, {shape: []int{2, 4}, index: 3}, {shape: []int{3, 5}}},
			f: func(in []*Value) *Value { return in[0].ScatterAdd(0, in[1], in[2].Square()).Square() }},
		gradCase{name: "ScatterAdd/constant base", inputs: []input{{shape: []int{2, 3}, constant: true}, {shape: []int{2, 3}, index: 3}, {shape: []int{2, 3}}},
			f: func(in []*Value) *Value { return in[0].ScatterAdd(-1, in[1], in[2]).Square() }},
	)
}

// shapeGradOf returns x's gradient of f(x) summed, on dev, read to the host.
func shapeGradOf(t *testing.T, dev *tensor.Device, data []float32, shape []int, f func(x *Value) *Value) []float64 {
	t.Helper()
	x := param(dev, data, shape...)
	defer x.Release()
	y := f(x)
	defer y.Release()
	loss := y.Sum(nil, false)
	defer loss.Release()
	require.NoError(t, loss.Backward())
	return read(t, x.Grad())
}

func TestProdGradWithZeros(t *testing.T) {
	// Where no factor is zero the gradient is the product divided by x:
	// WGSL lets a GPU divide to 2.5 ulp (haltest.WGSLAccuracy), 2.4e-6 at 12.
	const tol = 4e-6
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		// Rows with no zero, one zero and two zeros.
		got := shapeGradOf(t, dev, []float32{2, 4, 3, 2, 0, 3, 0, 0, 5}, []int{3, 3}, func(x *Value) *Value {
			return x.Prod([]int{1}, false)
		})
		require.InDeltaSlice(t, []float64{12, 6, 8, 0, 6, 0, 0, 0, 0}, got, tol)
		got = shapeGradOf(t, dev, []float32{0, 1.5, -2}, []int{3}, func(x *Value) *Value { return x.Prod(nil, false) })
		require.InDeltaSlice(t, []float64{-3, 0, 0}, got, tol)
	})
}

func TestMaxSplitsTiesEvenly(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		got := shapeGradOf(t, dev, []float32{1, 3, 3, 3, 2, 0}, []int{6}, func(x *Value) *Value { return x.Max(nil, false) })
		require.InDeltaSlice(t, []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0}, got, 1e-6)
		got = shapeGradOf(t, dev, []float32{1, -2, 1, -2, 4, 4}, []int{3, 2}, func(x *Value) *Value {
			return x.Min([]int{0}, true)
		})
		require.InDeltaSlice(t, []float64{0.5, 0.5, 0.5, 0.5, 0, 0}, got, 1e-6)
		got = shapeGradOf(t, dev, []float32{1, -2, 1, -2, 4, 4}, []int{3, 2}, func(x *Value) *Value {
			return x.Min([]int{1}, false)
		})
		require.InDeltaSlice(t, []float64{0, 1, 0, 1, 0.5, 0.5}, got, 1e-6)
	})
}

// TestCompositesMatchTensor checks that the composite ops compute exactly
// what the tensor ops they mirror do.
func TestCompositesMatchTensor(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		data := make([]float32, 2*3*4)
		for i := range data {
			data[i] = float32(math.Sin(float64(i)*1.7)) * 3
		}
		shape := []int{2, 3, 4}
		check := func(name string, want *tensor.Tensor, got *Value) {
			t.Helper()
			defer want.Release()
			defer got.Release()
			require.Equal(t, want.Shape(), got.Shape(), name)
			w, err := want.Float32s()
			require.NoError(t, err, name)
			g, err := got.Float32s()
			require.NoError(t, err, name)
			require.Equal(t, w, g, name)
		}
		xt := tensor.FromFloat32(dev, data, shape...)
		defer xt.Release()
		x := param(dev, data, shape...)
		defer x.Release()
		for _, r := range []struct {
			dims []int
			keep bool
		}{{nil, false}, {[]int{1}, true}, {[]int{0, -1}, false}, {[]int{-2}, false}} {
			check("Mean", xt.Mean(r.dims, r.keep), x.Mean(r.dims, r.keep))
			for _, corr := range []int{0, 1, 2} {
				check("Var", xt.Var(r.dims, corr, r.keep), x.Var(r.dims, corr, r.keep))
				check("Std", xt.Std(r.dims, corr, r.keep), x.Std(r.dims, corr, r.keep))
			}
		}
		it := tensor.FromInt32(dev, []int32{1, 4, -2, 7, 0, 3}, 2, 3)
		defer it.Release()
		iv := Constant(tensor.FromInt32(dev, []int32{1, 4, -2, 7, 0, 3}, 2, 3))
		defer iv.Release()
		check("Mean int32", it.Mean([]int{1}, false), iv.Mean([]int{1}, false))
		check("Var int32", it.Var(nil, 1, false), iv.Var(nil, 1, false))

		for _, pads := range [][]int{{1, 2}, {3, 0, 2, 1}, {0, 0, 1, 1, 1, 0}, {}} {
			check("Pad reflect", xt.Pad(pads, tensor.PadReflect, 0), x.Pad(pads, tensor.PadReflect, 0))
		}
		check("Pad constant", xt.Pad([]int{1, -2, 2, 0}, tensor.PadConstant, 3), x.Pad([]int{1, -2, 2, 0}, tensor.PadConstant, 3))

		a := tensor.FromFloat32(dev, data[:12], 3, 4)
		defer a.Release()
		av := param(dev, data[:12], 3, 4)
		defer av.Release()
		v := tensor.FromFloat32(dev, data[12:16], 4)
		defer v.Release()
		vv := param(dev, data[12:16], 4)
		defer vv.Release()
		w := tensor.FromFloat32(dev, data[16:19], 3)
		defer w.Release()
		wv := param(dev, data[16:19], 3)
		defer wv.Release()
		check("MatMul mat·vec", tensor.MatMul(a, v), MatMul(av, vv))
		check("MatMul vec·mat", tensor.MatMul(w, a), MatMul(wv, av))
		check("MatMul vec·vec", tensor.MatMul(v, v), MatMul(vv, vv))
		check("MatMul batch·vec", tensor.MatMul(xt, v), MatMul(x, vv))
		check("MatMul vec·batch", tensor.MatMul(w, xt), MatMul(wv, x))
		check("MatVec", tensor.MatVec(a, v), MatVec(av, vv))
		check("Outer", tensor.Outer(v, w), Outer(vv, wv))
		check("Stack", tensor.Stack(1, a, a), Stack(1, av, av))
		check("Flatten", xt.Flatten(1, 2), x.Flatten(1, 2))
		check("Squeeze", xt.Unsqueeze(0).Squeeze(), x.Unsqueeze(0).Squeeze())
	})
}

func TestSplitAndChunkMatchTensor(t *testing.T) {
	dev := cpuDevice(t)
	data := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	xt := tensor.FromFloat32(dev, data, 2, 7)
	defer xt.Release()
	x := param(dev, data, 2, 7)
	defer x.Release()
	for _, c := range []struct {
		name string
		want []*tensor.Tensor
		got  []*Value
	}{
		{"Split", xt.Split(-1, 3), x.Split(-1, 3)},
		{"Chunk", xt.Chunk(1, 3), x.Chunk(1, 3)},
		{"Chunk rows", xt.Chunk(0, 5), x.Chunk(0, 5)},
	} {
		require.Len(t, c.got, len(c.want), c.name)
		for i := range c.want {
			w, err := c.want[i].Float32s()
			require.NoError(t, err)
			g, err := c.got[i].Float32s()
			require.NoError(t, err)
			require.Equal(t, w, g, c.name)
			require.True(t, slices.Equal(c.want[i].Shape(), c.got[i].Shape()), c.name)
			c.want[i].Release()
			c.got[i].Release()
		}
	}
}

func TestIndexOpsAreNotDifferentiable(t *testing.T) {
	dev := cpuDevice(t)
	x := param(dev, []float32{1, 5, 2, 4}, 2, 2)
	defer x.Release()
	for _, f := range []struct {
		op string
		f  func() *Value
	}{
		{"ArgMax", func() *Value { return x.ArgMax([]int{1}, false) }},
		{"ArgMin", func() *Value { return x.ArgMin(nil, false) }},
		{"OneHot", func() *Value {
			i := x.ArgMax([]int{1}, false)
			defer i.Release()
			return OneHot(i, 3)
		}},
	} {
		y := f.f()
		require.False(t, y.RequiresGrad(), f.op)
		yf := y.Cast(tensor.Float32)
		loss := yf.Sum(nil, false)
		err := Backward(loss)
		require.True(t, errors.Is(err, ErrNoGradient), "%s: %v", f.op, err)
		require.ErrorContains(t, err, "ArgM", f.op)
		releaseAllValues(loss, yf, y)
	}
	i := x.ArgMax([]int{1}, true)
	defer i.Release()
	got, err := i.Int32s()
	require.NoError(t, err)
	require.Equal(t, []int32{1, 1}, got)
}

// TestShapeOpsLeakNothing runs each op of this file, and each composite,
// on a leaf on each device, then differentiates it once and twice, and requires that
// once everything is released no device memory is left and that no pass
// read the device.
func TestShapeOpsLeakNothing(t *testing.T) {
	forEachDevice(t, testShapeOpsLeakNothing)
}

func testShapeOpsLeakNothing(t *testing.T, dev *tensor.Device) {
	quietGC(t, dev)
	ops := []struct {
		name string
		f    func(x, idx *Value, tmp func(*Value) *Value) *Value // x is [2, 3, 4]; idx is Int32 [2, 3, 4] in [0, 2); tmp releases its argument after the pass
	}{
		{"Prod", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Prod([]int{1}, false) }},
		{"Max", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Max([]int{-1}, false) }},
		{"Min", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Min(nil, true) }},
		{"LogSumExp", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.LogSumExp([]int{0, 2}, false) }},
		{"Mean", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Mean([]int{1}, false) }},
		{"Var", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Var([]int{1}, 1, false) }},
		{"Std", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Std(nil, 0, true) }},
		{"MatMul", func(x, _ *Value, tmp func(*Value) *Value) *Value { return MatMul(x, tmp(x.Transpose(1, 2))) }},
		{"MatMul vector", func(x, _ *Value, tmp func(*Value) *Value) *Value {
			return MatMul(tmp(tmp(tmp(x.Slice(0, 0, 1, 1)).Reshape(12)).Slice(0, 0, 3, 1)), x)
		}},
		{"MatVec", func(x, _ *Value, tmp func(*Value) *Value) *Value {
			return MatVec(x, tmp(tmp(x.Reshape(24)).Slice(0, 0, 4, 1)))
		}},
		{"Outer", func(x, _ *Value, tmp func(*Value) *Value) *Value {
			return Outer(tmp(x.Reshape(24)), tmp(x.Reshape(24)))
		}},
		{"Gemm", func(x, _ *Value, tmp func(*Value) *Value) *Value {
			return Gemm(2, x, true, x, false, 0.5, tmp(x.Sum([]int{0, 1}, true)))
		}},
		{"Slice", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Slice(2, 1, 4, 2) }},
		{"Split", func(x, _ *Value, tmp func(*Value) *Value) *Value { return Concat(1, tmps(tmp, x.Split(1, 2))...) }},
		{"Chunk", func(x, _ *Value, tmp func(*Value) *Value) *Value { return Concat(2, tmps(tmp, x.Chunk(2, 3))...) }},
		{"Stack", func(x, _ *Value, tmp func(*Value) *Value) *Value { return Stack(1, x, x) }},
		{"Permute", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Permute(2, 0, 1) }},
		{"Pad", func(x, _ *Value, tmp func(*Value) *Value) *Value { return x.Pad([]int{1, -1}, tensor.PadConstant, 0) }},
		{"Pad reflect", func(x, _ *Value, tmp func(*Value) *Value) *Value {
			return x.Pad([]int{1, 2, 2, 1}, tensor.PadReflect, 0)
		}},
		{"Gather", func(x, idx *Value, tmp func(*Value) *Value) *Value { return x.Gather(0, idx) }},
		{"IndexSelect", func(x, idx *Value, tmp func(*Value) *Value) *Value {
			return x.IndexSelect(1, tmp(tmp(idx.Reshape(24)).Slice(0, 0, 5, 1)))
		}},
		{"ScatterAdd", func(x, idx *Value, tmp func(*Value) *Value) *Value { return x.ScatterAdd(0, idx, x) }},
	}
	data := make([]float32, 24)
	index := make([]int32, 24)
	for i := range data {
		data[i] = float32(math.Cos(float64(i))) + 1.5
		index[i] = int32(i % 2)
	}
	for _, op := range ops {
		for _, opt := range []Option{0, CreateGraph} {
			before := dev.Stats()
			x := param(dev, data, 2, 3, 4)
			idx := Constant(tensor.FromInt32(dev, index, 2, 3, 4))
			var temps []*Value
			y := op.f(x, idx, func(v *Value) *Value { temps = append(temps, v); return v })
			loss := y.Sum(nil, false)
			gs, err := Grad([]*Value{loss}, []*Value{x}, nil, opt)
			require.NoError(t, err, op.name)
			if opt == CreateGraph {
				sq := gs[0].Square()
				l2 := sq.Sum(nil, false)
				if l2.RequiresGrad() {
					require.NoError(t, Backward(l2), op.name)
				}
				releaseValues([]*Value{sq, l2})
			}
			require.Equal(t, before.HostReads, dev.Stats().HostReads, "%s: host reads", op.name)
			releaseValues(gs)
			releaseValues(temps)
			releaseValues([]*Value{loss, y, x, idx})
			require.Equal(t, before.LiveBytes, dev.Stats().LiveBytes, "%s (options %v): live bytes", op.name, opt)
		}
	}
}

// tmps hands each value to tmp.
func tmps(tmp func(*Value) *Value, vs []*Value) []*Value {
	for _, v := range vs {
		tmp(v)
	}
	return vs
}

func TestShapeMisuse(t *testing.T) {
	dev := cpuDevice(t)
	x := param(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Release()
	v := param(dev, []float32{1, 2}, 2)
	defer v.Release()
	for name, f := range map[string]func(){
		"reflect pad too wide": func() { x.Pad([]int{3, 0}, tensor.PadReflect, 0) },
		"reflect pad odd":      func() { x.Pad([]int{1}, tensor.PadReflect, 0) },
		"MatVec of vectors":    func() { MatVec(v, v) },
		"Outer of a matrix":    func() { Outer(x, v) },
		"Stack mismatch":       func() { Stack(0, x, v) },
		"MatMul scalar":        func() { MatMul(x, Constant(tensor.Full(dev, tensor.Float32, 1))) },
		"Gemm without c":       func() { Gemm(1, x, false, x, true, 1, nil) },
	} {
		err := tensor.Catch(f)
		var te *tensor.Error
		require.True(t, errors.As(err, &te), "%s: %v", name, err)
	}
}
