package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// copyValues are the conversions' edge cases: truncation toward zero of
// both signs, the int32 range's edges and beyond (saturation), NaN (to 0),
// ±Inf, signed zeros, float16's overflow, and integers past 2²⁴ that a
// float32 must round to even.
func copyValues(src hal.DType) []float64 {
	if src.IsInteger() {
		v := []float64{0, 1, -1, 65504, 65519, 65520, -70000, 1<<24 + 1, 1<<24 + 3, -(1<<24 + 1),
			math.MaxInt32, math.MinInt32, 123456789}
		if src == hal.Int64 {
			// Past int32 (saturating there), and up to 2⁵³, where float64
			// is still exact and float32 rounds to even.
			v = append(v, math.MaxInt32+1, math.MinInt32-1, 3e9, -3e9, 1<<40+1, 1<<53, -(1 << 53), 1<<53-1)
		}
		return v
	}
	v := []float64{0, negZ, 2.5, -2.5, 2.9999, -2.9999, 0.75, -0.75, nan, inf, -inf, 1e-3, -1e-3,
		65504, 65519, 65520, -1e5, 1 + 0x1p-11, 1 + 3*0x1p-11, 0x1p-14, 1.0 / 3}
	if src != hal.Float16 {
		v = append(v, 3e9, -3e9, 2147483520, 2147483647, 2147483648, -2147483648, -2147483904, 1<<24+1,
			1+0x1p-24, 1+3*0x1p-24, 1e38, 0x1p-126, 0.1)
	}
	if src == hal.Float64 {
		v = append(v, 1e300, -1e300, 1e-300, 1+0x1p-30, math.Nextafter(2.5, 3), 3.4028235677973366e38)
	}
	return v
}

func testCopy(t *testing.T, s *suite, src, dst hal.DType) {
	g := perDType(logUniform(-10, 10, true), intsIn(-1<<20, 1<<20))
	check := func(t *testing.T, got, x []float64) {
		t.Helper()
		in := func(i int) string { return fmt.Sprintf("x=%.17g", x[i]) }
		s.check(t, hal.KernelCopy, dst, got, x, nil, in)
		if src.IsFloat() && dst.IsFloat() {
			checkZeroSigns(t, got, x, in)
		}
	}
	for _, c := range ewCases(1) {
		if c.inPlace >= 0 && src != dst {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t.Name())
			in := s.operand(t, src, c.shape, c.in[0], bind(g, rng, src))
			out := in
			if c.inPlace < 0 {
				out = s.output(t, dst, c.shape, c.dst)
			}
			x := in.values()
			require.NoError(t, s.dev.Copy(out.View, in.View))
			check(t, s.result(t, out), x)
		})
	}
	// Copy's dst may have any non-overlapping strides: this is how
	// Contiguous() of a view and writing into a slice work.
	for i, shape := range [][]int{{1025}, {33, 31}, {4, 5, 6}} {
		ins := inputLayouts(len(shape))
		for j, l := range stridedOutLayouts(len(shape)) {
			t.Run(fmt.Sprintf("strided-dst/%s/%s", shapeName(shape), l.name), func(t *testing.T) {
				rng := newRand(t.Name())
				in := s.operand(t, src, shape, ins[(i+j+1)%len(ins)], bind(g, rng, src))
				out := s.output(t, dst, shape, l)
				x := in.values()
				require.NoError(t, s.dev.Copy(out.View, in.View))
				check(t, s.result(t, out), x)
			})
		}
	}
	t.Run("specials", func(t *testing.T) {
		x := copyValues(src)
		rng := newRand(t.Name())
		in := s.fromValues(t, src, []int{len(x)}, withOffset(1), x, rng)
		out := s.output(t, dst, []int{len(x)}, contiguous)
		require.NoError(t, s.dev.Copy(out.View, in.View))
		check(t, s.result(t, out), in.values())
	})
	if src == hal.Float32 && dst == hal.Float32 {
		t.Run(fmt.Sprintf("n=%d", largeN), func(t *testing.T) {
			rng := newRand(t.Name())
			in := s.operand(t, src, []int{largeN}, contiguous, bind(g, rng, src))
			out := s.output(t, dst, []int{largeN}, contiguous)
			require.NoError(t, s.dev.Copy(out.View, in.View))
			check(t, s.result(t, out), in.values())
		})
	}
}
