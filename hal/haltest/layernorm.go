package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// LayerNorm tolerance. With m the row's mean, v its biased variance and
// r = 1/√(v + eps), y = (x − m)·r. The mean is a sum of n terms, off by
// perTerm·n·u·mean|x| (Higham), which reaches every xᵢ − m and so y as
// r times that; the variance is a sum of n squares, relatively accurate to
// perTerm·n·u, which reaches y halved by the square root; the subtraction,
// the division by n, rsqrt and the product add a few u relative to y
// (lnRel). So, with u_c the unit roundoff of the compute type (float32 for
// Float16, which then rounds once more to its own u):
//
//	|got − want| ≤ u_c·((lnRel + perTerm·n)·|y| + perTerm·n·r·mean|x| + r·|xᵢ|) + 2·u·|y|
//
// One-pass variance (E[x²] − m²) fails the rows of large mean by orders of
// magnitude, the unbiased variance (n − 1) the long rows, and a lost
// element or a wrong row length far more. On a WGSL device rsqrt and the
// division by n add kernelLatitude["layer_norm"].
const lnRel = 6

// layerNormEps are the eps values the suite runs: torch's default, and
// one large enough to matter against the variance of the random rows.
var layerNormEps = []float64{1e-5, 0.5}

// testLayerNorm checks LayerNorm over the last axis against a float64
// reference: random rows, rows of large mean (where a one-pass variance
// cancels), constant rows (variance 0: y is 0), rows holding a NaN or an
// infinity (NaN), odd row lengths, in every input layout; then the misuse
// errors.
func testLayerNorm(t *testing.T, s *suite, dt hal.DType) {
	shapes := [][]int{{1}, {3}, {7}, {33}, {1000}, {4100}, {5, 1}, {10, 3}, {10, 7}, {10, 33}, {5, 1000}, {5, 4100}, {2, 5, 7}}
	for i, shape := range shapes {
		eps := layerNormEps[i%len(layerNormEps)]
		for _, l := range inputLayouts(len(shape)) {
			name := fmt.Sprintf("%s/%s", shapeName(shape), l.name)
			t.Run(name, func(t *testing.T) {
				rng := newRand("layer_norm/" + dt.String() + "/" + name)
				src := s.fromValues(t, dt, shape, l, layerNormInputs(rng, shape), rng)
				dst := s.output(t, dt, shape, contiguous)
				if !assert.NoError(t, s.dev.LayerNorm(dst.View, src.View, eps)) {
					return
				}
				want, tol := layerNormReference(src.values(), shape[len(shape)-1], eps, dt)
				s.check(t, hal.KernelLayerNorm, dt, s.result(t, dst), want, tol, nil)
			})
		}
	}
	t.Run("eps=0", func(t *testing.T) {
		// Without eps the rows still normalize. (A constant row is 0/0,
		// but a float32 mean that rounds away from the value makes it
		// ±1 instead, so the rows here are the first three kinds.)
		shape := []int{3, 33}
		rng := newRand("layer_norm/eps0/" + dt.String())
		src := s.fromValues(t, dt, shape, contiguous, layerNormInputs(rng, shape), rng)
		dst := s.output(t, dt, shape, contiguous)
		if assert.NoError(t, s.dev.LayerNorm(dst.View, src.View, 0)) {
			want, tol := layerNormReference(src.values(), shape[1], 0, dt)
			s.check(t, hal.KernelLayerNorm, dt, s.result(t, dst), want, tol, nil)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 5}} {
			src := s.operand(t, dt, shape, contiguous, func() float64 { return 1 })
			dst := s.output(t, dt, shape, contiguous)
			assert.NoError(t, s.dev.LayerNorm(dst.View, src.View, 1e-5), "shape %v", shape)
		}
	})
	t.Run("misuse", func(t *testing.T) { testLayerNormMisuse(t, s, dt) })
}

// layerNormInputs are row-major values for shape, each row of one of a
// few kinds chosen by its index, so that every shape of five rows or more
// sees all of them (and a one-row shape the plain kind).
func layerNormInputs(rng *rand.Rand, shape []int) []float64 {
	cols := shape[len(shape)-1]
	rows := numel(shape) / cols
	v := make([]float64, rows*cols)
	for r := range rows {
		row := v[r*cols : (r+1)*cols]
		c := -4 + 8*rng.Float64()
		for j := range row {
			switch r % 5 {
			case 0, 1: // activations
				row[j] = -8 + 16*rng.Float64()
			case 2: // a large mean: E[x²] − m² cancels
				row[j] = 1000 + 2*rng.Float64()
			case 3: // constant: variance 0
				row[j] = c
			case 4: // one NaN or infinity among activations
				row[j] = -2 + 4*rng.Float64()
			}
		}
		if r%5 == 4 {
			row[rng.IntN(cols)] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[(r/5)%3]
		}
	}
	return v
}

// layerNormReference normalizes rows of cols values in float64, with the
// tolerance above.
func layerNormReference(x []float64, cols int, eps float64, dt hal.DType) (want, tol []float64) {
	u, uc := unitRoundoff(dt), unitRoundoff(dt)
	if dt == hal.Float16 {
		uc = unitRoundoff(hal.Float32)
	}
	n := float64(cols)
	want, tol = make([]float64, len(x)), make([]float64, len(x))
	for i := 0; i < len(x); i += cols {
		row := x[i : i+cols]
		var sum, mag float64
		for _, v := range row {
			sum += v
			mag += math.Abs(v)
		}
		mean := sum / n
		var sq float64
		for _, v := range row {
			sq += (v - mean) * (v - mean)
		}
		r := 1 / math.Sqrt(sq/n+eps)
		for j, v := range row {
			y := (v - mean) * r
			want[i+j] = y
			tol[i+j] = uc*((lnRel+perTerm*n)*math.Abs(y)+perTerm*n*r*mag/n+r*math.Abs(v)) + 2*u*math.Abs(y)
		}
	}
	return want, tol
}

// testLayerNormMisuse checks the calls the contract forbids.
func testLayerNormMisuse(t *testing.T, s *suite, dt hal.DType) {
	src := s.operand(t, dt, []int{2, 3}, contiguous, func() float64 { return 1 }).View
	dst := s.output(t, dt, []int{2, 3}, contiguous).View
	// Int32 is a dtype every device stores, and never layer_norm's.
	wrong := s.output(t, hal.Int32, []int{2, 3}, contiguous).View
	assert.ErrorIs(t, s.dev.LayerNorm(wrong, src, 1e-5), hal.ErrInvalid, "dst dtype differs from src")
	assert.ErrorIs(t, s.dev.LayerNorm(s.output(t, dt, []int{3, 2}, contiguous).View, src, 1e-5), hal.ErrInvalid, "shapes differ")
	assert.ErrorIs(t, s.dev.LayerNorm(s.output(t, dt, []int{6}, contiguous).View, src, 1e-5), hal.ErrInvalid, "ranks differ")
	strided := s.output(t, dt, []int{2, 3}, layout{name: "transposed", order: []int{1, 0}}).View
	assert.ErrorIs(t, s.dev.LayerNorm(strided, src, 1e-5), hal.ErrInvalid, "dst not contiguous")
	assert.ErrorIs(t, s.dev.LayerNorm(src, src, 1e-5), hal.ErrInvalid, "dst is src")
	scalar := s.output(t, dt, nil, contiguous).View
	assert.ErrorIs(t, s.dev.LayerNorm(scalar, s.operand(t, dt, nil, contiguous, func() float64 { return 1 }).View, 1e-5), hal.ErrInvalid, "a scalar has no last axis")
	for _, eps := range []float64{-1e-5, math.NaN(), math.Inf(1)} {
		assert.ErrorIs(t, s.dev.LayerNorm(dst, src, eps), hal.ErrInvalid, "eps %v", eps)
	}
	assert.NotErrorIs(t, s.dev.LayerNorm(dst, src, 1e-5), hal.ErrInvalid, "the valid call")
}
