package tensor

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// NaN and ±Inf propagate as IEEE 754 says, on both backends, through
// every elementwise op, reduction, matmul and the NN ops: no kernel
// clamps, skips a zero factor, or drops a NaN in a vectorized lane or a
// tail. References are float64 Go on the float32 inputs, rounded to
// float32; they follow PyTorch where it defines the value (max/min and
// ReLU propagate NaN, ArgMax takes the first NaN as the maximum, pow(1,
// NaN) = 1, softmax of a row holding +Inf or only −Inf is NaN, Gemm with
// beta 0 ignores C as BLAS and torch.addmm do). Special values sit at
// random positions of odd-sized inputs, so both the vector body and the
// scalar tail of every kernel see them.

var (
	nfNaN    = math.NaN()
	nfPosInf = math.Inf(1)
	nfNegInf = math.Inf(-1)
)

// nfSpecials are the values the inputs mix: the non-finite ones and a
// few finite ones they interact with (0·Inf, Inf−Inf, 1^NaN, …).
var nfSpecials = []float64{nfNaN, nfPosInf, nfNegInf, 0, math.Copysign(0, -1), 1, -1, 0.5, 2.5, -3}

// nfInput returns n values cycling through nfSpecials in a shuffled order.
func nfInput(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = nfSpecials[i%len(nfSpecials)]
	}
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// nfSame reports whether got matches want as IEEE values: NaN for NaN,
// the same infinity, else within a relative tolerance (GPUs approximate
// transcendental functions).
func nfSame(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}

// nfCheck compares element by element, rounding the references to
// float32 first (so that what overflows float32 is Inf there too).
func nfCheck(t *testing.T, what string, in []float64, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		w := float64(float32(want[i]))
		if !nfSame(float64(got[i]), w, tol) {
			x := math.NaN()
			if in != nil {
				x = in[i]
			}
			t.Fatalf("%s: element %d (input %v): got %v, want %v", what, i, x, got[i], w)
		}
	}
}

func nfUpload(dev *Device, v []float64, shape ...int) *Tensor {
	return upload(dev, Float32, v, shape...)
}

func nfSigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var nfUnary = []struct {
	name string
	f    func(*Tensor) *Tensor
	ref  func(float64) float64
}{
	{"Neg", Neg, func(x float64) float64 { return -x }},
	{"Abs", Abs, math.Abs},
	{"Sign", Sign, func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // 0, −0 and NaN
	}},
	{"Reciprocal", Reciprocal, func(x float64) float64 { return 1 / x }},
	{"Sqrt", Sqrt, math.Sqrt},
	{"Rsqrt", Rsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }},
	{"Square", Square, func(x float64) float64 { return x * x }},
	{"Exp", Exp, math.Exp},
	{"Log", Log, math.Log},
	{"Log1p", Log1p, math.Log1p},
	{"Expm1", Expm1, math.Expm1},
	{"Sin", Sin, math.Sin},
	{"Cos", Cos, math.Cos},
	{"Tan", Tan, math.Tan},
	{"Tanh", Tanh, math.Tanh},
	{"Sigmoid", Sigmoid, nfSigmoid},
	{"Erf", Erf, math.Erf},
	{"ReLU", ReLU, func(x float64) float64 {
		if x > 0 || math.IsNaN(x) {
			return x
		}
		return 0
	}},
	{"LeakyReLU", func(x *Tensor) *Tensor { return LeakyReLU(x, 0.1) }, func(x float64) float64 {
		if x >= 0 || math.IsNaN(x) {
			return x
		}
		return 0.1 * x
	}},
	{"ELU", func(x *Tensor) *Tensor { return ELU(x, 1.5) }, func(x float64) float64 {
		if x > 0 || math.IsNaN(x) {
			return x
		}
		return 1.5 * (math.Exp(x) - 1)
	}},
	// torch computes x·Φ(x) and x·sigmoid(x) as products, so −Inf gives
	// −Inf·0 = NaN there; +Inf gives +Inf.
	{"GELU", GELU, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }},
	{"GELUTanh", GELUTanh, func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}},
	{"SiLU", SiLU, func(x float64) float64 { return x * nfSigmoid(x) }},
	{"Softplus", func(x *Tensor) *Tensor { return Softplus(x, 1, 20) }, func(x float64) float64 {
		if x > 20 {
			return x
		}
		return math.Log1p(math.Exp(x))
	}},
	{"Clamp", func(x *Tensor) *Tensor { return Clamp(x, -1, 2) }, func(x float64) float64 {
		if math.IsNaN(x) {
			return x
		}
		return min(max(x, -1), 2)
	}},
}

func nfBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var nfBinary = []struct {
	name string
	f    func(a, b *Tensor) *Tensor
	ref  func(x, y float64) float64
}{
	{"Add", Add, func(x, y float64) float64 { return x + y }},
	{"Sub", Sub, func(x, y float64) float64 { return x - y }},
	{"Mul", Mul, func(x, y float64) float64 { return x * y }},
	{"Div", Div, func(x, y float64) float64 { return x / y }},
	{"Pow", Pow, math.Pow},
	{"Maximum", Maximum, func(x, y float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return max(x, y)
	}},
	{"Minimum", Minimum, func(x, y float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return min(x, y)
	}},
	{"Eq", Eq, func(x, y float64) float64 { return nfBool(x == y) }},
	{"Ne", Ne, func(x, y float64) float64 { return nfBool(x != y) }},
	{"Lt", Lt, func(x, y float64) float64 { return nfBool(x < y) }},
	{"Le", Le, func(x, y float64) float64 { return nfBool(x <= y) }},
	{"Gt", Gt, func(x, y float64) float64 { return nfBool(x > y) }},
	{"Ge", Ge, func(x, y float64) float64 { return nfBool(x >= y) }},
	{"ReLUGrad", ReLUGrad, reluGradRef},
}

func TestNonFiniteElementwise(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		rng := newRand(t)
		for _, n := range []int{37, 1031} {
			in := nfInput(rng, n)
			x := nfUpload(dev, in)
			for _, op := range nfUnary {
				y := op.f(x)
				want := make([]float64, n)
				for i, v := range in {
					want[i] = op.ref(v)
				}
				nfCheck(t, op.name, in, read(t, y), want, 2e-5)
				y.Release()
			}
			x.Release()
		}

		// Every pair of specials, twice over in shuffled order.
		var as, bs []float64
		for range 2 {
			for _, a := range nfSpecials {
				for _, b := range nfSpecials {
					as, bs = append(as, a), append(bs, b)
				}
			}
		}
		rng.Shuffle(len(as), func(i, j int) { as[i], as[j] = as[j], as[i]; bs[i], bs[j] = bs[j], bs[i] })
		a, b := nfUpload(dev, as), nfUpload(dev, bs)
		defer releaseAll(a, b)
		for _, op := range nfBinary {
			y := op.f(a, b)
			want := make([]float64, len(as))
			for i := range as {
				want[i] = op.ref(as[i], bs[i])
			}
			nfCheck(t, op.name, as, read(t, y), want, 1e-6)
			y.Release()
		}

		// A special scalar: no shortcut for ·0, +0 or ^0.
		for _, s := range []float64{nfNaN, nfPosInf, nfNegInf, 0} {
			for _, op := range []struct {
				name string
				f    func(*Tensor, float64) *Tensor
				ref  func(x, y float64) float64
			}{
				{"AddScalar", (*Tensor).AddScalar, func(x, y float64) float64 { return x + y }},
				{"MulScalar", (*Tensor).MulScalar, func(x, y float64) float64 { return x * y }},
				{"DivScalar", (*Tensor).DivScalar, func(x, y float64) float64 { return x / y }},
				{"PowScalar", (*Tensor).PowScalar, math.Pow},
				{"MaximumScalar", (*Tensor).MaximumScalar, nfBinary[5].ref},
			} {
				y := op.f(a, s)
				want := make([]float64, len(as))
				for i := range as {
					want[i] = op.ref(as[i], s)
				}
				nfCheck(t, op.name+"("+strconv.FormatFloat(s, 'g', -1, 64)+")", as, read(t, y), want, 1e-6)
				y.Release()
			}
		}
	})
}

// nfRows builds rows×n inputs, each row a pattern of specials in finite
// values near 1 (so that products neither overflow nor vanish).
func nfRows(rng *rand.Rand, n int) ([]float64, int) {
	patterns := [][]float64{
		{}, {nfNaN}, {nfPosInf}, {nfNegInf}, {nfPosInf, nfNegInf}, {nfNaN, nfPosInf}, {0, nfPosInf},
	}
	var out []float64
	for _, p := range patterns {
		row := make([]float64, n)
		for i := range row {
			row[i] = float64(float32((0.9 + 0.2*rng.Float64()) * float64(1-2*rng.IntN(2))))
		}
		for _, v := range p {
			row[rng.IntN(n)] = v
		}
		out = append(out, row...)
	}
	// A row of −Inf only: max −Inf, logsumexp −Inf, softmax NaN.
	for range n {
		out = append(out, nfNegInf)
	}
	return out, len(patterns) + 1
}

func nfReduce(row []float64, op string) float64 {
	n := float64(len(row))
	sum, prod, mx, mn := 0.0, 1.0, nfNegInf, nfPosInf
	argmax, argmin := 0, 0
	for i, v := range row {
		sum += v
		prod *= v
		if math.IsNaN(mx) {
			continue
		}
		if math.IsNaN(v) || v > mx {
			mx, argmax = v, i
		}
		if math.IsNaN(v) || v < mn {
			mn, argmin = v, i
		}
	}
	mean := sum / n
	ss := 0.0
	for _, v := range row {
		ss += (v - mean) * (v - mean)
	}
	switch op {
	case "Sum":
		return sum
	case "Prod":
		return prod
	case "Max":
		return mx
	case "Min":
		return mn
	case "ArgMax":
		return float64(argmax)
	case "ArgMin":
		return float64(argmin)
	case "Mean":
		return mean
	case "Var":
		return ss / (n - 1)
	case "Std":
		return math.Sqrt(ss / (n - 1))
	case "LogSumExp":
		if math.IsInf(mx, -1) {
			return nfNegInf
		}
		if math.IsInf(mx, 1) || math.IsNaN(mx) {
			// +Inf unless a NaN is present (Inf − Inf never happens:
			// torch adds the maximum back only when it is infinite).
			for _, v := range row {
				if math.IsNaN(v) {
					return nfNaN
				}
			}
			return nfPosInf
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		return mx + math.Log(s)
	}
	panic(op)
}

func TestNonFiniteReductions(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		rng := newRand(t)
		for _, n := range []int{37, 1031} {
			in, rows := nfRows(rng, n)
			x := nfUpload(dev, in, rows, n)
			for _, op := range []struct {
				name string
				f    func(*Tensor) *Tensor
			}{
				{"Sum", func(x *Tensor) *Tensor { return x.Sum([]int{1}, false) }},
				{"Prod", func(x *Tensor) *Tensor { return x.Prod([]int{1}, false) }},
				{"Max", func(x *Tensor) *Tensor { return x.Max([]int{1}, false) }},
				{"Min", func(x *Tensor) *Tensor { return x.Min([]int{1}, false) }},
				{"ArgMax", func(x *Tensor) *Tensor { return x.ArgMax([]int{1}, false) }},
				{"ArgMin", func(x *Tensor) *Tensor { return x.ArgMin([]int{1}, false) }},
				{"Mean", func(x *Tensor) *Tensor { return x.Mean([]int{1}, false) }},
				{"Var", func(x *Tensor) *Tensor { return x.Var([]int{1}, 1, false) }},
				{"Std", func(x *Tensor) *Tensor { return x.Std([]int{1}, 1, false) }},
				{"LogSumExp", func(x *Tensor) *Tensor { return x.LogSumExp([]int{1}, false) }},
			} {
				y := op.f(x)
				want := make([]float64, rows)
				for r := range rows {
					want[r] = nfReduce(in[r*n:(r+1)*n], op.name)
				}
				nfCheck(t, op.name+"/"+strconv.Itoa(n), nil, read(t, y), want, 1e-4)
				y.Release()
			}
			x.Release()
		}
	})
}

// nfMatMul is the float64 product of a [m, k] and b [k, n].
func nfMatMul(a, b []float64, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += a[i*k+l] * b[l*n+j]
			}
			out[i*n+j] = s
		}
	}
	return out
}

func TestNonFiniteMatMul(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		rng := newRand(t)
		for _, sz := range [][3]int{{5, 7, 3}, {67, 65, 63}} {
			m, k, n := sz[0], sz[1], sz[2]
			// Mostly finite, a few specials; B has zero rows, so some
			// Inf·0 products must give NaN, not be skipped.
			a := randomValues(rng, Float32, m*k, -1, 1)
			b := randomValues(rng, Float32, k*n, -1, 1)
			for i := 0; i < 4; i++ {
				a[rng.IntN(m*k)] = []float64{nfNaN, nfPosInf, nfNegInf, nfPosInf}[i]
			}
			zero := rng.IntN(k)
			for j := range n {
				b[zero*n+j] = 0
			}
			a[rng.IntN(m)*k+zero] = nfPosInf
			b[rng.IntN(k*n)] = nfNegInf
			x, y := nfUpload(dev, a, m, k), nfUpload(dev, b, k, n)
			want := nfMatMul(a, b, m, k, n)
			got := MatMul(x, y)
			nfCheck(t, "MatMul", nil, read(t, got), want, 1e-4)

			// Gemm: beta 0 ignores C's NaN, beta 1 propagates it.
			cv := make([]float64, m*n)
			cv[rng.IntN(m*n)] = nfNaN
			c := nfUpload(dev, cv, m, n)
			g0 := Gemm(1, x, false, y, false, 0, c)
			nfCheck(t, "Gemm(beta 0)", nil, read(t, g0), want, 1e-4)
			g1 := Gemm(1, x, false, y, false, 1, c)
			want1 := make([]float64, len(want))
			for i := range want {
				want1[i] = want[i] + cv[i]
			}
			nfCheck(t, "Gemm(beta 1)", nil, read(t, g1), want1, 1e-4)

			v := nfUpload(dev, b[:k]) // first column of neither; a row of B as a vector
			mv := MatVec(x, v)
			nfCheck(t, "MatVec", nil, read(t, mv), nfMatMul(a, b[:k], m, k, 1), 1e-4)
			releaseAll(x, y, got, c, g0, g1, v, mv)
		}
	})
}

func TestNonFiniteNN(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		rng := newRand(t)
		n := 37
		in, rows := nfRows(rng, n)
		x := nfUpload(dev, in, rows, n)
		defer x.Release()

		// Softmax and LogSoftmax along rows.
		sm, lsm := Softmax(x, 1), LogSoftmax(x, 1)
		var wantSM, wantLSM []float64
		for r := range rows {
			row := in[r*n : (r+1)*n]
			mx := nfReduce(row, "Max")
			s := 0.0
			for _, v := range row {
				s += math.Exp(v - mx)
			}
			for _, v := range row {
				wantSM = append(wantSM, math.Exp(v-mx)/s)
				wantLSM = append(wantLSM, v-mx-math.Log(s))
			}
		}
		nfCheck(t, "Softmax", in, read(t, sm), wantSM, 1e-5)
		nfCheck(t, "LogSoftmax", in, read(t, lsm), wantLSM, 1e-5)

		// LayerNorm along rows: any special makes the row NaN (the
		// variance of a row with an infinity is NaN).
		ln := LayerNorm(x, []int{n}, nil, nil, 1e-5)
		var wantLN []float64
		for r := range rows {
			row := in[r*n : (r+1)*n]
			mean := nfReduce(row, "Mean")
			v := nfReduce(row, "Var") * float64(n-1) / float64(n)
			for _, e := range row {
				wantLN = append(wantLN, (e-mean)/math.Sqrt(v+1e-5))
			}
		}
		nfCheck(t, "LayerNorm", in, read(t, ln), wantLN, 1e-4)
		releaseAll(sm, lsm, ln)

		// Pooling and convolution on one plane [1, 1, 7, 9] of specials.
		const h, w = 7, 9
		img := nfInput(rng, h*w)
		xi := nfUpload(dev, img, 1, 1, h, w)
		defer xi.Release()
		mp, idx := MaxPool2d(xi, PoolOptions{Kernel: [2]int{2, 2}})
		ap := AvgPool2d(xi, PoolOptions{Kernel: [2]int{2, 2}}, true)
		ones := nfUpload(dev, []float64{1, 1, 1, 1}, 1, 1, 2, 2)
		cv := Conv2d(xi, ones, nil, ConvOptions{Stride: [2]int{2, 2}})
		defer releaseAll(mp, idx, ap, ones, cv)
		var wantMax, wantAvg []float64
		for i := 0; i+2 <= h; i += 2 {
			for j := 0; j+2 <= w; j += 2 {
				win := []float64{img[i*w+j], img[i*w+j+1], img[(i+1)*w+j], img[(i+1)*w+j+1]}
				wantMax = append(wantMax, nfReduce(win, "Max"))
				wantAvg = append(wantAvg, nfReduce(win, "Mean"))
			}
		}
		nfCheck(t, "MaxPool2d", nil, read(t, mp), wantMax, 0)
		nfCheck(t, "AvgPool2d", nil, read(t, ap), wantAvg, 1e-6)
		wantSum := make([]float64, len(wantAvg))
		for i, v := range wantAvg {
			wantSum[i] = 4 * v
		}
		nfCheck(t, "Conv2d", nil, read(t, cv), wantSum, 1e-6)
	})
}
