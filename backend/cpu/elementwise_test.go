package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// unaryRef are float64 references written from the formulas of hal's op table.
var unaryRef = map[hal.UnaryOp]func(x float64, a hal.Args) float64{
	hal.Neg: func(x float64, _ hal.Args) float64 { return -x },
	hal.Abs: func(x float64, _ hal.Args) float64 { return math.Abs(x) },
	hal.Sign: func(x float64, _ hal.Args) float64 {
		if x != x || x == 0 {
			return x
		}
		return math.Copysign(1, x)
	},
	hal.Reciprocal: func(x float64, _ hal.Args) float64 { return 1 / x },
	hal.Sqrt:       func(x float64, _ hal.Args) float64 { return math.Sqrt(x) },
	hal.Rsqrt:      func(x float64, _ hal.Args) float64 { return 1 / math.Sqrt(x) },
	hal.Square:     func(x float64, _ hal.Args) float64 { return x * x },
	hal.Exp:        func(x float64, _ hal.Args) float64 { return math.Exp(x) },
	hal.Log:        func(x float64, _ hal.Args) float64 { return math.Log(x) },
	hal.Log1p:      func(x float64, _ hal.Args) float64 { return math.Log1p(x) },
	hal.Sin:        func(x float64, _ hal.Args) float64 { return math.Sin(x) },
	hal.Cos:        func(x float64, _ hal.Args) float64 { return math.Cos(x) },
	hal.Tan:        func(x float64, _ hal.Args) float64 { return math.Tan(x) },
	hal.Tanh:       func(x float64, _ hal.Args) float64 { return math.Tanh(x) },
	hal.Sigmoid:    func(x float64, _ hal.Args) float64 { return 1 / (1 + math.Exp(-x)) },
	hal.ReLU:       func(x float64, _ hal.Args) float64 { return nanOr(x, math.Max(x, 0)) },
	hal.LeakyReLU: func(x float64, a hal.Args) float64 {
		if x >= 0 {
			return x
		}
		return a.Alpha * x
	},
	hal.ELU: func(x float64, a hal.Args) float64 {
		if x > 0 {
			return x
		}
		return a.Alpha * (math.Exp(x) - 1)
	},
	hal.GELU: func(x float64, _ hal.Args) float64 { return x / 2 * (1 + math.Erf(x/math.Sqrt2)) },
	hal.GELUTanh: func(x float64, _ hal.Args) float64 {
		return x / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	},
	hal.SiLU: func(x float64, _ hal.Args) float64 { return x / (1 + math.Exp(-x)) },
	hal.Softplus: func(x float64, a hal.Args) float64 {
		if a.Alpha*x > a.Beta {
			return x
		}
		return math.Log(1+math.Exp(a.Alpha*x)) / a.Alpha
	},
	hal.Clamp: func(x float64, a hal.Args) float64 { return nanOr(x, math.Min(math.Max(x, a.Alpha), a.Beta)) },
	hal.Erf:   func(x float64, _ hal.Args) float64 { return math.Erf(x) },
	hal.Expm1: func(x float64, _ hal.Args) float64 { return math.Expm1(x) },
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func nanOr(x, y float64) float64 {
	if x != x {
		return x
	}
	return y
}

var specials = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -2.5, 1e-3, -1e-3, 3, 20, -20, 88, -100, math.Inf(1), math.Inf(-1), math.NaN()}

func testValues(rng *rand.Rand, n int, dt hal.DType) []float64 {
	v := append([]float64{}, specials...)
	for len(v) < n {
		v = append(v, rng.NormFloat64()*4)
	}
	for i := range v {
		if dt.IsInteger() {
			if math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				v[i] = 7
			}
			v[i] = math.Trunc(v[i] * 10)
		}
		v[i] = round(dt, v[i])
	}
	return v
}

func TestUnary(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, op := range hal.UnaryOps {
		for _, dt := range hal.DTypes {
			if !h.dev.Capabilities().Supports(op.Kernel(), dt) {
				assert.ErrorIs(t, h.dev.Unary(op, h.zeros(dt, 2), h.zeros(dt, 2), hal.Args{}), hal.ErrUnsupported)
				continue
			}
			t.Run(fmt.Sprintf("%v/%v", op, dt), func(t *testing.T) {
				args := hal.Args{Alpha: 0.3, Beta: 2.5}
				switch op {
				case hal.Softplus:
					args = hal.Args{Alpha: 1.5, Beta: 20}
				case hal.Clamp:
					args = hal.Args{Alpha: -1.7, Beta: math.Inf(1)}
				}
				const r, c = 7, 13 // the input is read transposed
				x := testValues(rng, r*c, dt)
				src := h.transposed(dt, x, r, c)
				dst := h.zeros(dt, r, c)
				require.NoError(t, h.dev.Unary(op, dst, src, args))
				want := make([]float64, len(x))
				for i, v := range x {
					a := args
					if dt == hal.Int32 {
						a = hal.Args{Alpha: math.Trunc(a.Alpha), Beta: math.Trunc(a.Beta)}
					}
					want[i] = round(dt, unaryRef[op](v, a))
					if dt == hal.Int32 {
						want[i] = float64(int32(int64(unaryRef[op](v, a))))
					}
				}
				near(t, want, h.read(dst), 4*eps(dt), 0x1p-24, "%v %v", op, dt)
			})
		}
	}
}

func TestUnaryInPlaceAndLarge(t *testing.T) {
	h := newHarness(t)
	n := 3*elementGrain + 5 // splits across goroutines
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%11) - 5
	}
	for _, dt := range []hal.DType{hal.Float32, hal.Float16, hal.Float64, hal.Int32} {
		v := h.view(dt, x, n)
		require.NoError(t, h.dev.Unary(hal.Square, v, v, hal.Args{}))
		got := h.read(v)
		for i := range x {
			require.Equal(t, x[i]*x[i], got[i], "%v element %d", dt, i)
		}
	}
}

var binaryRef = map[hal.BinaryOp]func(a, b float64) float64{
	hal.Add: func(a, b float64) float64 { return a + b },
	hal.Sub: func(a, b float64) float64 { return a - b },
	hal.Mul: func(a, b float64) float64 { return a * b },
	hal.Div: func(a, b float64) float64 { return a / b },
	hal.Pow: math.Pow,
	hal.Maximum: func(a, b float64) float64 {
		if a != a || b != b {
			return math.NaN()
		}
		return math.Max(a, b)
	},
	hal.Minimum: func(a, b float64) float64 {
		if a != a || b != b {
			return math.NaN()
		}
		return math.Min(a, b)
	},
	hal.Eq: func(a, b float64) float64 { return b2f(a == b) },
	hal.Ne: func(a, b float64) float64 { return b2f(a != b) },
	hal.Lt: func(a, b float64) float64 { return b2f(a < b) },
	hal.Le: func(a, b float64) float64 { return b2f(a <= b) },
	hal.Gt: func(a, b float64) float64 { return b2f(a > b) },
	hal.Ge: func(a, b float64) float64 { return b2f(a >= b) },
	hal.ReLUGrad: func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a
	},
}

// TestBinary broadcasts a [r, 1] column against a [1, c] row into [r, c].
func TestBinary(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(5, 6))
	const r, c = 17, 19
	for _, op := range hal.BinaryOps {
		for _, dt := range hal.DTypes {
			if !h.dev.Capabilities().Supports(op.Kernel(), dt) {
				continue
			}
			t.Run(fmt.Sprintf("%v/%v", op, dt), func(t *testing.T) {
				xa, xb := testValues(rng, r, dt), testValues(rng, c, dt)
				rng.Shuffle(len(xb), func(i, j int) { xb[i], xb[j] = xb[j], xb[i] })
				xb[0] = xa[0] // some equal pairs
				a := hal.View{Buf: h.buffer(dt, xa), DType: dt, Shape: []int{r, c}, Strides: []int{1, 0}}
				b := hal.View{Buf: h.buffer(dt, xb), DType: dt, Shape: []int{r, c}, Strides: []int{0, 1}}
				odt := dt
				if op.IsComparison() {
					odt = hal.Int32
				}
				dst := h.zeros(odt, r, c)
				require.NoError(t, h.dev.Binary(op, dst, a, b))
				want := make([]float64, 0, r*c)
				for i := range r {
					for j := range c {
						w := binaryRef[op](xa[i], xb[j])
						if dt == hal.Int32 && !op.IsComparison() {
							w = float64(int32(int64(w)))
						}
						want = append(want, round(odt, w))
					}
				}
				near(t, want, h.read(dst), 2*eps(dt), 0, "%v %v", op, dt)
			})
		}
	}
}

func TestWhere(t *testing.T) {
	h := newHarness(t)
	for _, dt := range hal.DTypes {
		cond := h.view(hal.Int32, []float64{0, 1, -5, 0, 7, 0}, 2, 3)
		a := h.view(dt, []float64{1, 2, 3}, 3)
		a = hal.View{Buf: a.Buf, DType: dt, Shape: []int{2, 3}, Strides: []int{0, 1}}
		b := h.view(dt, []float64{10, 20, 30, 40, 50, 60}, 2, 3)
		dst := h.zeros(dt, 2, 3)
		require.NoError(t, h.dev.Where(dst, cond, a, b))
		assert.Equal(t, []float64{10, 2, 3, 40, 2, 60}, h.read(dst), "%v", dt)
	}
}

func TestCopyConversions(t *testing.T) {
	h := newHarness(t)
	x := []float64{1.5, -2.7, math.NaN(), 3e9, -3e9, math.Inf(1), 65520, 1 + 0x1p-11 + 0x1p-40, 0.1}
	for _, from := range hal.DTypes {
		for _, to := range hal.DTypes {
			in := make([]float64, len(x))
			for i, v := range x {
				in[i] = round(from, v)
				if from == hal.Int32 {
					in[i] = float64(toInt32(v))
				}
			}
			src := h.transposed(from, in, 3, 3)
			dst := h.zeros(to, 3, 3)
			require.NoError(t, h.dev.Copy(dst, src))
			want := make([]float64, len(in))
			for i, v := range in {
				want[i] = round(to, v)
				if to == hal.Int32 {
					want[i] = float64(toInt32(v))
				}
			}
			near(t, want, h.read(dst), 0, 0, "%v → %v", from, to)
		}
	}
}

func TestFill(t *testing.T) {
	h := newHarness(t)
	for _, dt := range hal.DTypes {
		buf := h.buffer(dt, make([]float64, 12))
		// A transposed dst: element (i, j) at j*3+i.
		v := hal.View{Buf: buf, DType: dt, Shape: []int{3, 4}, Strides: []int{1, 3}}
		require.NoError(t, h.dev.Fill(v, 1.25, -0.5))
		want := make([]float64, 12)
		for i := range want {
			want[i] = round(dt, 1.25-0.5*float64(i))
			if dt == hal.Int32 {
				want[i] = math.Trunc(1.25 - 0.5*float64(i))
			}
		}
		assert.Equal(t, want, h.read(v), "%v", dt)
	}
}

func TestRandom(t *testing.T) {
	h := newHarness(t)
	const n = 1 << 14
	var seed, offset uint64 = 0x0123456789abcdef, 1 << 33
	u := h.zeros(hal.Float32, n)
	require.NoError(t, h.dev.Random(u, hal.Uniform, 0, seed, offset))
	got := h.read(u)
	for i := range 8 {
		ctr := offset + uint64(i)
		w := philox([4]uint32{uint32(ctr), uint32(ctr >> 32)}, [2]uint32{uint32(seed), uint32(seed >> 32)})
		assert.Equal(t, float64(w[0]>>8)/(1<<24), got[i])
	}
	mean := 0.0
	for _, v := range got {
		require.True(t, v >= 0 && v < 1)
		mean += v / n
	}
	assert.InDelta(t, 0.5, mean, 0.01)

	for _, dt := range []hal.DType{hal.Float64, hal.Float16} {
		g := h.zeros(dt, n)
		require.NoError(t, h.dev.Random(g, hal.Normal, 0, seed, 0))
		var s, s2 float64
		for _, v := range h.read(g) {
			s += v / n
			s2 += v * v / n
		}
		assert.InDelta(t, 0, s, 0.03, "%v mean", dt)
		assert.InDelta(t, 1, s2, 0.05, "%v variance", dt)
	}
	b := h.zeros(hal.Float32, n)
	require.NoError(t, h.dev.Random(b, hal.Bernoulli, 0.25, seed, 0))
	ones := 0.0
	for _, v := range h.read(b) {
		require.True(t, v == 0 || v == 1)
		ones += v / n
	}
	assert.InDelta(t, 0.25, ones, 0.02)
	assert.ErrorIs(t, h.dev.Random(h.zeros(hal.Int32, 4), hal.Uniform, 0, 1, 0), hal.ErrUnsupported)
}

// TestReLUGradBits checks ReLU's fused backward bit for bit (signed zeros
// and NaN included) on every float dtype, odd lengths, a strided b and a
// broadcast scalar b: a where b > 0 or b is NaN, +0 where b ≤ 0 (−0
// included), as the comparison and Where it replaces gave.
func TestReLUGradBits(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(11, 12))
	ref := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a
	}
	same := func(want, got float64) bool {
		if want != want {
			return got != got
		}
		return want == got && math.Signbit(want) == math.Signbit(got)
	}
	for _, simd := range []bool{true, false} { // the AVX2 kernel, then the portable loop
		defer func(was bool) { hasSIMD = was }(hasSIMD)
		hasSIMD = hasSIMD && simd
		testReLUGradBits(t, h, rng, simd, ref, same)
	}
}

func testReLUGradBits(t *testing.T, h harness, rng *rand.Rand, simd bool, ref func(a, b float64) float64, same func(want, got float64) bool) {
	for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
		for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 37, 1031} {
			xa, xb := testValues(rng, n, dt)[:n], testValues(rng, 2*n, dt)[:2*n]
			rng.Shuffle(len(xb), func(i, j int) { xb[i], xb[j] = xb[j], xb[i] })
			for i := 0; i < n; i += 5 {
				xa[i] = math.Copysign(0, -1) // −0 passes where b > 0
			}
			xb[0], xb[1] = math.Copysign(0, -1), 0
			a := h.view(dt, xa, n)
			// b: every other element of xb, a strided view.
			b := hal.View{Buf: h.buffer(dt, xb), DType: dt, Shape: []int{n}, Strides: []int{2}}
			dst := h.zeros(dt, n)
			require.NoError(t, h.dev.Binary(hal.ReLUGrad, dst, a, b))
			got := h.read(dst)
			for i := range n {
				w := round(dt, ref(xa[i], xb[2*i]))
				require.True(t, same(w, got[i]), "simd %v %v n=%d [%d]: a %v b %v: got %v want %v", simd, dt, n, i, xa[i], xb[2*i], got[i], w)
			}
			for _, s := range []float64{-1.5, math.Copysign(0, -1), 0, 2, math.NaN()} {
				sb := hal.View{Buf: h.buffer(dt, []float64{s}), DType: dt, Shape: []int{n}, Strides: []int{0}}
				require.NoError(t, h.dev.Binary(hal.ReLUGrad, dst, a, sb))
				got := h.read(dst)
				for i := range n {
					w := round(dt, ref(xa[i], s))
					require.True(t, same(w, got[i]), "simd %v %v n=%d scalar b %v [%d]: got %v want %v", simd, dt, n, s, i, got[i], w)
				}
			}
		}
	}
}
