package graph

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// ewUnaryCase is a gradient check of f on one input of shape drawn from
// [lo, hi) (default [-2, 2)), kept at least away from 0.
func ewUnaryCase(name string, f func(x *Value) *Value, lo, hi, away float64, shape ...int) gradCase {
	return gradCase{name: name, inputs: []input{{shape: shape, lo: lo, hi: hi, away: away}},
		f: func(in []*Value) *Value { return f(in[0]) }}
}

func init() {
	gradCases = append(gradCases,
		// Binary ops, broadcasting both ways.
		gradCase{name: "Sub/broadcast", inputs: []input{{shape: []int{3, 1, 4}}, {shape: []int{2, 1}}},
			f: func(in []*Value) *Value { return Sub(in[0], in[1]) }},
		gradCase{name: "Div/broadcast", inputs: []input{{shape: []int{2, 3}}, {shape: []int{3}, away: 0.5}},
			f: func(in []*Value) *Value { return Div(in[0], in[1]) }},
		// A transposed (non-contiguous) numerator.
		gradCase{name: "Div/transposed", inputs: []input{{shape: []int{3, 2}}, {shape: []int{2, 1}, lo: 0.5, hi: 2}},
			f: func(in []*Value) *Value { return in[0].Transpose(0, 1).Div(in[1]) }},
		gradCase{name: "Pow/broadcast", inputs: []input{{shape: []int{2, 3}, lo: 0.5, hi: 2}, {shape: []int{3}}},
			f: func(in []*Value) *Value { return Pow(in[0], in[1]) }},
		// PyTorch's conventions: ∂/∂b = 0 where a = 0 and b ≥ 0, and
		// ∂/∂a = 0 where b = 0; finite differences agree at these points.
		gradCase{name: "Pow/zero base", inputs: []input{
			{shape: []int{4}, values: []float64{0, 1.5, 0, 0.7}, constant: true},
			{shape: []int{4}, values: []float64{0.5, -1.2, 2, 1.3}}},
			f: func(in []*Value) *Value { return Pow(in[0], in[1]) }},
		gradCase{name: "Pow/zero exponent", inputs: []input{
			{shape: []int{4}, values: []float64{0, 1.5, 0, 0.7}},
			{shape: []int{4}, values: []float64{2, 0, 3, 0}, constant: true}},
			f: func(in []*Value) *Value { return Pow(in[0], in[1]) }},
		gradCase{name: "Maximum/broadcast", inputs: []input{{shape: []int{2, 3}}, {shape: []int{3, 1, 1}}},
			f: func(in []*Value) *Value { return Maximum(in[0], in[1]) }},
		gradCase{name: "Minimum/broadcast", inputs: []input{{shape: []int{1, 4}}, {shape: []int{3, 1}}},
			f: func(in []*Value) *Value { return in[0].Minimum(in[1]) }},
		// At a tie central differences see the g/2 split, but the
		// gradient jumps from 0 to g there, so its own derivative is not
		// finite: first order only.
		gradCase{name: "Maximum/ties", firstOrder: true, inputs: []input{
			{shape: []int{5}, values: []float64{1, 2, 3, -1, 0.5}},
			{shape: []int{5}, values: []float64{1, 0, 3, 2, 0.5}}},
			f: func(in []*Value) *Value { return Maximum(in[0], in[1]) }},
		gradCase{name: "Minimum/ties", firstOrder: true, inputs: []input{
			{shape: []int{5}, values: []float64{1, 2, 3, -1, 0.5}},
			{shape: []int{5}, values: []float64{1, 0, 3, 2, 0.5}}},
			f: func(in []*Value) *Value { return Minimum(in[0], in[1]) }},
		// ReLU's fused backward: linear in a, 0 in b (kept away from the
		// kink at 0, where finite differences would cross it).
		gradCase{name: "ReLUGrad/broadcast", inputs: []input{{shape: []int{2, 3}}, {shape: []int{3, 1, 1}, away: 0.3}},
			f: func(in []*Value) *Value { return ReLUGrad(in[0], in[1]).Mul(in[0]) }},

		// Scalar forms.
		ewUnaryCase("ReLUGradScalar/pass", func(x *Value) *Value { return x.ReLUGradScalar(0.5).Mul(x) }, 0, 0, 0, 2, 3),
		ewUnaryCase("ReLUGradScalar/mask", func(x *Value) *Value { return x.ReLUGradScalar(-0.5).Add(x) }, 0, 0, 0, 5),
		ewUnaryCase("AddScalar+SubScalar+MulScalar+DivScalar", func(x *Value) *Value {
			return x.AddScalar(0.5).MulScalar(-1.5).SubScalar(2).DivScalar(3).Mul(x)
		}, 0, 0, 0, 2, 3),
		ewUnaryCase("PowScalar/3", func(x *Value) *Value { return x.PowScalar(3) }, 0, 0, 0, 7),
		ewUnaryCase("PowScalar/-0.5", func(x *Value) *Value { return x.PowScalar(-0.5) }, 0.5, 2, 0, 2, 3),
		ewUnaryCase("PowScalar/0", func(x *Value) *Value { return x.PowScalar(0).Mul(x) }, 0, 0, 0, 4),
		ewUnaryCase("MaximumScalar", func(x *Value) *Value { return x.MaximumScalar(0.3) }, 0, 0, 0, 2, 4),
		ewUnaryCase("MinimumScalar", func(x *Value) *Value { return x.MinimumScalar(-0.3) }, 0, 0, 0, 2, 4),
		gradCase{name: "MaximumScalar/ties", firstOrder: true,
			inputs: []input{{shape: []int{3}, values: []float64{1, 2, 0}}},
			f:      func(in []*Value) *Value { return in[0].MaximumScalar(1) }},
		gradCase{name: "MinimumScalar/ties", firstOrder: true,
			inputs: []input{{shape: []int{3}, values: []float64{1, 2, 0}}},
			f:      func(in []*Value) *Value { return in[0].MinimumScalar(1) }},

		// Where, with a random mask and one a comparison computes.
		gradCase{name: "Where/broadcast", inputs: []input{{shape: []int{3, 1}, index: 2}, {shape: []int{3, 4}}, {shape: []int{4}}},
			f: func(in []*Value) *Value { return Where(in[0], in[1], in[2]) }},
		gradCase{name: "Where/compared", inputs: []input{{shape: []int{2, 3}}, {shape: []int{2, 3}}},
			f: func(in []*Value) *Value { return Where(Gt(in[0], in[1]), in[0].Square(), in[1].Exp()) }},

		// Unary ops; inputs kept inside their domains and off their kinks.
		ewUnaryCase("Neg", Neg, 0, 0, 0, 7),
		ewUnaryCase("Abs", func(x *Value) *Value { return Abs(x).Mul(x) }, 0, 0, 0.1, 2, 3),
		ewUnaryCase("Sign", func(x *Value) *Value { return Sign(x).Mul(x) }, 0, 0, 0.1, 5),
		ewUnaryCase("Reciprocal", Reciprocal, 0, 0, 0.5, 2, 3),
		ewUnaryCase("Sqrt", Sqrt, 0.3, 3, 0, 2, 3),
		ewUnaryCase("Rsqrt", Rsqrt, 0.3, 3, 0, 2, 3),
		ewUnaryCase("Square", Square, 0, 0, 0, 1),
		ewUnaryCase("Exp", Exp, 0, 0, 0, 2, 3),
		ewUnaryCase("Log", Log, 0.2, 3, 0, 2, 3),
		ewUnaryCase("Log1p", Log1p, -0.6, 2, 0, 2, 3),
		ewUnaryCase("Expm1", Expm1, 0, 0, 0, 2, 3),
		ewUnaryCase("Expm1/near 0", func(x *Value) *Value { return x.Expm1() }, -1e-3, 1e-3, 0, 5),
		ewUnaryCase("Sin", Sin, 0, 0, 0, 2, 3),
		ewUnaryCase("Cos", Cos, 0, 0, 0, 2, 3),
		ewUnaryCase("Tan", Tan, -1.2, 1.2, 0, 2, 3),
		ewUnaryCase("Tanh", Tanh, 0, 0, 0, 2, 3),
		// An expanded (non-contiguous, stride 0) input.
		gradCase{name: "Tanh/expanded", inputs: []input{{shape: []int{3}}},
			f: func(in []*Value) *Value { return in[0].Reshape(1, 3).Expand(2, 3).Tanh() }},
		ewUnaryCase("Sigmoid", Sigmoid, -4, 4, 0, 2, 3),
		ewUnaryCase("Erf", Erf, 0, 0, 0, 2, 3),
		ewUnaryCase("ReLU", func(x *Value) *Value { return ReLU(x).Mul(x) }, 0, 0, 0.1, 2, 4),
		ewUnaryCase("LeakyReLU", func(x *Value) *Value { return LeakyReLU(x, 0.1).Mul(x) }, 0, 0, 0.1, 2, 4),
		ewUnaryCase("ELU", func(x *Value) *Value { return ELU(x, 0.7) }, 0, 0, 0.1, 2, 4),
		ewUnaryCase("GELU", GELU, -3, 3, 0, 2, 4),
		ewUnaryCase("GELUTanh", GELUTanh, -3, 3, 0, 2, 4),
		ewUnaryCase("SiLU", SiLU, -3, 3, 0, 2, 4),
		// beta·x crosses the threshold (x > 0.5) in some elements.
		ewUnaryCase("Softplus", func(x *Value) *Value { return Softplus(x, 2, 1).Mul(x) }, 0, 0, 0, 2, 4),
		ewUnaryCase("Softplus/default", func(x *Value) *Value { return x.Softplus(1, 20) }, -4, 4, 0, 7),
		ewUnaryCase("Clamp", func(x *Value) *Value { return Clamp(x, -0.5, 1).Mul(x) }, 0, 0, 0, 2, 4),

		// Cast to the input's own dtype (the checks run in one float
		// dtype; a real conversion is checked directly below) and
		// Contiguous on an expanded view, which copies.
		ewUnaryCase("Cast", func(x *Value) *Value { return x.Cast(x.DType()).Square() }, 0, 0, 0, 2, 3),
		gradCase{name: "Contiguous", inputs: []input{{shape: []int{2, 3}}},
			f: func(in []*Value) *Value { return in[0].Reshape(2, 1, 3).Expand(2, 2, 3).Contiguous().Square() }},
	)
}

// ewGrads returns the gradient of Σ y with respect to each of xs.
func ewGrads(t *testing.T, y *Value, xs ...*Value) [][]float64 {
	t.Helper()
	loss := y.Sum(nil, false)
	defer loss.Release()
	gs, err := Grad([]*Value{loss}, xs, nil)
	require.NoError(t, err)
	defer releaseValues(gs)
	out := make([][]float64, len(gs))
	for i, g := range gs {
		out[i] = read(t, g)
	}
	return out
}

// TestTiesSplitTheGradient checks PyTorch's values at ties: g/2 to each
// operand of Maximum and Minimum.
func TestTiesSplitTheGradient(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		a := param(dev, []float32{1, 2, 3, -1}, 4)
		b := param(dev, []float32{1, 0, 3, 2}, 4)
		defer releaseValues([]*Value{a, b})

		y := Maximum(a, b)
		g := ewGrads(t, y, a, b)
		y.Release()
		require.Equal(t, []float64{0.5, 1, 0.5, 0}, g[0])
		require.Equal(t, []float64{0.5, 0, 0.5, 1}, g[1])

		y = Minimum(a, b)
		g = ewGrads(t, y, a, b)
		y.Release()
		require.Equal(t, []float64{0.5, 0, 0.5, 1}, g[0])
		require.Equal(t, []float64{0.5, 1, 0.5, 0}, g[1])

		y = a.MaximumScalar(2)
		g = ewGrads(t, y, a)
		y.Release()
		require.Equal(t, []float64{0, 0.5, 1, 0}, g[0])

		y = a.MinimumScalar(2)
		g = ewGrads(t, y, a)
		y.Release()
		require.Equal(t, []float64{1, 0.5, 0, 1}, g[0])
	})
}

// TestKinkConventions checks the gradients PyTorch defines at points where
// the function has none.
func TestKinkConventions(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		x := param(dev, []float32{0, -0.5, 1, 2}, 4)
		defer x.Release()
		for _, c := range []struct {
			name string
			f    func(*Value) *Value
			want []float64
		}{
			{"Abs", Abs, []float64{0, -1, 1, 1}},
			{"Sign", Sign, []float64{0, 0, 0, 0}},
			{"ReLU", ReLU, []float64{0, 0, 1, 1}},
			{"LeakyReLU", func(x *Value) *Value { return LeakyReLU(x, 0.25) }, []float64{0.25, 0.25, 1, 1}},
			{"ELU", func(x *Value) *Value { return ELU(x, 0.5) }, []float64{0.5, 0.5 * 0.6065306597126334, 1, 1}},
			// Bounds are inclusive.
			{"Clamp", func(x *Value) *Value { return Clamp(x, -0.5, 1) }, []float64{1, 1, 1, 0}},
			{"PowScalar/0", func(x *Value) *Value { return x.PowScalar(0) }, []float64{0, 0, 0, 0}},
			{"PowScalar/2", func(x *Value) *Value { return x.PowScalar(2) }, []float64{0, -1, 2, 4}},
		} {
			y := c.f(x)
			g := ewGrads(t, y, x)
			y.Release()
			require.InDeltaSlice(t, c.want, g[0], 1e-6, c.name)
		}

		// 0ᵇ: no gradient to b for b ≥ 0; none to a where b = 0.
		a := param(dev, []float32{0, 0, 2}, 3)
		b := param(dev, []float32{0, 1.5, 0}, 3)
		defer releaseValues([]*Value{a, b})
		y := Pow(a, b)
		g := ewGrads(t, y, a, b)
		y.Release()
		require.InDeltaSlice(t, []float64{0, 0, 0}, g[0], 1e-6, "Pow ∂a")
		require.InDeltaSlice(t, []float64{0, 0, 0.6931472}, g[1], 1e-6, "Pow ∂b")
	})
}

// TestComparisonsAreNotDifferentiable: a loss computed only through a
// comparison (or a cast to Int32) has no gradient, and the error says
// which op cut it off.
func TestComparisonsAreNotDifferentiable(t *testing.T) {
	dev := cpuDevice(t)
	a := param(dev, []float32{1, 2, 3}, 3)
	b := param(dev, []float32{2, 2, 2}, 3)
	defer releaseValues([]*Value{a, b})
	for _, c := range []struct {
		op string
		f  func() *Value
	}{
		{"Gt", func() *Value { return Gt(a, b) }},
		{"Le", func() *Value { return a.Le(b) }},
		{"EqScalar", func() *Value { return a.EqScalar(2) }},
		{"Cast to int32", func() *Value { return a.Cast(tensor.Int32) }},
	} {
		m := c.f()
		require.False(t, m.RequiresGrad(), c.op)
		f := m.Cast(tensor.Float32)
		loss := f.Sum(nil, false)
		err := Backward(loss)
		require.ErrorIs(t, err, ErrNoGradient, c.op)
		require.Contains(t, err.Error(), c.op)
		releaseValues([]*Value{m, f, loss})
	}
	require.Nil(t, a.Grad())
}

// TestCastGradientHasTheInputDType: a cast between float dtypes sends the
// gradient back in the input's dtype.
func TestCastGradientHasTheInputDType(t *testing.T) {
	dev := cpuDevice(t)
	x := param(dev, []float32{1, -2, 0.5}, 3)
	defer x.Release()
	y := x.Cast(tensor.Float64).Square()
	defer y.Release()
	require.Equal(t, tensor.Float64, y.DType())
	loss := y.Sum(nil, false)
	defer loss.Release()
	require.NoError(t, Backward(loss))
	require.Equal(t, tensor.Float32, x.Grad().DType())
	require.Equal(t, []float64{2, -4, 1}, read(t, x.Grad()))
}
