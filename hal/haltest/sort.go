package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// sortShapes are the geometries Sort and Scan are tried in: single
// elements, odd lengths, many short rows, ranks up to 3, and a row longer
// than 65,535 elements, past what one shader invocation may loop over on
// llvmpipe (a WebGPU backend needs its multi-pass path there).
var sortShapes = [][]int{{1}, {7}, {1000}, {5, 1}, {3, 5}, {33, 17}, {4, 7, 9}, {2, 3, 130}, {70001}}

// sortLayouts are the input layouts for shape: every layout of
// inputLayouts for the small shapes, contiguous and stepped for the long
// row (each layout there costs seconds on a software adapter).
func sortLayouts(shape []int) []layout {
	ls := inputLayouts(len(shape))
	if numel(shape) > 10000 {
		return []layout{ls[0], ls[len(ls)-2]}
	}
	return ls
}

// sortInputs draws row-major values full of ties: a few distinct values
// per row (so stable order shows), random values, and for float dtypes
// NaN, ±Inf and ±0 (which sort as equals).
func sortInputs(rng *rand.Rand, dt hal.DType, n int) []float64 {
	v := make([]float64, n)
	pool := []float64{-3, -1, 0, 2, 5}
	if dt.IsFloat() {
		pool = append(pool, nan, inf, -inf, negZ, 0.5, -0.25, nan)
	}
	for i := range v {
		switch rng.IntN(3) {
		case 0:
			v[i] = pool[rng.IntN(len(pool))]
		default:
			if dt.IsInteger() {
				v[i] = float64(rng.IntN(2001) - 1000)
			} else {
				v[i] = roundTo(dt, 200*rng.Float64()-100)
			}
		}
	}
	return v
}

// refSort is torch.sort of rows of cols values, stable: NaN above +Inf
// (first when descending), −0 equal to +0, ties in input order.
func refSort(x []float64, cols int, descending bool) (vals, idx []float64) {
	vals, idx = make([]float64, len(x)), make([]float64, len(x))
	rank := func(v float64) float64 { // NaN as the largest
		if math.IsNaN(v) {
			return math.Inf(1)
		}
		return v
	}
	for r := 0; r < len(x); r += cols {
		row := x[r : r+cols]
		perm := make([]int, cols)
		for j := range perm {
			perm[j] = j
		}
		slices.SortStableFunc(perm, func(a, b int) int {
			va, vb := row[a], row[b]
			na, nb := math.IsNaN(va), math.IsNaN(vb)
			c := 0
			switch {
			case na && nb:
			case na:
				c = 1
			case nb:
				c = -1
			default:
				c = compareFloat(rank(va), rank(vb))
			}
			if descending {
				c = -c
			}
			return c
		})
		for j, p := range perm {
			vals[r+j], idx[r+j] = row[p], float64(p)
		}
	}
	return vals, idx
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// testSort checks Sort against a stable float64 sort in both directions,
// every shape and input layout: values exactly; indices exactly when
// stable, and otherwise as a permutation of the row that gathers the
// values. Then the empty views and the misuse errors.
func testSort(t *testing.T, s *suite, dt hal.DType) {
	for _, shape := range sortShapes {
		cols := shape[len(shape)-1]
		for _, l := range sortLayouts(shape) {
			for _, descending := range []bool{false, true} {
				for _, stable := range []bool{true, false} {
					name := fmt.Sprintf("%s/%s/descending=%v/stable=%v", shapeName(shape), l.name, descending, stable)
					t.Run(name, func(t *testing.T) {
						rng := newRand("sort/" + dt.String() + "/" + name)
						src := s.fromValues(t, dt, shape, l, sortInputs(rng, dt, numel(shape)), rng)
						vals := s.output(t, dt, shape, contiguous)
						idx := s.output(t, hal.Int32, shape, contiguous)
						if !assert.NoError(t, s.dev.Sort(vals.View, idx.View, src.View, descending, stable)) {
							return
						}
						x := src.values()
						wantVals, wantIdx := refSort(x, cols, descending)
						gotVals, gotIdx := s.result(t, vals), s.result(t, idx)
						checkExact(t, dt, gotVals, wantVals, nil)
						if stable {
							checkExact(t, hal.Int32, gotIdx, wantIdx, nil)
							return
						}
						checkPermutation(t, x, cols, gotVals, gotIdx)
					})
				}
			}
		}
	}
	t.Run("empty", func(t *testing.T) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 5}} {
			src := s.operand(t, dt, shape, contiguous, func() float64 { return 1 })
			vals, idx := s.output(t, dt, shape, contiguous), s.output(t, hal.Int32, shape, contiguous)
			assert.NoError(t, s.dev.Sort(vals.View, idx.View, src.View, false, true), "shape %v", shape)
		}
	})
	t.Run("misuse", func(t *testing.T) { testSortMisuse(t, s, dt) })
}

// checkPermutation asserts that each row of idx is a permutation of its
// row's positions and that vals[j] is x at idx[j].
func checkPermutation(t *testing.T, x []float64, cols int, vals, idx []float64) {
	t.Helper()
	bad := 0
	for r := 0; r < len(x) && bad < maxReported; r += cols {
		seen := make([]bool, cols)
		for j := range cols {
			p := int(idx[r+j])
			if p < 0 || p >= cols || seen[p] || !sameValue(vals[r+j], x[r+p]) {
				t.Errorf("row %d, position %d: index %v (value %v) is not a fresh position of the row holding the value", r/cols, j, idx[r+j], vals[r+j])
				bad++
				break
			}
			seen[p] = true
		}
	}
}

// testSortMisuse checks the calls the contract forbids.
func testSortMisuse(t *testing.T, s *suite, dt hal.DType) {
	src := s.operand(t, dt, []int{2, 3}, contiguous, func() float64 { return 1 }).View
	vals := s.output(t, dt, []int{2, 3}, contiguous).View
	idx := s.output(t, hal.Int32, []int{2, 3}, contiguous).View
	other := hal.Float32
	if dt == hal.Float32 {
		other = hal.Int32
	}
	assert.ErrorIs(t, s.dev.Sort(s.output(t, other, []int{2, 3}, contiguous).View, idx, src, false, true), hal.ErrInvalid, "values dtype differs from src")
	if dt != hal.Float32 {
		assert.ErrorIs(t, s.dev.Sort(vals, s.output(t, hal.Float32, []int{2, 3}, contiguous).View, src, false, true), hal.ErrInvalid, "indices are not Int32")
	}
	assert.ErrorIs(t, s.dev.Sort(s.output(t, dt, []int{3, 2}, contiguous).View, idx, src, false, true), hal.ErrInvalid, "values shape differs")
	assert.ErrorIs(t, s.dev.Sort(vals, s.output(t, hal.Int32, []int{6}, contiguous).View, src, false, true), hal.ErrInvalid, "indices rank differs")
	strided := s.output(t, dt, []int{2, 3}, layout{name: "transposed", order: []int{1, 0}}).View
	assert.ErrorIs(t, s.dev.Sort(strided, idx, src, false, true), hal.ErrInvalid, "values not contiguous")
	assert.ErrorIs(t, s.dev.Sort(src, idx, src, false, true), hal.ErrInvalid, "values is src")
	scalar := s.operand(t, dt, nil, contiguous, func() float64 { return 1 }).View
	assert.ErrorIs(t, s.dev.Sort(s.output(t, dt, nil, contiguous).View, s.output(t, hal.Int32, nil, contiguous).View, scalar, false, true), hal.ErrInvalid, "a scalar has no last axis")
	assert.NotErrorIs(t, s.dev.Sort(vals, idx, src, true, false), hal.ErrInvalid, "the valid call")
}

// scanInputs draws row-major values for op: cumsum of signed values with,
// in some rows, NaN and ±Inf; cumprod of factors near ±1 (so a 70,001-long
// product neither overflows nor underflows) with exact zeros;
// logcumsumexp of logits with −Inf entries, rows of −Inf only, +Inf and
// NaN. Integer inputs are small, with wrapping left to the reference.
func scanInputs(rng *rand.Rand, op hal.ScanOp, dt hal.DType, shape []int) []float64 {
	cols := shape[len(shape)-1]
	v := make([]float64, numel(shape))
	for i := range v {
		row, j := i/cols, i%cols
		special := dt.IsFloat() && row%4 == 3 && rng.IntN(max(4, cols/8)) == 0
		switch {
		case dt.IsInteger() && op == hal.Cumprod:
			v[i] = []float64{-1, 1, 1, 2, -2, 1, 0}[rng.IntN(7)]
			if rng.IntN(20) != 0 && v[i] == 0 {
				v[i] = 1
			}
		case dt.IsInteger():
			v[i] = float64(rng.IntN(2001) - 1000)
		case op == hal.Cumsum:
			v[i] = 2*rng.Float64() - 1
			if special {
				v[i] = []float64{nan, inf, -inf}[rng.IntN(3)]
			}
		case op == hal.Cumprod:
			v[i] = math.Exp(0.01 * (2*rng.Float64() - 1))
			if rng.IntN(2) == 0 {
				v[i] = -v[i]
			}
			if row%3 == 1 && rng.IntN(max(2, cols/4)) == 0 {
				v[i] = 0
			}
			if special {
				v[i] = []float64{nan, inf, -inf}[rng.IntN(3)]
			}
		default: // LogCumSumExp
			v[i] = 20*rng.Float64() - 10
			switch {
			case row%4 == 2 && j < cols/2+1:
				v[i] = -inf // a prefix of −Inf only: −Inf, not NaN
			case rng.IntN(5) == 0:
				v[i] = -inf
			case special:
				v[i] = []float64{nan, inf}[rng.IntN(2)]
			}
		}
		v[i] = roundTo(dt, v[i])
	}
	return v
}

// computeRoundoff is the unit roundoff of the arithmetic a scan may
// accumulate dt in: Float16 in float32, as every backend computes it.
func computeRoundoff(dt hal.DType) float64 {
	if dt == hal.Float16 {
		return unitRoundoff(hal.Float32)
	}
	return unitRoundoff(dt)
}

// refScan is op's inclusive scan of rows of cols values in float64 (int64
// wrapped to int32 for Int32), with the tolerance of a scan whose order of
// operations is free: the final rounding to dt, plus, in the compute
// type, an error that grows with the square root of the prefix length
// (random rounding errors of a blocked scan; a sequential one's worst case
// is linear, but the inputs are random) times the prefix's magnitude: Σ|x|
// for cumsum, |Π x| per factor for cumprod, and for logcumsumexp the
// largest |x| and |result| the prefix saw.
func refScan(x []float64, cols int, op hal.ScanOp, dt hal.DType) (want, tol []float64) {
	want, tol = make([]float64, len(x)), make([]float64, len(x))
	u, uc := unitRoundoff(dt), computeRoundoff(dt)
	for r := 0; r < len(x); r += cols {
		var acc, mag float64
		iacc := int64(0)
		if op == hal.Cumprod {
			iacc = 1
		}
		switch op {
		case hal.Cumprod:
			acc = 1
		case hal.LogCumSumExp:
			acc = math.Inf(-1)
		}
		for j := range cols {
			v := x[r+j]
			growth := 8*math.Sqrt(float64(j+1)) + 16
			switch op {
			case hal.Cumsum:
				acc += v
				mag += math.Abs(v)
				if dt.IsInteger() {
					iacc += int64(v)
					acc = wrapInt32(iacc, dt)
				}
				tol[r+j] = u*math.Abs(acc) + growth*uc*mag
			case hal.Cumprod:
				acc *= v
				if dt.IsInteger() {
					iacc *= int64(v)
					acc = wrapInt32(iacc, dt)
				}
				tol[r+j] = u*math.Abs(acc) + 2*float64(j+1)*uc*math.Abs(acc)
			case hal.LogCumSumExp:
				acc = refLogAddExp(acc, v)
				if !math.IsInf(v, 0) {
					mag = max(mag, math.Abs(v))
				}
				tol[r+j] = u*math.Abs(acc) + growth*uc*(mag+math.Abs(acc))
			}
			want[r+j] = acc
		}
	}
	if dt.IsInteger() {
		return want, nil
	}
	return want, tol
}

// wrapInt32 is the int64 prefix acc as dt holds it: reduced mod 2³² for
// Int32, as int32 arithmetic wraps. (An Int64 product past 2⁵³ is not
// exact as a float64; the suite's factors keep it at powers of two.)
func wrapInt32(acc int64, dt hal.DType) float64 {
	if dt != hal.Int32 {
		return float64(acc)
	}
	return float64(int32(acc))
}

// refLogAddExp is ln(eᵃ + eᵇ) in float64, −Inf for two −Inf and +Inf for
// two +Inf.
func refLogAddExp(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return nan
	}
	hi, lo := max(a, b), min(a, b)
	if math.IsInf(hi, 0) && hi == lo {
		return hi
	}
	return hi + math.Log1p(math.Exp(lo-hi))
}

// testScan checks op in every shape and input layout against the float64
// reference above, then the empty views and the misuse errors.
func testScan(t *testing.T, s *suite, op hal.ScanOp, dt hal.DType) {
	for _, shape := range sortShapes {
		cols := shape[len(shape)-1]
		for _, l := range sortLayouts(shape) {
			name := fmt.Sprintf("%s/%s", shapeName(shape), l.name)
			t.Run(name, func(t *testing.T) {
				rng := newRand("scan/" + op.String() + "/" + dt.String() + "/" + name)
				src := s.fromValues(t, dt, shape, l, scanInputs(rng, op, dt, shape), rng)
				dst := s.output(t, dt, shape, contiguous)
				if !assert.NoError(t, s.dev.Scan(op, dst.View, src.View)) {
					return
				}
				want, tol := refScan(src.values(), cols, op, dt)
				s.check(t, op.Kernel(), dt, s.result(t, dst), want, tol, nil)
			})
		}
	}
	t.Run("empty", func(t *testing.T) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 5}} {
			src := s.operand(t, dt, shape, contiguous, func() float64 { return 1 })
			dst := s.output(t, dt, shape, contiguous)
			assert.NoError(t, s.dev.Scan(op, dst.View, src.View), "shape %v", shape)
		}
	})
	t.Run("misuse", func(t *testing.T) {
		src := s.operand(t, dt, []int{2, 3}, contiguous, func() float64 { return 1 }).View
		other := hal.Float32
		if dt == hal.Float32 {
			other = hal.Int32
		}
		assert.ErrorIs(t, s.dev.Scan(op, s.output(t, other, []int{2, 3}, contiguous).View, src), hal.ErrInvalid, "dst dtype differs from src")
		assert.ErrorIs(t, s.dev.Scan(op, s.output(t, dt, []int{3, 2}, contiguous).View, src), hal.ErrInvalid, "shapes differ")
		strided := s.output(t, dt, []int{2, 3}, layout{name: "transposed", order: []int{1, 0}}).View
		assert.ErrorIs(t, s.dev.Scan(op, strided, src), hal.ErrInvalid, "dst not contiguous")
		assert.ErrorIs(t, s.dev.Scan(op, src, src), hal.ErrInvalid, "dst is src")
		scalar := s.operand(t, dt, nil, contiguous, func() float64 { return 1 }).View
		assert.ErrorIs(t, s.dev.Scan(op, s.output(t, dt, nil, contiguous).View, scalar), hal.ErrInvalid, "a scalar has no last axis")
		assert.NotErrorIs(t, s.dev.Scan(op, s.output(t, dt, []int{2, 3}, contiguous).View, src), hal.ErrInvalid, "the valid call")
	})
}
