package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// binaryDef is the suite's own definition of a binary kernel.
type binaryDef struct {
	f          func(a, b float64) float64
	genA, genB gen
}

// ties draws from a handful of values, so comparisons, Maximum and Minimum
// meet equal operands often.
var ties = mixed(wide, perDType(func(rng *rand.Rand, _ hal.DType) float64 { return float64(rng.IntN(7)-3) / 2 }, intsIn(-3, 3)))

func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var binaryDefs = map[hal.BinaryOp]binaryDef{
	hal.Add: {f: func(a, b float64) float64 { return a + b }, genA: wide, genB: wide},
	hal.Sub: {f: func(a, b float64) float64 { return a - b }, genA: wide, genB: wide},
	hal.Mul: {f: func(a, b float64) float64 { return a * b }, genA: wide, genB: wide},
	hal.Div: {f: func(a, b float64) float64 { return a / b }, genA: wide, genB: logUniform(-10, 10, true)},
	// Go's math.Pow has C99's special cases (Annex F), which is what "as
	// C's pow" means.
	hal.Pow: {f: math.Pow, genA: logUniform(-4, 4, false), genB: uniformIn(-4, 4)},
	hal.Maximum: {f: func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return nan
		}
		return math.Max(a, b)
	}, genA: ties, genB: ties},
	hal.Minimum: {f: func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return nan
		}
		return math.Min(a, b)
	}, genA: ties, genB: ties},
	hal.Eq: {f: func(a, b float64) float64 { return boolean(a == b) }, genA: ties, genB: ties},
	hal.Ne: {f: func(a, b float64) float64 { return boolean(a != b) }, genA: ties, genB: ties},
	hal.Lt: {f: func(a, b float64) float64 { return boolean(a < b) }, genA: ties, genB: ties},
	hal.Le: {f: func(a, b float64) float64 { return boolean(a <= b) }, genA: ties, genB: ties},
	hal.Gt: {f: func(a, b float64) float64 { return boolean(a > b) }, genA: ties, genB: ties},
	hal.Ge: {f: func(a, b float64) float64 { return boolean(a >= b) }, genA: ties, genB: ties},
	// ties puts zeros (of both signs, where the generator draws them) and
	// negatives in b; a NaN b passes a.
	hal.ReLUGrad: {f: func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a
	}, genA: wide, genB: ties},
}

// resultType is the dtype a binary kernel writes for inputs of dt.
func resultType(op hal.BinaryOp, dt hal.DType) hal.DType {
	if op.IsComparison() {
		return hal.Int32
	}
	return dt
}

// binaryBounds returns each element's allowed error, or nil when op is
// exact or rounded once under IEEE arithmetic: everything but Pow.
//
// Pow's latitude on a WGSL device depends on the exponent, so it is
// applied here rather than by kernelLatitude: a negative integer
// exponent ends in a division (1/xⁿ), y = ½ is a square root, and any
// other exponent is e^(y·ln x), whose ln carries a quarter of a
// division's latitude (see "log") into the exponent, times the condition
// |y·ln x|.
func (s *suite) binaryBounds(op hal.BinaryOp, dt hal.DType, a, b []float64) []float64 {
	if op != hal.Pow {
		return nil
	}
	u := unitRoundoff(dt)
	divExtra := s.arith.extraRel(hal.Div.Kernel(), dt)
	sqrtExtra := s.arith.extraRel(hal.Sqrt.Kernel(), dt)
	logExtra := s.arith.extraRel(hal.Log.Kernel(), dt)
	tol := make([]float64, len(a))
	for i := range a {
		want := math.Pow(a[i], b[i])
		cond := math.Abs(want * b[i] * math.Log(math.Abs(a[i])))
		if math.IsNaN(cond) || math.IsInf(cond, 0) {
			cond = 0
		}
		rel := powTol.Rel
		switch y := b[i]; {
		case y == 0.5:
			rel += sqrtExtra
		case y < 0 && y == math.Trunc(y):
			rel += divExtra
		}
		tol[i] = u * (rel*math.Abs(want) + (powTol.Cond+logExtra)*cond)
	}
	return tol
}

func (s *suite) checkBinary(t testing.TB, op hal.BinaryOp, dt hal.DType, got, a, b []float64) {
	t.Helper()
	f := binaryDefs[op].f
	want := make([]float64, len(a))
	for i := range a {
		want[i] = f(a[i], b[i])
	}
	in := func(i int) string { return fmt.Sprintf("a=%.9g b=%.9g", a[i], b[i]) }
	kernel := op.Kernel()
	if op == hal.Pow {
		kernel = "" // binaryBounds applies its latitude
	}
	s.check(t, kernel, resultType(op, dt), got, want, s.binaryBounds(op, dt, a, b), in)
}

func testBinary(t *testing.T, s *suite, op hal.BinaryOp, dt hal.DType) {
	def := binaryDefs[op]
	out := resultType(op, dt)
	for _, c := range ewCases(2) {
		if c.inPlace >= 0 && out != dt {
			continue // an Int32 mask cannot overwrite float inputs
		}
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t.Name())
			a := s.operand(t, dt, c.shape, c.in[0], bind(def.genA, rng, dt))
			b := s.operand(t, dt, c.shape, c.in[1], bind(def.genB, rng, dt))
			av, bv := a.values(), b.values()
			var dst operand
			switch c.inPlace {
			case 0:
				dst = a
			case 1:
				dst = b
			default:
				dst = s.output(t, out, c.shape, c.dst)
			}
			require.NoError(t, s.dev.Binary(op, dst.View, a.View, b.View))
			s.checkBinary(t, op, dt, s.result(t, dst), av, bv)
		})
	}
	t.Run("same-input", func(t *testing.T) {
		// a and b the very same view: x op x.
		rng := newRand(t.Name())
		a := s.operand(t, dt, []int{1025}, withOffset(1), bind(def.genA, rng, dt))
		dst := s.output(t, out, []int{1025}, contiguous)
		require.NoError(t, s.dev.Binary(op, dst.View, a.View, a.View))
		s.checkBinary(t, op, dt, s.result(t, dst), a.values(), a.values())
	})
	t.Run("specials", func(t *testing.T) {
		// Every pair of special values, as an outer product: a varies
		// along axis 0 and b along axis 1, both broadcast with stride 0.
		x := floatSpecials(dt)
		switch {
		case dt.IsInteger() && op == hal.Mul:
			x = []float64{0, 1, -1, 7, -7, 1000, -1000, 46340, -46340}
		case dt.IsInteger():
			x = []float64{0, 1, -1, 7, -7, 1000, -1000, math.MaxInt32 / 2, math.MinInt32 / 2}
		case op == hal.Pow:
			x = append(x, 2, -2, 0.25, -3, 1e-3)
		}
		n := len(x)
		rng := newRand(t.Name())
		av := s.fromValues(t, dt, []int{n}, withOffset(2), x, rng)
		a := av.View
		a.Shape, a.Strides = []int{n, n}, []int{1, 0}
		b := av.View
		b.Shape, b.Strides = []int{n, n}, []int{0, 1}
		dst := s.output(t, out, []int{n, n}, contiguous)
		require.NoError(t, s.dev.Binary(op, dst.View, a, b))
		s.checkBinary(t, op, dt, s.result(t, dst), viewValues(a, av.store), viewValues(b, av.store))
	})
	if op == hal.Add && dt == hal.Float32 {
		t.Run(fmt.Sprintf("n=%d", largeN), func(t *testing.T) {
			rng := newRand(t.Name())
			a := s.operand(t, dt, []int{largeN}, contiguous, bind(def.genA, rng, dt))
			b := s.operand(t, dt, []int{largeN}, contiguous, bind(def.genB, rng, dt))
			dst := s.output(t, dt, []int{largeN}, contiguous)
			require.NoError(t, s.dev.Binary(op, dst.View, a.View, b.View))
			s.checkBinary(t, op, dt, s.result(t, dst), a.values(), b.values())
		})
	}
}

// testWhere checks dst = cond ≠ 0 ? a : b, with cond any Int32 (negative
// values are true too) and NaN in the branch not taken.
func testWhere(t *testing.T, s *suite, dt hal.DType) {
	condGen := intsIn(-2, 2)
	for _, c := range ewCases(3) {
		if c.inPlace == 0 && dt != hal.Int32 {
			continue // dst has a's dtype, cond is Int32
		}
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t.Name())
			cond := s.operand(t, hal.Int32, c.shape, c.in[0], bind(condGen, rng, hal.Int32))
			a := s.operand(t, dt, c.shape, c.in[1], bind(wide, rng, dt))
			b := s.operand(t, dt, c.shape, c.in[2], bind(wide, rng, dt))
			cv, av, bv := cond.values(), a.values(), b.values()
			var dst operand
			switch c.inPlace {
			case 0:
				dst = cond
			case 1:
				dst = a
			case 2:
				dst = b
			default:
				dst = s.output(t, dt, c.shape, c.dst)
			}
			require.NoError(t, s.dev.Where(dst.View, cond.View, a.View, b.View))
			checkExact(t, dt, s.result(t, dst), refWhere(cv, av, bv), nil)
		})
	}
	if dt.IsFloat() {
		t.Run("specials", func(t *testing.T) {
			x := floatSpecials(dt)
			n := len(x)
			rng := newRand(t.Name())
			cv := randomValues(n, condGen, rng, hal.Int32)
			y := make([]float64, n)
			for i := range y {
				y[i] = x[n-1-i]
			}
			cond := s.fromValues(t, hal.Int32, []int{n}, contiguous, cv, rng)
			a := s.fromValues(t, dt, []int{n}, contiguous, x, rng)
			b := s.fromValues(t, dt, []int{n}, withOffset(1), y, rng)
			dst := s.output(t, dt, []int{n}, contiguous)
			require.NoError(t, s.dev.Where(dst.View, cond.View, a.View, b.View))
			got := s.result(t, dst)
			want := refWhere(cv, a.values(), b.values())
			checkExact(t, dt, got, want, nil)
			checkZeroSigns(t, got, want, nil)
		})
	}
}

func refWhere(cond, a, b []float64) []float64 {
	out := make([]float64, len(cond))
	for i := range cond {
		if cond[i] != 0 {
			out[i] = a[i]
		} else {
			out[i] = b[i]
		}
	}
	return out
}
