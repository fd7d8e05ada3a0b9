package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// unaryDef is the suite's own definition of a unary kernel, from the
// definitions in hal's op table (hal/optable.go, which follow PyTorch).
type unaryDef struct {
	f    func(x float64, a hal.Args) float64
	gen  gen        // random inputs
	args []hal.Args // the first is used for the layout sweep
	ieee bool       // ±Inf inputs have a defined result (f's, as IEEE and PyTorch give)
}

var (
	wide     = perDType(logUniform(-10, 10, true), intsIn(-1000, 1000))
	positive = logUniform(-30, 30, false)
	// activations cover both tails and the bend near 0, where the
	// formulas cancel.
	activation = mixed(uniformIn(-20, 20), logUniform(-20, 0, true))
)

// mixed draws from a or b with equal odds.
func mixed(a, b gen) gen {
	return func(rng *rand.Rand, dt hal.DType) float64 {
		if rng.IntN(2) == 0 {
			return a(rng, dt)
		}
		return b(rng, dt)
	}
}

// expArgs keeps eˣ finite and normal in each dtype.
func expArgs(rng *rand.Rand, dt hal.DType) float64 {
	switch dt {
	case hal.Float16:
		return uniformIn(-9, 10)(rng, dt)
	case hal.Float64:
		return uniformIn(-700, 700)(rng, dt)
	}
	return uniformIn(-85, 88)(rng, dt)
}

var unaryDefs = map[hal.UnaryOp]unaryDef{
	hal.Neg: {f: func(x float64, _ hal.Args) float64 { return -x }, gen: wide, ieee: true},
	hal.Abs: {f: func(x float64, _ hal.Args) float64 { return math.Abs(x) }, gen: wide, ieee: true},
	hal.Sign: {f: func(x float64, _ hal.Args) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // 0 or NaN
	}, gen: wide, ieee: true},
	hal.Reciprocal: {f: func(x float64, _ hal.Args) float64 { return 1 / x }, gen: logUniform(-20, 20, true), ieee: true},
	hal.Sqrt:       {f: func(x float64, _ hal.Args) float64 { return math.Sqrt(x) }, gen: positive, ieee: true},
	hal.Rsqrt:      {f: func(x float64, _ hal.Args) float64 { return 1 / math.Sqrt(x) }, gen: positive, ieee: true},
	hal.Square:     {f: func(x float64, _ hal.Args) float64 { return x * x }, gen: wide, ieee: true},
	hal.Exp:        {f: func(x float64, _ hal.Args) float64 { return math.Exp(x) }, gen: expArgs, ieee: true},
	// Near 0, where eˣ − 1 would cancel, and out to both saturations.
	hal.Expm1: {f: func(x float64, _ hal.Args) float64 { return math.Expm1(x) },
		gen: mixed(expArgs, logUniform(-30, 0, true)), ieee: true},
	hal.Log: {f: func(x float64, _ hal.Args) float64 { return math.Log(x) }, gen: logUniform(-60, 60, false), ieee: true},
	hal.Log1p: {f: func(x float64, _ hal.Args) float64 { return math.Log1p(x) },
		gen: mixed(uniformIn(-0.99, 3), logUniform(-30, 10, false))},
	hal.Sin:  {f: func(x float64, _ hal.Args) float64 { return math.Sin(x) }, gen: mixed(uniformIn(-10, 10), uniformIn(-100, 100))},
	hal.Cos:  {f: func(x float64, _ hal.Args) float64 { return math.Cos(x) }, gen: mixed(uniformIn(-10, 10), uniformIn(-100, 100))},
	hal.Tan:  {f: func(x float64, _ hal.Args) float64 { return math.Tan(x) }, gen: mixed(uniformIn(-1.5, 1.5), uniformIn(-10, 10))},
	hal.Tanh: {f: func(x float64, _ hal.Args) float64 { return math.Tanh(x) }, gen: activation, ieee: true},
	// erf saturates to ±1 in float32 past |x| ≈ 3.9: most draws fall before that.
	hal.Erf: {f: func(x float64, _ hal.Args) float64 { return math.Erf(x) },
		gen: mixed(uniformIn(-4.5, 4.5), logUniform(-20, 2, true)), ieee: true},
	hal.Sigmoid: {f: func(x float64, _ hal.Args) float64 { return sigmoid(x) },
		gen: mixed(uniformIn(-30, 30), logUniform(-20, 0, true)), ieee: true},
	hal.ReLU: {f: func(x float64, _ hal.Args) float64 {
		if x > 0 || math.IsNaN(x) {
			return x
		}
		return 0
	}, gen: wide, ieee: true},
	hal.LeakyReLU: {f: func(x float64, a hal.Args) float64 {
		if x >= 0 {
			return x
		}
		return a.Alpha * x
	}, gen: wide, args: []hal.Args{{Alpha: 0.01}, {Alpha: 0.2}, {Alpha: 0.25}}, ieee: true},
	hal.ELU: {f: func(x float64, a hal.Args) float64 {
		if x > 0 {
			return x
		}
		return a.Alpha * math.Expm1(x)
	}, gen: activation, args: []hal.Args{{Alpha: 1}, {Alpha: 0.5}}},
	hal.GELU: {f: func(x float64, _ hal.Args) float64 {
		// x·Φ(x) with erfc, which does not cancel for x ≪ 0.
		return x / 2 * math.Erfc(-x/math.Sqrt2)
	}, gen: activation},
	hal.GELUTanh: {f: func(x float64, _ hal.Args) float64 {
		// x/2·(1+tanh z) = x·σ(2z), without cancellation for x ≪ 0.
		z := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
		return x * sigmoid(2*z)
	}, gen: activation},
	hal.SiLU: {f: func(x float64, _ hal.Args) float64 { return x * sigmoid(x) }, gen: activation},
	hal.Softplus: {f: func(x float64, a hal.Args) float64 {
		if a.Alpha*x > a.Beta {
			return x
		}
		return softplus(a.Alpha*x) / a.Alpha
	}, gen: activation, args: []hal.Args{{Alpha: 1, Beta: 20}, {Alpha: 2, Beta: 10}, {Alpha: 0.5, Beta: 5}}},
	hal.Clamp: {f: func(x float64, a hal.Args) float64 {
		if math.IsNaN(x) {
			return x
		}
		return math.Min(math.Max(x, a.Alpha), a.Beta)
	}, gen: wide, ieee: true, args: []hal.Args{{Alpha: -0.5, Beta: 0.75}, {Alpha: math.Inf(-1), Beta: 0.25},
		{Alpha: -300.7, Beta: math.Inf(1)}, {Alpha: -300.7, Beta: 450.9}, {Alpha: 1, Beta: 0}}},
}

// sigmoid is 1/(1+e⁻ˣ) with the exponent kept ≤ 0, so it neither
// overflows nor cancels.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softplus is ln(1+eˣ) without overflow or cancellation.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// unaryArgs returns op's argument sets, with Int32 truncating them toward
// zero as the contract says.
func unaryArgs(op hal.UnaryOp, dt hal.DType) []hal.Args {
	args := unaryDefs[op].args
	if args == nil {
		args = []hal.Args{{}}
	}
	if !dt.IsInteger() {
		return args
	}
	out := make([]hal.Args, len(args))
	for i, a := range args {
		out[i] = hal.Args{Alpha: math.Trunc(a.Alpha), Beta: math.Trunc(a.Beta)}
	}
	return out
}

// refUnary applies op to every x, in float64.
func refUnary(op hal.UnaryOp, x []float64, a hal.Args) []float64 {
	f := unaryDefs[op].f
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = f(v, a)
	}
	return out
}

// unaryBounds returns each element's allowed error under IEEE arithmetic
// (see bound), or nil when op is exact in dt. [suite.check] adds the WGSL
// latitude of op's divisions and square roots; a WGSL device may also
// flush a subnormal intermediate, which costs minNormal times what
// multiplies it afterwards: |x| for x·Φ(x), x·σ(x) and x·σ(2z) (GELU(−13)
// = −13·Φ(−13), with Φ(−13) subnormal in float32), 1 elsewhere.
func (s *suite) unaryBounds(op hal.UnaryOp, dt hal.DType, x []float64, a hal.Args) []float64 {
	b, ok := unaryTol[op]
	if !ok || dt.IsInteger() || b == (bound{}) {
		return nil
	}
	f := unaryDefs[op].f
	u := unitRoundoff(dt)
	flush := s.arith.FlushFloor(dt)
	tol := make([]float64, len(x))
	for i, v := range x {
		want := f(v, a)
		scale := 1.0
		switch op {
		case hal.GELU, hal.GELUTanh:
			scale = math.Abs(v)
		case hal.ELU:
			scale = math.Abs(a.Alpha)
		}
		tol[i] = u*(b.Rel*math.Abs(want)+b.Cond*condition(func(x float64) float64 { return f(x, a) }, v)+b.Abs*scale) +
			flush*max(1, math.Abs(v))
	}
	return tol
}

// condition is |x·f′(x)| by a central difference: how far f moves when x
// moves by a relative u, in units of u.
func condition(f func(float64) float64, x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	const h = 0x1p-20
	d := (f(x*(1+h)) - f(x*(1-h))) / (2 * h)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return 0
	}
	return math.Abs(d)
}

// unarySpecials are the inputs whose results the contract (or IEEE 754,
// which the contract's formulas inherit) defines: NaN in, NaN out; the
// infinities where def.ieee; signed zeros; the dtype's extremes; and the
// places where a naive formula overflows or cancels.
func unarySpecials(op hal.UnaryOp, dt hal.DType) []float64 {
	if dt.IsInteger() {
		if op == hal.Square {
			return []float64{0, 1, -1, 7, -7, 46340, -46340, 1000, -1000}
		}
		return []float64{0, 1, -1, 7, -7, math.MaxInt32, math.MinInt32 + 1, 1000, -1000}
	}
	big := math.Min(maxFinite(dt)/4, 1e30)
	out := []float64{nan, 0, negZ, 1, -1, 0.5, -0.5, 20, -20, 100, -100, big, -big, 87, -87, 89, -89}
	if unaryDefs[op].ieee {
		out = append(out, inf, -inf, maxFinite(dt)/4, -maxFinite(dt)/4, minNormal(dt)*4, -minNormal(dt)*4)
	}
	switch op {
	case hal.Sin, hal.Cos, hal.Tan:
		out = []float64{nan, 0, negZ, 1, -1, math.Pi / 2, -math.Pi, 3 * math.Pi / 4, 1e-3, -1e-3, 50, -50}
	case hal.Log1p:
		out = append(out, 1e-10, -1e-10, 1e-30, -0.75)
	case hal.Expm1:
		// where expm1_f changes formula (±ln2/2, 20, −18) and near 0
		out = append(out, 1e-10, -1e-10, 1e-30, 0.34, -0.35, 19.9, 20.1, -17.9, -18.1)
	case hal.Erf:
		// where formulas change: the series near 0, erfc further out, ±1
		out = append(out, 1e-10, -1e-10, 0.4999, 0.7, -0.9, 2, -3, 3.9, -3.9, 4, -4, 4.1, 11)
	case hal.Square:
		out = append(out, 1e20, -1e20) // overflow to +Inf in float32
	}
	return out
}

func testUnary(t *testing.T, s *suite, op hal.UnaryOp, dt hal.DType) {
	def := unaryDefs[op]
	args := unaryArgs(op, dt)
	run := func(t *testing.T, c ewCase, a hal.Args, g gen) {
		rng := newRand(t.Name())
		src := s.operand(t, dt, c.shape, c.in[0], bind(g, rng, dt))
		dst := src
		if c.inPlace < 0 {
			dst = s.output(t, dt, c.shape, c.dst)
		}
		x := src.values()
		require.NoError(t, s.dev.Unary(op, dst.View, src.View, a), "Unary(%v, %v)", op, c.name)
		got := s.result(t, dst)
		want := refUnary(op, x, a)
		in := func(i int) string { return fmt.Sprintf("x=%.9g", x[i]) }
		s.check(t, op.Kernel(), dt, got, want, s.unaryBounds(op, dt, x, a), in)
	}
	for _, c := range ewCases(1) {
		t.Run(c.name, func(t *testing.T) { run(t, c, args[0], def.gen) })
	}
	for i, a := range args[1:] {
		t.Run(fmt.Sprintf("args%d/n=1025", i+1), func(t *testing.T) {
			run(t, ewCase{shape: []int{1025}, in: []layout{contiguous}, dst: contiguous, inPlace: -1}, a, def.gen)
		})
	}
	for i, a := range args {
		t.Run(fmt.Sprintf("specials/args%d", i), func(t *testing.T) {
			x := unarySpecials(op, dt)
			rng := newRand(t.Name())
			src := s.fromValues(t, dt, []int{len(x)}, withOffset(1), x, rng)
			dst := s.output(t, dt, []int{len(x)}, contiguous)
			require.NoError(t, s.dev.Unary(op, dst.View, src.View, a))
			got := s.result(t, dst)
			xs := src.values()
			want := refUnary(op, xs, a)
			in := func(i int) string { return fmt.Sprintf("x=%g", xs[i]) }
			s.check(t, op.Kernel(), dt, got, want, s.unaryBounds(op, dt, xs, a), in)
			if (op == hal.Neg || op == hal.Abs) && dt.IsFloat() {
				checkZeroSigns(t, got, want, in)
			}
		})
	}
	if op == hal.Exp && dt == hal.Float32 {
		t.Run(fmt.Sprintf("n=%d", largeN), func(t *testing.T) {
			run(t, ewCase{shape: []int{largeN}, in: []layout{contiguous}, dst: contiguous, inPlace: -1}, args[0], def.gen)
		})
	}
}
