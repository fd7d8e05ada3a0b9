package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// refRandom is element i's value under the contract's recipe (see
// hal.Distribution), in float64, and for Normal the radius and angle too.
func refRandom(dist hal.Distribution, p float64, seed, offset uint64, i int) (v, r, theta float64) {
	w := philoxBlock(seed, offset, i)
	switch dist {
	case hal.Uniform:
		return float64(w[0]>>8) * 0x1p-24, 0, 0
	case hal.Bernoulli:
		if float64(w[0]>>8) < math.RoundToEven(p*0x1p24) {
			return 1, 0, 0
		}
		return 0, 0, 0
	}
	u1 := float64(w[0]>>8+1) * 0x1p-24
	u2 := float64(w[1]>>8) * 0x1p-24
	r = math.Sqrt(-2 * math.Log(u1))
	theta = 2 * math.Pi * u2
	return r * math.Cos(theta), r, theta
}

// normalBound is Normal's allowed error for radius r and angle θ, in units
// of u (see normalTol): ln u₁'s absolute error divided by r (the square
// root's derivative), the angle's rounding times r, and the result's own
// roundings.
func normalBound(u, z, r, theta float64) float64 {
	b := normalRel*math.Abs(z) + normalAngle*r*(1+theta)
	if r > 0 {
		b += normalLogAbs / r
	}
	return u * b
}

type randomCase struct {
	seed, offset uint64
	p            float64
}

// randomCases cover seed and offset in both 32-bit halves, and an offset
// whose low word carries into the high one within the call.
var randomCases = []randomCase{
	{0, 0, 0.5},
	{42, 7, 0.3},
	{0x0123456789abcdef, 1<<32 - 3, 1.0 / 3},
	{0xffffffffffffffff, 1<<40 + 5, 0.999},
}

func testRandom(t *testing.T, s *suite, dist hal.Distribution, dt hal.DType) {
	t.Run("philox-kat", func(t *testing.T) {
		// The reference itself, against Random123's vectors.
		for _, v := range philoxKAT {
			assert.Equal(t, v.want, philox4x32(v.ctr, v.key))
		}
	})
	run := func(t *testing.T, n int, c randomCase, off int) []float64 {
		dst := s.output(t, dt, []int{n}, withOffset(off))
		require.NoError(t, s.dev.Random(dst.View, dist, c.p, c.seed, c.offset))
		got := s.result(t, dst)
		want, tol := make([]float64, n), make([]float64, n)
		for i := range want {
			var r, theta float64
			want[i], r, theta = refRandom(dist, c.p, c.seed, c.offset, i)
			if dist == hal.Normal {
				tol[i] = normalBound(unitRoundoff(dt), want[i], r, theta)
			}
		}
		in := func(i int) string { return fmt.Sprintf("i=%d block %08x", i, philoxBlock(c.seed, c.offset, i)) }
		if dist == hal.Normal {
			s.check(t, dist.Kernel(), dt, got, want, tol, in)
		} else {
			s.check(t, dist.Kernel(), dt, got, want, nil, in)
		}
		return got
	}
	for ci, c := range randomCases {
		for _, n := range []int{0, 1, 7, 1025} {
			t.Run(fmt.Sprintf("seed=%x/offset=%x/n=%d", c.seed, c.offset, n), func(t *testing.T) { run(t, n, c, (n+ci)%3) })
		}
	}
	if dist == hal.Bernoulli {
		for _, p := range []float64{0, 1, 0.5, 1e-7, 0.75} {
			t.Run(fmt.Sprintf("p=%g", p), func(t *testing.T) { run(t, 1025, randomCase{9, 9, p}, 0) })
		}
	}
	t.Run("offset-continues", func(t *testing.T) {
		// Two calls whose offsets abut draw one stream: what a
		// Generator advancing its offset relies on.
		c := randomCase{seed: 5, offset: 100, p: 0.5}
		whole := run(t, 300, c, 0)
		part := run(t, 200, randomCase{seed: 5, offset: 200, p: 0.5}, 1)
		assert.Equal(t, whole[100:], part)
	})
	t.Run("moments", func(t *testing.T) {
		// Sanity of the distribution itself on many draws, 5σ bounds.
		const n = 1 << 18
		c := randomCase{seed: 2024, offset: 0, p: 0.3}
		dst := s.output(t, dt, []int{n}, contiguous)
		require.NoError(t, s.dev.Random(dst.View, dist, c.p, c.seed, c.offset))
		got := s.result(t, dst)
		var sum, sq float64
		for _, v := range got {
			sum += v
		}
		mean := sum / n
		for _, v := range got {
			sq += (v - mean) * (v - mean)
		}
		variance := sq / (n - 1)
		wantMean, wantVar := 0.5, 1.0/12
		switch dist {
		case hal.Normal:
			wantMean, wantVar = 0, 1
		case hal.Bernoulli:
			wantMean, wantVar = c.p, c.p*(1-c.p)
		}
		assert.InDelta(t, wantMean, mean, 5*math.Sqrt(wantVar/n), "mean of %d draws", n)
		// The sample variance of n draws has standard deviation about
		// σ²·√(2/n) for the normal, less for the others.
		assert.InDelta(t, wantVar, variance, 5*wantVar*math.Sqrt(2.0/n)+2*unitRoundoff(dt), "variance of %d draws", n)
		if dist != hal.Normal {
			for i, v := range got {
				if !assert.True(t, v >= 0 && v < 1 || dist == hal.Bernoulli && v == 1 || dt == hal.Float16 && v == 1, "draw %d = %g", i, v) {
					break
				}
			}
		}
	})
}
