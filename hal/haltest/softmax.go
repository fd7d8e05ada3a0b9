package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// Softmax tolerance, in units u of the dtype (see tolerance.go). With m
// the row's max, wⱼ = e^(xⱼ−m)/S the probabilities and S = Σ e^(xⱼ−m):
// each e^(xⱼ−m) has its own few-ulp error (smRel) and inherits the
// rounding of its argument, u·|xⱼ−m| relatively (lseCond, as LogSumExp's
// bound); S adds perTerm·n·u, relatively, as any sum of positive terms.
// Softmax divides, so these are relative errors of the result:
//
//	|got − want| ≤ u·|want|·(smRel + perTerm·n + lseCond·(|xᵢ−m| + Σ wⱼ·|xⱼ−m|))
//
// log_softmax subtracts ln S, turning S's relative error into an absolute
// one, and rounds xᵢ − m and ln S once each:
//
//	|got − want| ≤ u·(smRel·|want| + perTerm·n + lseCond·(|xᵢ−m| + Σ wⱼ·|xⱼ−m|) + 2·ln S)
//
// The CPU backend's float32 exp is within 2 ulp (smRel 4 leaves room for
// the final scaling); dropping the max shift overflows at the large
// inputs, and a wrong row length or axis is off by far more than n·u. On a
// WGSL device the division by S (softmax) or ln S's own division
// (log_softmax, at most a quarter of it times ln S ≤ |want|) adds
// kernelLatitude["softmax"] relative to the result.
const smRel = 4

// testSoftmax checks Softmax and log_softmax over the last axis against a
// float64 reference: random rows, rows of large magnitude (where skipping
// the max shift overflows), rows with −Inf entries (probability 0), a row
// of −Inf only (NaN, as torch), in every input layout; then the misuse
// errors.
func testSoftmax(t *testing.T, s *suite, dt hal.DType) {
	shapes := [][]int{{1}, {7}, {1025}, {1, 1}, {7, 1}, {1, 1000}, {1000, 7}, {7, 1025}, {3, 2, 7}}
	for _, log := range []bool{false, true} {
		for _, shape := range shapes {
			for _, l := range inputLayouts(len(shape)) {
				name := fmt.Sprintf("log=%v/%s/%s", log, shapeName(shape), l.name)
				t.Run(name, func(t *testing.T) {
					rng := newRand("softmax/" + dt.String() + "/" + name)
					src := s.fromValues(t, dt, shape, l, softmaxInputs(rng, dt, shape), rng)
					dst := s.output(t, dt, shape, contiguous)
					if !assert.NoError(t, s.dev.Softmax(dst.View, src.View, log)) {
						return
					}
					want, tol := softmaxReference(src.values(), shape[len(shape)-1], log, unitRoundoff(dt))
					s.check(t, hal.KernelSoftmax, dt, s.result(t, dst), want, tol, nil)
				})
			}
		}
	}
	t.Run("empty", func(t *testing.T) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 5}} {
			src := s.operand(t, dt, shape, contiguous, func() float64 { return 1 })
			dst := s.output(t, dt, shape, contiguous)
			assert.NoError(t, s.dev.Softmax(dst.View, src.View, false), "shape %v", shape)
		}
	})
	t.Run("misuse", func(t *testing.T) { testSoftmaxMisuse(t, s, dt) })
}

// softmaxInputs are row-major values for shape: each row is drawn from one
// of a few kinds, chosen by the row index so every shape with enough rows
// sees all of them (and one-row shapes the plain kind).
func softmaxInputs(rng *rand.Rand, dt hal.DType, shape []int) []float64 {
	cols := shape[len(shape)-1]
	rows := numel(shape) / cols
	big := 1e4
	if dt == hal.Float16 {
		big = 3e4
	}
	v := make([]float64, rows*cols)
	for r := range rows {
		row := v[r*cols : (r+1)*cols]
		for j := range row {
			switch r % 5 {
			case 0, 1: // the usual logits
				row[j] = -8 + 16*rng.Float64()
			case 2: // large magnitudes: e^x overflows without the shift
				row[j] = big * (2*rng.Float64() - 1)
			case 3: // −Inf entries, probability 0
				row[j] = -4 + 8*rng.Float64()
				if rng.IntN(3) == 0 && j > 0 {
					row[j] = math.Inf(-1)
				}
			case 4: // all −Inf: NaN
				row[j] = math.Inf(-1)
			}
		}
	}
	return v
}

// softmaxReference computes softmax (or log_softmax) of rows of cols
// values in float64, with the tolerance above.
func softmaxReference(x []float64, cols int, log bool, u float64) (want, tol []float64) {
	want, tol = make([]float64, len(x)), make([]float64, len(x))
	for r := 0; r < len(x); r += cols {
		row := x[r : r+cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		var sum, spread float64
		for _, v := range row {
			sum += math.Exp(v - m)
		}
		for _, v := range row {
			if w := math.Exp(v - m); w > 0 {
				spread += w / sum * math.Abs(v-m)
			}
		}
		lnS := math.Log(sum)
		for j, v := range row {
			i := r + j
			if math.IsInf(m, -1) {
				want[i] = math.NaN()
				continue
			}
			cond := lseCond * (spread + math.Abs(v-m))
			if math.IsInf(v, -1) {
				cond = 0
			}
			if log {
				want[i] = (v - m) - lnS
				tol[i] = u * (smRel*math.Abs(want[i]) + perTerm*float64(cols) + cond + 2*lnS)
			} else {
				want[i] = math.Exp(v-m) / sum
				tol[i] = u * want[i] * (smRel + perTerm*float64(cols) + cond)
			}
		}
	}
	return want, tol
}

// testSoftmaxMisuse checks the calls the contract forbids.
func testSoftmaxMisuse(t *testing.T, s *suite, dt hal.DType) {
	src := s.operand(t, dt, []int{2, 3}, contiguous, func() float64 { return 1 }).View
	dst := s.output(t, dt, []int{2, 3}, contiguous).View
	// Int32 is a dtype every device stores, and never softmax's.
	wrong := s.output(t, hal.Int32, []int{2, 3}, contiguous).View
	assert.ErrorIs(t, s.dev.Softmax(wrong, src, false), hal.ErrInvalid, "dst dtype differs from src")
	assert.ErrorIs(t, s.dev.Softmax(s.output(t, dt, []int{3, 2}, contiguous).View, src, false), hal.ErrInvalid, "shapes differ")
	assert.ErrorIs(t, s.dev.Softmax(s.output(t, dt, []int{6}, contiguous).View, src, false), hal.ErrInvalid, "ranks differ")
	strided := s.output(t, dt, []int{2, 3}, layout{name: "transposed", order: []int{1, 0}}).View
	assert.ErrorIs(t, s.dev.Softmax(strided, src, false), hal.ErrInvalid, "dst not contiguous")
	assert.ErrorIs(t, s.dev.Softmax(src, src, false), hal.ErrInvalid, "dst is src")
	scalar := s.output(t, dt, nil, contiguous).View
	assert.ErrorIs(t, s.dev.Softmax(scalar, s.operand(t, dt, nil, contiguous, func() float64 { return 1 }).View, false), hal.ErrInvalid, "a scalar has no last axis")
	assert.NotErrorIs(t, s.dev.Softmax(dst, src, true), hal.ErrInvalid, "the valid call")
}
