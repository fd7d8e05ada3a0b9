package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

type fillArgs struct{ start, step float64 }

// fillCases are per dtype: constants (exact, NaN and ±Inf included, as
// start + i·0 defines them) and ramps like Arange and Linspace.
func fillCases(dt hal.DType) []fillArgs {
	if dt.IsInteger() {
		return []fillArgs{{0, 0}, {-7, 0}, {-5, 3}, {1000, -1}, {math.MaxInt32, 0}}
	}
	cases := []fillArgs{{0, 0}, {3.25, 0}, {-1e-3, 0}, {nan, 0}, {inf, 0}, {-inf, 0}, {-2, 0.5}, {0.1, 0.3}}
	if dt != hal.Float16 {
		cases = append(cases, fillArgs{1e6, -7}, fillArgs{1, 1.0 / 3})
	}
	return cases
}

func testFill(t *testing.T, s *suite, dt hal.DType) {
	run := func(t *testing.T, shape []int, l layout, a fillArgs) {
		dst := s.output(t, dt, shape, l)
		require.NoError(t, s.dev.Fill(dst.View, a.start, a.step))
		got := s.result(t, dst)
		want, tol := make([]float64, len(got)), make([]float64, len(got))
		u := unitRoundoff(dt)
		terms := fillTerms * s.arith.primRel(primRound, dt) // either-neighbour rounding under WGSL
		for i := range want {
			want[i] = a.start + float64(i)*a.step
			if a.step != 0 {
				tol[i] = u * terms * (math.Abs(a.start) + math.Abs(float64(i)*a.step))
			}
		}
		in := func(i int) string { return fmt.Sprintf("i=%d", i) }
		switch {
		case dt.IsInteger():
			checkExact(t, dt, got, want, in)
		case a.step == 0:
			s.check(t, hal.KernelFill, dt, got, want, nil, in) // start converted to dt
		default:
			checkWithin(t, s.arith, dt, got, want, tol, in)
		}
	}
	args := fillCases(dt)
	for _, a := range args {
		for _, n := range ewSizes {
			t.Run(fmt.Sprintf("%g,%g/n=%d", a.start, a.step, n), func(t *testing.T) {
				run(t, []int{n}, withOffset(n%3), a)
			})
		}
	}
	// Fill's dst may have any non-overlapping strides; the row-major
	// order of i is the view's, not the buffer's.
	for i, shape := range [][]int{{1025}, {33, 31}, {4, 5, 6}, {2, 1, 3, 1, 2, 2, 1, 3}} {
		for j, l := range stridedOutLayouts(len(shape)) {
			a := args[(i+j)%len(args)]
			t.Run(fmt.Sprintf("%g,%g/%s/%s", a.start, a.step, shapeName(shape), l.name), func(t *testing.T) {
				run(t, shape, l, a)
			})
		}
	}
	if dt == hal.Float32 {
		t.Run(fmt.Sprintf("n=%d", largeN), func(t *testing.T) { run(t, []int{largeN}, contiguous, fillArgs{0.5, 0.25}) })
	}
}
