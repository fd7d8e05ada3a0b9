package haltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// reduceType is the dtype a reduction writes for src of dt.
func reduceType(op hal.ReduceOp, dt hal.DType) hal.DType {
	if op == hal.ArgMax || op == hal.ArgMin {
		return hal.Int32
	}
	return dt
}

// reduceGen draws inputs for a reduction over rows of n elements: ties
// for the selections (so "first index on ties" is exercised), factors
// near 1 for Prod (so a product of n stays in range: log₂ of it has a
// standard deviation under 3 whatever n is), and integers for Int32.
func reduceGen(op hal.ReduceOp, n int) gen {
	switch op {
	case hal.Max, hal.Min, hal.ArgMax, hal.ArgMin:
		return ties
	case hal.Prod:
		spread := math.Min(1, 4/math.Sqrt(float64(max(n, 1))))
		return func(rng *rand.Rand, dt hal.DType) float64 {
			if dt.IsInteger() {
				// ±1, and 2 in short rows only: a broadcast row repeats
				// one value n times, and 2^31 overflows.
				if n <= 16 && rng.IntN(4) == 0 {
					return 2
				}
				return float64(1 - 2*rng.IntN(2))
			}
			x := math.Exp2(spread * (2*rng.Float64() - 1))
			if rng.IntN(2) == 0 {
				x = -x
			}
			return x
		}
	case hal.LogSumExp:
		return perDType(uniformIn(-20, 20), intsIn(-20, 20))
	}
	return wide
}

// refReduce reduces rows of n elements (consecutive in x) and returns
// the results and their allowed errors on arithmetic ar (nil when exact).
func refReduce(ar Arithmetic, op hal.ReduceOp, dt hal.DType, x []float64, rows, n int) (want, tol []float64) {
	want = make([]float64, rows)
	u := unitRoundoff(dt)
	exact := dt.IsInteger() || op == hal.Max || op == hal.Min || op == hal.ArgMax || op == hal.ArgMin
	if !exact {
		tol = make([]float64, rows)
	}
	for r := range rows {
		row := x[r*n : (r+1)*n]
		switch op {
		case hal.Sum:
			var sum, mag float64
			for _, v := range row {
				sum += v
				mag += math.Abs(v)
			}
			want[r] = sum
			if tol != nil {
				tol[r] = perTerm * float64(n) * u * mag
			}
		case hal.Prod:
			p := 1.0
			for _, v := range row {
				p *= v
			}
			want[r] = p
			if tol != nil {
				tol[r] = prodPerTerm * float64(n) * u * math.Abs(p)
			}
		case hal.Max, hal.Min:
			best := row[0]
			for _, v := range row[1:] {
				switch {
				case math.IsNaN(best):
				case math.IsNaN(v), op == hal.Max && v > best, op == hal.Min && v < best:
					best = v
				}
			}
			want[r] = best
		case hal.ArgMax, hal.ArgMin:
			best := 0
			for i, v := range row {
				b := row[best]
				if math.IsNaN(b) {
					break
				}
				if math.IsNaN(v) || op == hal.ArgMax && v > b || op == hal.ArgMin && v < b {
					best = i
				}
			}
			want[r] = float64(best)
		case hal.LogSumExp:
			want[r], tol[r] = refLogSumExp(row, u, ar.extraRel(hal.Log.Kernel(), dt))
		}
	}
	return want, tol
}

// refLogSumExp is ln Σ eˣ and its allowed error (see lseRel), with
// logExtra units of u relative to ln Σ for the latitude of ln's division.
func refLogSumExp(row []float64, u, logExtra float64) (float64, float64) {
	m := math.Inf(-1)
	for _, v := range row {
		if math.IsNaN(v) {
			return nan, 0
		}
		m = math.Max(m, v)
	}
	if math.IsInf(m, 0) {
		return m, 0 // all −Inf gives −Inf; any +Inf gives +Inf
	}
	var s, spread float64
	for _, v := range row {
		e := math.Exp(v - m)
		s += e
		if e > 0 { // a −Inf term adds nothing, not 0·Inf
			spread += e * math.Abs(v-m)
		}
	}
	want := m + math.Log(s)
	return want, u * (lseRel*math.Abs(want) + perTerm*float64(len(row)) + lseCond*spread/s + logExtra*math.Log(s))
}

type reduceCase struct {
	name    string
	shape   []int
	l       layout
	reduced int
}

// reduceCases: the odd 1-D sizes; every count of reduced axes of a 3-D
// block, scalar result included; each input layout, so the reduced axes
// are strided, permuted, broadcast (a sum over a stride-0 axis is n·x) and
// offset; empty reductions and empty results; many short rows (more than
// 65,535 workgroups' worth) and a few long ones (longer than 65,535 loop
// iterations, llvmpipe's silent limit).
func reduceCases() []reduceCase {
	var cases []reduceCase
	for _, n := range []int{0, 1, 7, 1000, 1025} {
		cases = append(cases, reduceCase{fmt.Sprintf("n=%d", n), []int{n}, contiguous, 1})
	}
	for r := range 4 {
		cases = append(cases, reduceCase{fmt.Sprintf("3x5x7/reduced=%d", r), []int{3, 5, 7}, withOffset(r), r})
	}
	for i, l := range inputLayouts(3) {
		r := 1 + i%2
		cases = append(cases, reduceCase{fmt.Sprintf("5x6x7/%s/reduced=%d", l.name, r), []int{5, 6, 7}, l, r})
	}
	for i, l := range inputLayouts(2) {
		cases = append(cases, reduceCase{fmt.Sprintf("33x31/%s/reduced=%d", l.name, 1+i%2), []int{33, 31}, l, 1 + i%2})
	}
	rank8 := []int{2, 1, 3, 1, 2, 2, 1, 3}
	cases = append(cases,
		reduceCase{"rank8/permuted/reduced=3", rank8, inputLayouts(8)[3], 3},
		reduceCase{"rank8/mixed/reduced=8", rank8, inputLayouts(8)[7], 8},
		reduceCase{"4x0/reduced=1", []int{4, 0}, contiguous, 1},
		reduceCase{"0x4/reduced=1", []int{0, 4}, contiguous, 1},
		reduceCase{"65537x3/reduced=1", []int{65537, 3}, contiguous, 1},
		reduceCase{"3x70001/reduced=1", []int{3, 70001}, withOffset(1), 1},
		reduceCase{"2x3x70001/transposed/reduced=1", []int{2, 70001, 3}, layout{name: "transposed", order: []int{0, 2, 1}}, 1},
	)
	return cases
}

// selection reports whether op has no identity: reducing zero elements is
// ErrInvalid.
func selection(op hal.ReduceOp) bool {
	return op == hal.Max || op == hal.Min || op == hal.ArgMax || op == hal.ArgMin
}

func testReduce(t *testing.T, s *suite, op hal.ReduceOp, dt hal.DType) {
	out := reduceType(op, dt)
	for _, c := range reduceCases() {
		if op == hal.Prod && dt.IsInteger() && c.reduced > 0 && numel(c.shape[len(c.shape)-c.reduced:]) > 2000 {
			continue // an int32 product of that many terms overflows
		}
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t.Name())
			inner := numel(c.shape[len(c.shape)-c.reduced:])
			src := s.operand(t, dt, c.shape, c.l, bind(reduceGen(op, inner), rng, dt))
			dstShape := c.shape[:len(c.shape)-c.reduced]
			dst := s.output(t, out, dstShape, withOffset(len(dstShape)%2))
			err := s.dev.Reduce(op, dst.View, src.View, c.reduced)
			if inner == 0 && numel(dstShape) > 0 && selection(op) {
				assert.ErrorIs(t, err, hal.ErrInvalid, "%v of zero elements", op)
				return
			}
			require.NoError(t, err)
			want, tol := refReduce(s.arith, op, dt, src.values(), numel(dstShape), inner)
			s.check(t, "", out, s.result(t, dst), want, tol, nil)
		})
	}
	if dt.IsFloat() {
		t.Run("specials", func(t *testing.T) { testReduceSpecials(t, s, op, dt) })
	}
	t.Run("reduced-out-of-range", func(t *testing.T) {
		src := s.output(t, dt, []int{3, 4}, contiguous)
		dst := s.output(t, out, []int{}, contiguous)
		assert.ErrorIs(t, s.dev.Reduce(op, dst.View, src.View, 3), hal.ErrInvalid, "reduced > rank")
		assert.ErrorIs(t, s.dev.Reduce(op, dst.View, src.View, -1), hal.ErrInvalid, "reduced < 0")
	})
	if dt == hal.Float32 || dt == hal.Int32 {
		testReduceLarge(t, s, op, dt)
	}
}

// specialRows are rows of four with NaN, ±Inf, ties and signed zeros in
// every position that matters: NaN wins Max, Min, ArgMax and ArgMin (the
// first NaN for the Arg ones), ties go to the first index, LogSumExp of
// all −Inf is −Inf and of any +Inf is +Inf.
func specialRows(dt hal.DType) [][]float64 {
	huge := maxFinite(dt) / 4
	return [][]float64{
		{1, 2, 3, 4},
		{nan, 1, 2, 3},
		{1, 2, nan, 3},
		{3, nan, nan, -inf},
		{-inf, -inf, -inf, -inf},
		{inf, 1, 2, -inf},
		{-inf, 1, -inf, 2},
		{3, 3, 1, 3},
		{-1, -1, -2, -1},
		{negZ, 0, -1, -2},
		{inf, inf, 1, 1},
		{huge, huge, -huge, 1},
		{-huge, 0.5, huge, -huge},
	}
}

func testReduceSpecials(t *testing.T, s *suite, op hal.ReduceOp, dt hal.DType) {
	rows := specialRows(dt)
	var x []float64
	for _, r := range rows {
		x = append(x, r...)
	}
	rng := newRand(t.Name())
	src := s.fromValues(t, dt, []int{len(rows), 4}, withOffset(3), x, rng)
	dst := s.output(t, reduceType(op, dt), []int{len(rows)}, contiguous)
	require.NoError(t, s.dev.Reduce(op, dst.View, src.View, 1))
	xs := src.values()
	want, tol := refReduce(s.arith, op, dt, xs, len(rows), 4)
	in := func(i int) string { return fmt.Sprintf("row %v", xs[i*4:i*4+4]) }
	s.check(t, "", reduceType(op, dt), s.result(t, dst), want, tol, in)
}

// Large reductions. With integer inputs in {−1, 0, 1, 2} every partial sum
// any summation order can form is an integer of magnitude below 2²⁴, so
// float32 sums them exactly and Sum must be exact: a lost or repeated
// element, a loop cut short or a misplaced block shows up as a wrong
// integer. hugeN is past 2²⁴ elements, where a float32 loop counter stops
// counting and where llvmpipe's 65,535-iteration limit cuts any loop that
// is not split into passes. The selections get a unique extreme near the
// end, where only a complete scan finds it.
const (
	millionN = 1_000_003
	hugeN    = 16_800_007
)

// bigInts returns the cached host values and device view of n integer
// inputs in dt (shared by the large cases of every reduction).
func (s *suite) bigInts(t *testing.T, dt hal.DType, n int) operand {
	key := fmt.Sprintf("%v/%d", dt, n)
	if o, ok := s.big[key]; ok {
		return o
	}
	rng := newRand(key)
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(rng.IntN(4) - 1)
	}
	x[n-3], x[n-7] = 3, -2 // unique max and min, near the end
	b, err := s.dev.Alloc(int64(n * dt.Size()))
	require.NoError(t, err)
	s.cleanups = append(s.cleanups, func() { s.dev.Free(b) })
	require.NoError(t, s.dev.Write(b, encode(dt, x)))
	o := operand{View: hal.Contiguous(b, dt, n), store: x}
	s.big[key] = o
	return o
}

func testReduceLarge(t *testing.T, s *suite, op hal.ReduceOp, dt hal.DType) {
	if op == hal.Prod || op == hal.LogSumExp {
		return
	}
	sizes := []int{millionN}
	if dt == hal.Float32 {
		sizes = append(sizes, hugeN)
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("exact/n=%d", n), func(t *testing.T) {
			src := s.bigInts(t, dt, n)
			dst := s.output(t, reduceType(op, dt), []int{}, contiguous)
			require.NoError(t, s.dev.Reduce(op, dst.View, src.View, 1))
			want, _ := refReduce(s.arith, op, hal.Int32, src.store, 1, n)
			checkExact(t, reduceType(op, dt), s.result(t, dst), want, nil)
		})
	}
	if op == hal.Sum && dt == hal.Float32 {
		t.Run(fmt.Sprintf("accuracy/n=%d", millionN), func(t *testing.T) { testSumAccuracy(t, s) })
	}
}

func testSumAccuracy(t *testing.T, s *suite) {
	rng := newRand(t.Name())
	src := s.operand(t, hal.Float32, []int{millionN}, contiguous, bind(uniformIn(16, 32), rng, hal.Float32))
	dst := s.output(t, hal.Float32, []int{}, contiguous)
	require.NoError(t, s.dev.Reduce(hal.Sum, dst.View, src.View, 1))
	x := src.values()
	var sum float64
	for _, v := range x {
		sum += v // float64: error ≤ n·2⁻⁵³·Σ|x|, far below the bound
	}
	tol := unitRoundoff(hal.Float32) * sum * sumAccuracy * math.Sqrt(millionN)
	checkWithin(t, s.arith, hal.Float32, s.result(t, dst), []float64{sum}, []float64{tol}, nil)
}

// errIsOneOf reports whether err wraps any of targets.
func errIsOneOf(err error, targets ...error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
