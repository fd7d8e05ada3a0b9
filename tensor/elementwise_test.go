package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

type binaryCase struct {
	name   string
	op     func(a, b *Tensor) *Tensor
	ref    func(a, b float64) float64
	family opFamily
	lo, hi float64 // input range; b avoids (−0.5, 0.5) for Div
}

func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func nanMin(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

var binaryCases = []binaryCase{
	{"Add", Add, func(a, b float64) float64 { return a + b }, familyExact, -4, 4},
	{"Sub", Sub, func(a, b float64) float64 { return a - b }, familyExact, -4, 4},
	{"Mul", Mul, func(a, b float64) float64 { return a * b }, familyExact, -4, 4},
	{"Div", Div, func(a, b float64) float64 { return a / b }, familyDivide, -4, 4},
	{"Pow", Pow, math.Pow, familyTranscendental, 0.25, 3},
	{"Maximum", Maximum, nanMax, familyExact, -4, 4},
	{"Minimum", Minimum, nanMin, familyExact, -4, 4},
	{"Eq", Eq, func(a, b float64) float64 { return boolean(a == b) }, familyExact, -4, 4},
	{"Ne", Ne, func(a, b float64) float64 { return boolean(a != b) }, familyExact, -4, 4},
	{"Lt", Lt, func(a, b float64) float64 { return boolean(a < b) }, familyExact, -4, 4},
	{"Le", Le, func(a, b float64) float64 { return boolean(a <= b) }, familyExact, -4, 4},
	{"Gt", Gt, func(a, b float64) float64 { return boolean(a > b) }, familyExact, -4, 4},
	{"Ge", Ge, func(a, b float64) float64 { return boolean(a >= b) }, familyExact, -4, 4},
	{"ReLUGrad", ReLUGrad, reluGradRef, familyExact, -4, 4},
}

// reluGradRef is b ≤ 0 ? 0 : a; a NaN b passes a.
func reluGradRef(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a
}

// Shapes of broadcasting corner cases: size-1 axes, rank mismatch, scalars
// and zero-size axes.
var broadcastCases = [][2][]int{
	{{0}, {0}}, {{1}, {1}}, {{7}, {7}}, {{1000}, {1000}}, {{1025}, {1025}},
	{{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 3}, {4, 1}}, {{}, {7}}, {{5, 1}, {}},
	{{0, 3}, {1, 3}}, {{1, 0}, {4, 1}}, {{1}, {3, 0}},
}

// binaryInputs returns operands for op: values in [lo, hi), with b kept
// away from 0 for Div and equal to a at every third element so that the
// comparisons see ties.
func binaryInputs(t *testing.T, dtype DType, c binaryCase, sa, sb []int) (av, bv []float64) {
	rng := newRand(t)
	av = randomValues(rng, dtype, product(sa), c.lo, c.hi)
	bv = randomValues(rng, dtype, product(sb), c.lo, c.hi)
	for i := range bv {
		if c.name == "Div" && math.Abs(bv[i]) < 0.5 {
			bv[i] = roundTo(dtype, bv[i]+math.Copysign(1, bv[i]))
		}
		if i%3 == 0 && len(av) > 0 && c.name != "Div" {
			bv[i] = av[i%len(av)]
		}
	}
	return av, bv
}

func binaryWant(c binaryCase, dtype DType, av, bv []float64, sa, sb, shape []int) []float64 {
	want := make([]float64, product(shape))
	for i := range want {
		want[i] = c.ref(av[broadcastIndex(shape, sa, i)], bv[broadcastIndex(shape, sb, i)])
		switch {
		case dtype == Int32 && c.name != "Div":
			want[i] = float64(int32(want[i]))
		case dtype == Int64 && c.name != "Div":
			want[i] = float64(int64(want[i])) // the inputs keep it exact
		}
	}
	return want
}

// resultType is what a binary op returns for operands of dtype.
func resultType(name string, dtype DType) DType {
	switch {
	case name == "Eq" || name == "Ne" || name == "Lt" || name == "Le" || name == "Gt" || name == "Ge":
		return Int32
	case name == "Div" && dtype.IsInteger():
		return Float32
	}
	return dtype
}

func TestBinaryOps(t *testing.T) { forEachDevice(t, testBinaryOps) }

func testBinaryOps(t *testing.T, dev *Device) {
	for _, c := range binaryCases {
		t.Run(c.name, func(t *testing.T) {
			forEachDType(t, dev, c.name, probeBinary(dev, c.op), func(t *testing.T, dtype DType) {
				for _, shapes := range broadcastCases {
					sa, sb := shapes[0], shapes[1]
					t.Run(fmt.Sprintf("%v,%v", sa, sb), func(t *testing.T) {
						av, bv := binaryInputs(t, dtype, c, sa, sb)
						a, b := upload(dev, dtype, av, sa...), upload(dev, dtype, bv, sb...)
						got := c.op(a, b)
						defer releaseAll(a, b, got)

						shape := broadcastShapes("test", sa, sb)
						assert.Equal(t, shape, got.Shape())
						rt := resultType(c.name, dtype)
						assert.Equal(t, rt, got.DType())
						want := binaryWant(c, dtype, av, bv, sa, sb, shape)
						checkClose(t, want, read64(t, got), familyTolOn(dev, rt, c.family, want))
					})
				}
				// Non-contiguous operands: kernels read the strides.
				for _, l := range layouts[1:] {
					t.Run(l.String(), func(t *testing.T) {
						shape := []int{3, 5}
						av, bv := binaryInputs(t, dtype, c, shape, shape)
						a, b := uploadAs(dev, dtype, av, shape, l), uploadAs(dev, dtype, bv, shape, packed)
						got := c.op(a, b)
						swapped := c.op(b, a)
						defer releaseAll(a, b, got, swapped)
						rt := resultType(c.name, dtype)
						want := binaryWant(c, dtype, av, bv, shape, shape, shape)
						checkClose(t, want, read64(t, got), familyTolOn(dev, rt, c.family, want))
						wantSwapped := binaryWant(c, dtype, bv, av, shape, shape, shape)
						checkClose(t, wantSwapped, read64(t, swapped), familyTolOn(dev, rt, c.family, wantSwapped))
					})
				}
			})
		})
	}
}

func TestScalarOps(t *testing.T) { forEachDevice(t, testScalarOps) }

func testScalarOps(t *testing.T, dev *Device) {
	methods := map[string]func(*Tensor, float64) *Tensor{
		"Add": (*Tensor).AddScalar, "Sub": (*Tensor).SubScalar, "Mul": (*Tensor).MulScalar,
		"Div": (*Tensor).DivScalar, "Pow": (*Tensor).PowScalar, "Maximum": (*Tensor).MaximumScalar,
		"Minimum": (*Tensor).MinimumScalar, "Eq": (*Tensor).EqScalar, "Ne": (*Tensor).NeScalar,
		"Lt": (*Tensor).LtScalar, "Le": (*Tensor).LeScalar, "Gt": (*Tensor).GtScalar, "Ge": (*Tensor).GeScalar,
		"ReLUGrad": (*Tensor).ReLUGradScalar,
	}
	for _, c := range binaryCases {
		method := methods[c.name]
		t.Run(c.name+"Scalar", func(t *testing.T) {
			forEachDType(t, dev, c.name+"Scalar", probeUnary(dev, func(x *Tensor) *Tensor { return method(x, 1) }), func(t *testing.T, dtype DType) {
				s := 1.5
				if dtype.IsInteger() {
					s = 2
				}
				if c.name == "Div" && dtype.IsInteger() {
					s = 2.5 // Int32 divides in float32, keeping the fraction
				}
				shape := []int{4, 7}
				av := randomValues(newRand(t), dtype, product(shape), c.lo, c.hi)
				av[0] = roundTo(dtype, s) // a tie for the comparisons
				a := uploadAs(dev, dtype, av, shape, transposed)
				got := method(a, s)
				defer releaseAll(a, got)
				want := make([]float64, len(av))
				for i := range want {
					want[i] = c.ref(av[i], s)
				}
				rt := resultType(c.name, dtype)
				assert.Equal(t, rt, got.DType())
				checkClose(t, want, read64(t, got), familyTolOn(dev, rt, c.family, want))
			})
		})
	}
}

type unaryCase struct {
	name   string
	op     func(*Tensor) *Tensor
	ref    func(float64) float64
	family opFamily
	lo, hi float64
}

func erfGELU(x float64) float64 { return x / 2 * (1 + math.Erf(x/math.Sqrt2)) }

func tanhGELU(x float64) float64 {
	return x / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func softplus(beta, threshold float64) func(float64) float64 {
	return func(x float64) float64 {
		if beta*x > threshold {
			return x
		}
		return math.Log1p(math.Exp(beta*x)) / beta
	}
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

var unaryCases = []unaryCase{
	{"Neg", Neg, func(x float64) float64 { return -x }, familyExact, -4, 4},
	{"Abs", Abs, math.Abs, familyExact, -4, 4},
	{"Sign", Sign, sign, familyExact, -4, 4},
	{"Reciprocal", Reciprocal, func(x float64) float64 { return 1 / x }, familyTranscendental, 0.25, 4},
	{"Sqrt", Sqrt, math.Sqrt, familyTranscendental, 0, 4},
	{"Rsqrt", Rsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }, familyTranscendental, 0.25, 4},
	{"Square", Square, func(x float64) float64 { return x * x }, familyExact, -4, 4},
	{"Exp", Exp, math.Exp, familyTranscendental, -4, 4},
	{"Expm1", Expm1, math.Expm1, familyTranscendental, -4, 4},
	{"Log", Log, math.Log, familyTranscendental, 0.01, 8},
	{"Log1p", Log1p, math.Log1p, familyTranscendental, -0.9, 4},
	{"Sin", Sin, math.Sin, familyTranscendental, -4, 4},
	{"Cos", Cos, math.Cos, familyTranscendental, -4, 4},
	{"Tan", Tan, math.Tan, familyTranscendental, -1.2, 1.2},
	{"Tanh", Tanh, math.Tanh, familyTranscendental, -4, 4},
	{"Erf", Erf, math.Erf, familyTranscendental, -4, 4},
	{"Sigmoid", Sigmoid, sigmoid, familyTranscendental, -8, 8},
	{"ReLU", ReLU, func(x float64) float64 { return math.Max(x, 0) }, familyExact, -4, 4},
	{"LeakyReLU", func(x *Tensor) *Tensor { return x.LeakyReLU(0.1) },
		func(x float64) float64 { return math.Max(x, 0) + 0.1*math.Min(x, 0) }, familyExact, -4, 4},
	{"ELU", func(x *Tensor) *Tensor { return x.ELU(0.7) },
		func(x float64) float64 { return math.Max(x, 0) + 0.7*math.Expm1(math.Min(x, 0)) }, familyTranscendental, -4, 4},
	{"GELU", GELU, erfGELU, familyTranscendental, -4, 4},
	{"GELUTanh", GELUTanh, tanhGELU, familyTranscendental, -4, 4},
	{"SiLU", SiLU, func(x float64) float64 { return x * sigmoid(x) }, familyTranscendental, -4, 4},
	{"Softplus", func(x *Tensor) *Tensor { return x.Softplus(2, 3) }, softplus(2, 3), familyTranscendental, -4, 4},
	{"Clamp", func(x *Tensor) *Tensor { return x.Clamp(-1.5, 2.5) },
		func(x float64) float64 { return math.Min(math.Max(x, -1.5), 2.5) }, familyExact, -4, 4},
}

func TestUnaryOps(t *testing.T) { forEachDevice(t, testUnaryOps) }

func testUnaryOps(t *testing.T, dev *Device) {
	for _, c := range unaryCases {
		t.Run(c.name, func(t *testing.T) {
			forEachDType(t, dev, c.name, probeUnary(dev, c.op), func(t *testing.T, dtype DType) {
				ref := c.ref
				if c.name == "Clamp" && dtype.IsInteger() {
					// The bounds round inwards to −1 and 2.
					ref = func(x float64) float64 { return math.Min(math.Max(x, -1), 2) }
				}
				resultDType := dtype
				if dtype.IsInteger() && intPromoted[unaryKernel(c.name)] {
					resultDType = Float32
				}
				for _, n := range []int{0, 1, 7, 1000, 1025} {
					t.Run(fmt.Sprint(n), func(t *testing.T) {
						xv := randomValues(newRand(t), dtype, n, c.lo, c.hi)
						x := upload(dev, dtype, xv)
						got := c.op(x)
						defer releaseAll(x, got)
						assert.Equal(t, resultDType, got.DType())
						want := apply(ref, xv)
						checkClose(t, want, read64(t, got), familyTol(resultDType, c.family, want))
					})
				}
				for _, l := range layouts[1:] {
					t.Run(l.String(), func(t *testing.T) {
						shape := []int{2, 3, 5}
						xv := randomValues(newRand(t), dtype, product(shape), c.lo, c.hi)
						x := uploadAs(dev, dtype, xv, shape, l)
						got := c.op(x)
						defer releaseAll(x, got)
						assert.Equal(t, shape, got.Shape())
						want := apply(ref, xv)
						checkClose(t, want, read64(t, got), familyTol(resultDType, c.family, want))
					})
				}
			})
		})
	}
}

// unaryKernel is the kernel of the unary function name.
func unaryKernel(name string) hal.UnaryOp {
	for _, op := range hal.UnaryOps {
		if op.Info().Name == name {
			return op
		}
	}
	return hal.UnaryOp(255)
}

func apply(f func(float64) float64, xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func TestWhere(t *testing.T) { forEachDevice(t, testWhere) }

func testWhere(t *testing.T, dev *Device) {
	forEachDType(t, dev, "Where", probeUnary(dev, func(x *Tensor) *Tensor {
		c := upload(dev, Int32, []float64{1})
		defer c.Release()
		return Where(c, x, x)
	}), func(t *testing.T, dtype DType) {
		for _, shapes := range [][3][]int{
			{{7}, {7}, {7}}, {{3, 1}, {1, 4}, {}}, {{2, 3, 4}, {4}, {3, 1}}, {{0, 2}, {1}, {2}}, {{1025}, {1}, {1025}},
		} {
			t.Run(fmt.Sprint(shapes), func(t *testing.T) {
				rng := newRand(t)
				cv := randomValues(rng, Int32, product(shapes[0]), -1, 1)
				av := randomValues(rng, dtype, product(shapes[1]), -4, 4)
				bv := randomValues(rng, dtype, product(shapes[2]), -4, 4)
				cond, a, b := upload(dev, Int32, cv, shapes[0]...), upload(dev, dtype, av, shapes[1]...), upload(dev, dtype, bv, shapes[2]...)
				got := Where(cond, a, b)
				defer releaseAll(cond, a, b, got)
				shape := broadcastShapes("test", shapes[0], shapes[1], shapes[2])
				want := make([]float64, product(shape))
				for i := range want {
					if cv[broadcastIndex(shape, shapes[0], i)] != 0 {
						want[i] = av[broadcastIndex(shape, shapes[1], i)]
					} else {
						want[i] = bv[broadcastIndex(shape, shapes[2], i)]
					}
				}
				assert.Equal(t, shape, got.Shape())
				assert.Equal(t, want, read64(t, got))
			})
		}
	})
}

func TestCast(t *testing.T) { forEachDevice(t, testCast) }

func testCast(t *testing.T, dev *Device) {
	special := []float64{0, 1, -1, 2.5, -2.5, 3.75, -3.75, 65504, 1e10, -1e10, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, from := range DTypes {
		for _, to := range DTypes {
			t.Run(from.String()+"→"+to.String(), func(t *testing.T) {
				if !Supports(dev, "Cast", from) || !Supports(dev, "Cast", to) {
					t.Skipf("%v does not hold both dtypes", dev)
				}
				var values []float64
				for _, v := range special {
					if !from.IsInteger() || (!math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e9) {
						values = append(values, roundTo(from, v))
					}
				}
				values = append(values, randomValues(newRand(t), from, 1000, -100, 100)...)
				x := uploadAs(dev, from, values, []int{len(values)}, strided)
				y := x.Cast(to)
				defer releaseAll(x, y)
				require.Equal(t, to, y.DType())
				want := make([]float64, len(values))
				for i, v := range values {
					want[i] = castRef(to, v)
				}
				if from == Float64 && to == Float16 {
					// Our reference rounds twice (via float32); the kernel may
					// round once, which differs by an ulp at rare midpoints.
					checkClose(t, want, read64(t, y), familyTol(Float16, familyExact, want))
					return
				}
				assert.Equal(t, fmt.Sprint(want), fmt.Sprint(read64(t, y)))
			})
		}
	}
}

// castRef converts as the Copy kernel: floats to Int32 truncate and
// saturate, NaN becomes 0; floats round to nearest even.
func castRef(to DType, v float64) float64 {
	switch to {
	case Int32:
		return float64(toInt32(v))
	case Int64:
		return float64(toInt64(v))
	}
	if to == Float16 {
		return roundTo(Float16, float64(float32(v)))
	}
	return roundTo(to, v)
}

func TestContiguous(t *testing.T) { forEachDevice(t, testContiguous) }

func testContiguous(t *testing.T, dev *Device) {
	forEachDType(t, dev, "Contiguous", probeUnary(dev, (*Tensor).Contiguous), func(t *testing.T, dtype DType) {
		for _, l := range layouts {
			t.Run(l.String(), func(t *testing.T) {
				shape := []int{3, 4, 5}
				values := randomValues(newRand(t), dtype, product(shape), -8, 8)
				x := uploadAs(dev, dtype, values, shape, l)
				c := x.Contiguous()
				defer releaseAll(x, c)
				assert.True(t, c.IsContiguous())
				assert.Equal(t, l == packed || l == offset, x.IsContiguous())
				assert.Equal(t, values, read64(t, c))
				assert.Equal(t, values, read64(t, x))
			})
		}
	})
}
