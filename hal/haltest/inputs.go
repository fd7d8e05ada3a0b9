package haltest

import (
	"math"
	"math/rand/v2"
)

// newRand returns a generator with a fixed seed per case, so a failure
// reproduces exactly and cases do not depend on the order they run in.
func newRand(seed ...uint64) *rand.Rand {
	var s1, s2 uint64 = 0x5eed, 0xcafe
	for _, s := range seed {
		s1, s2 = s1*31+s, s2^s<<7
	}
	return rand.New(rand.NewPCG(s1, s2))
}

// randBytes returns n random bytes from a fixed seed.
func randBytes(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b) // never fails
	return b
}

// randValues returns n values with a random sign and a magnitude in
// [2^(lo−1), 2^hi), with about one in ten exactly zero. Keeping nonzero
// magnitudes at or above 2^-11 means sums and products of two values are
// normal float32s, so a device that flushes subnormals to zero still
// matches the exact reference.
func randValues(rng *rand.Rand, n, lo, hi int) []float32 {
	v := make([]float32, n)
	for i := range v {
		if rng.IntN(10) == 0 {
			continue // zero
		}
		mag := (0.5 + rng.Float64()/2) * math.Ldexp(1, lo+rng.IntN(hi-lo+1))
		if rng.IntN(2) == 0 {
			mag = -mag
		}
		v[i] = float32(mag)
	}
	return v
}

// sigmoidSpecials are where a naive sigmoid overflows (e^88.8 > MaxFloat32),
// cancels or loses its tiny results.
var sigmoidSpecials = []float32{
	0, 100, -100, 1e30, -1e30, 87, -87, 88.7, -88.7, 89, -89, 20, -20, 1e-30, -1e-30,
}

// sigmoidValues is randValues over [−64, 64) with sigmoidSpecials mixed in,
// about one element in twenty, always including the first few for n ≥ 64.
func sigmoidValues(rng *rand.Rand, n int) []float32 {
	v := randValues(rng, n, -10, 6)
	for i := range v {
		if i < len(sigmoidSpecials) && n >= 64 {
			v[i] = sigmoidSpecials[i]
		} else if rng.IntN(20) == 0 {
			v[i] = sigmoidSpecials[rng.IntN(len(sigmoidSpecials))]
		}
	}
	return v
}
