package haltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// randomTaps draws a CSR table of rows rows over an axis of in positions:
// rows of 0 to maxRow entries (empty rows included), indices anywhere in
// the axis, repeated or not, weights of either sign.
func randomTaps(rng *rand.Rand, rows, in, maxRow int) hal.ResampleTaps {
	t := hal.ResampleTaps{Offsets: []int32{0}}
	for range rows {
		for range rng.IntN(maxRow + 1) {
			t.Index = append(t.Index, int32(rng.IntN(in)))
			t.Weight = append(t.Weight, 2*rng.Float64()-1)
		}
		t.Offsets = append(t.Offsets, int32(len(t.Index)))
	}
	return t
}

// linearTaps are two-tap linear interpolation weights from in to out
// positions (align_corners=False, as interpolate), and transposeTaps turns
// them into the gather form of their adjoint: the gradient's direction.
func linearTaps(in, out int) hal.ResampleTaps {
	t := hal.ResampleTaps{Offsets: []int32{0}}
	for o := range out {
		x := max((float64(o)+0.5)*float64(in)/float64(out)-0.5, 0)
		i0 := int(x)
		i1 := min(i0+1, in-1)
		f := x - float64(i0)
		t.Index = append(t.Index, int32(i0), int32(i1))
		t.Weight = append(t.Weight, 1-f, f)
		t.Offsets = append(t.Offsets, int32(len(t.Index)))
	}
	return t
}

func transposeTaps(t hal.ResampleTaps, in int) hal.ResampleTaps {
	rows := make([][]int32, in)
	weights := make([][]float64, in)
	for j := range t.Rows() {
		for e := t.Offsets[j]; e < t.Offsets[j+1]; e++ {
			i := t.Index[e]
			rows[i] = append(rows[i], int32(j))
			weights[i] = append(weights[i], t.Weight[e])
		}
	}
	out := hal.ResampleTaps{Offsets: []int32{0}}
	for i := range in {
		out.Index = append(out.Index, rows[i]...)
		out.Weight = append(out.Weight, weights[i]...)
		out.Offsets = append(out.Offsets, int32(len(out.Index)))
	}
	return out
}

// refResample is taps applied along axis of x (row-major, of shape) in
// float64, with each element's allowed error: the weights rounded to the
// compute type and a sum of k products in it, (k + 2)·u·Σ|w·x| with u the
// compute type's (float32 for float16) unit roundoff, doubled for WGSL's
// faithful rounding.
func refResample(ar Arithmetic, dt hal.DType, x []float64, shape []int, axis int, taps hal.ResampleTaps) (want, tol []float64) {
	outer, in, inner := numel(shape[:axis]), shape[axis], numel(shape[axis+1:])
	rows := taps.Rows()
	want, tol = make([]float64, outer*rows*inner), make([]float64, outer*rows*inner)
	compute := hal.Float32
	if dt == hal.Float64 {
		compute = hal.Float64
	}
	u := unitRoundoff(compute) * ar.primRel(primRound, compute)
	for o := range outer {
		for j := range rows {
			first, last := taps.Offsets[j], taps.Offsets[j+1]
			for i := range inner {
				var v, mag float64
				for e := first; e < last; e++ {
					p := taps.Weight[e] * x[(o*in+int(taps.Index[e]))*inner+i]
					v += p
					mag += math.Abs(p)
				}
				at := (o*rows+j)*inner + i
				want[at] = v
				tol[at] = float64(last-first+2) * u * mag
			}
		}
	}
	return want, tol
}

func testResample(t *testing.T, s *suite, dt hal.DType) {
	type geom struct {
		shape []int
		axis  int
		taps  func(rng *rand.Rand, in int) hal.ResampleTaps
		what  string
	}
	random := func(rows, maxRow int) func(*rand.Rand, int) hal.ResampleTaps {
		return func(rng *rand.Rand, in int) hal.ResampleTaps { return randomTaps(rng, rows, in, maxRow) }
	}
	up := func(out int) func(*rand.Rand, int) hal.ResampleTaps {
		return func(_ *rand.Rand, in int) hal.ResampleTaps { return linearTaps(in, out) }
	}
	upT := func(out int) func(*rand.Rand, int) hal.ResampleTaps {
		// the adjoint of out → in linear taps, read from an axis of out
		// positions: each input gathers the outputs that touch it.
		return func(_ *rand.Rand, in int) hal.ResampleTaps { return transposeTaps(linearTaps(out, in), out) }
	}
	geoms := []geom{
		{[]int{7}, 0, random(5, 3), "random"},
		{[]int{2, 3, 5, 7}, 2, up(11), "linear-up"},
		{[]int{2, 3, 5, 7}, 3, up(3), "linear-down"},
		{[]int{3, 13, 5}, 1, upT(5), "linear-adjoint"}, // 13 outputs of 5 inputs, transposed: up to 4 entries a row
		{[]int{2, 61, 3}, 1, upT(3), "linear-adjoint-long"},
		{[]int{3, 4, 9}, 0, random(6, 5), "random-axis0"},
		{[]int{5, 2, 3, 4}, 3, random(9, 40), "random-long-rows"},
	}
	for gi, g := range geoms {
		for li, l := range inputLayouts(len(g.shape)) {
			if li > 0 && li%2 != gi%2 && l.name != "transposed" && l.name != "stepped" {
				continue // every layout on half the geometries, the strided ones on all
			}
			t.Run(fmt.Sprintf("%s/%s/axis%d/%s", shapeName(g.shape), g.what, g.axis, l.name), func(t *testing.T) {
				rng := newRand(t.Name())
				taps := g.taps(rng, g.shape[g.axis])
				src := s.operand(t, dt, g.shape, l, bind(wide, rng, dt))
				shape := append([]int(nil), g.shape...)
				shape[g.axis] = taps.Rows()
				dst := s.output(t, dt, shape, withOffset(gi%2))
				require.NoError(t, s.dev.Resample(dst.View, src.View, g.axis, taps))
				want, tol := refResample(s.arith, dt, src.values(), g.shape, g.axis, taps)
				checkWithin(t, s.arith, dt, s.result(t, dst), want, tol, nil)
			})
		}
	}
	t.Run("nan", func(t *testing.T) {
		// A NaN input reaches every output whose row reads it, even with
		// weight 0 (0·NaN is NaN, as the composite it replaces).
		x := []float64{1, math.NaN(), 3}
		src := s.fromValues(t, dt, []int{3}, contiguous, x, newRand(t.Name()))
		taps := hal.ResampleTaps{Offsets: []int32{0, 2, 4, 5}, Index: []int32{0, 1, 1, 2, 2}, Weight: []float64{1, 0, 0.5, 0.5, 2}}
		dst := s.output(t, dt, []int{3}, contiguous)
		require.NoError(t, s.dev.Resample(dst.View, src.View, 0, taps))
		got := s.result(t, dst)
		require.True(t, math.IsNaN(got[0]) && math.IsNaN(got[1]), "got %v", got)
		require.Equal(t, 6.0, got[2])
	})
	t.Run("bad-taps", func(t *testing.T) {
		src := s.operand(t, dt, []int{2, 3}, contiguous, func() float64 { return 1 })
		dst := s.output(t, dt, []int{2, 2}, contiguous)
		for name, taps := range map[string]hal.ResampleTaps{
			"index-out-of-range": {Offsets: []int32{0, 1, 2}, Index: []int32{0, 3}, Weight: []float64{1, 1}},
			"offsets-mismatch":   {Offsets: []int32{0, 1, 3}, Index: []int32{0, 1}, Weight: []float64{1, 1}},
			"rows-mismatch":      {Offsets: []int32{0, 1}, Index: []int32{0}, Weight: []float64{1}},
		} {
			err := s.dev.Resample(dst.View, src.View, 1, taps)
			require.True(t, errors.Is(err, hal.ErrInvalid), "%s: %v", name, err)
		}
		require.ErrorIs(t, s.dev.Resample(dst.View, src.View, 2, hal.ResampleTaps{Offsets: []int32{0, 0, 0}}), hal.ErrInvalid)
	})
}

// resampleProbe is a small valid Resample call in dt.
func resampleProbe(t *testing.T, s *suite, dt hal.DType) error {
	taps := hal.ResampleTaps{Offsets: []int32{0, 1, 2}, Index: []int32{2, 0}, Weight: []float64{1, 0.5}}
	return s.dev.Resample(s.zeros(t, dt, 3, 2), s.zeros(t, dt, 3, 3), 1, taps)
}
