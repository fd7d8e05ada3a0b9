package haltest

import (
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/webtensor/webtensor/hal"
)

// newRand returns a generator seeded from the case's name, so a failure
// reproduces exactly and cases do not depend on the order they run in.
func newRand(name string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(h.Sum64(), 0xcafe))
}

// randBytes returns n random bytes from a fixed seed.
func randBytes(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b) // never fails
	return b
}

// gen draws one input value for dtype dt. Values are float64 with a full
// 53-bit significand; operands round them to their dtype, so float64 cases
// get inputs that a backend computing in float32 cannot reproduce.
type gen func(rng *rand.Rand, dt hal.DType) float64

// logUniform draws magnitudes log-uniform in [2^lo, 2^hi] with a random
// sign (when signed), and exact zeros one time in sixteen. Nonzero
// magnitudes stay well above the smallest normal of every dtype, so a
// device that flushes subnormals computes the same as the reference.
func logUniform(lo, hi float64, signed bool) gen {
	return func(rng *rand.Rand, dt hal.DType) float64 {
		if rng.IntN(16) == 0 {
			return 0
		}
		lo, hi := lo, hi
		if dt == hal.Float16 {
			lo, hi = max(lo, -8), min(hi, 8)
		}
		x := math.Exp2(lo + (hi-lo)*rng.Float64())
		if signed && rng.IntN(2) == 0 {
			x = -x
		}
		return x
	}
}

// uniformIn draws uniformly from [lo, hi].
func uniformIn(lo, hi float64) gen {
	return func(rng *rand.Rand, _ hal.DType) float64 { return lo + (hi-lo)*rng.Float64() }
}

// intsIn draws integers uniformly from [lo, hi], for every dtype. Integer
// inputs make sums and products exact in any order while they stay below
// 2^24 (2^11 for float16).
func intsIn(lo, hi int) gen {
	return func(rng *rand.Rand, _ hal.DType) float64 { return float64(lo + rng.IntN(hi-lo+1)) }
}

// perDType uses float for float dtypes and ints for Int32.
func perDType(float, ints gen) gen {
	return func(rng *rand.Rand, dt hal.DType) float64 {
		if dt.IsInteger() {
			return ints(rng, dt)
		}
		return float(rng, dt)
	}
}

// bind fixes a generator's rng and dtype.
func bind(g gen, rng *rand.Rand, dt hal.DType) func() float64 {
	return func() float64 { return g(rng, dt) }
}

// randomValues returns n draws of g.
func randomValues(n int, g gen, rng *rand.Rand, dt hal.DType) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = roundTo(dt, g(rng, dt))
	}
	return v
}

var (
	inf  = math.Inf(1)
	nan  = math.NaN()
	negZ = math.Copysign(0, -1)
)

// floatSpecials are the IEEE special values and range edges, for kernels
// whose result on them the contract defines (directly, or as plain IEEE
// arithmetic). huge and tiny are the dtype's extremes that stay normal.
func floatSpecials(dt hal.DType) []float64 {
	huge, tiny := maxFinite(dt)/4, minNormal(dt)*4
	return []float64{nan, inf, -inf, 0, negZ, 1, -1, huge, -huge, tiny, -tiny, 0.5, -2.5, 3}
}
