package tensor

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// nnRand is a generator seeded from the test's name, so a failure
// reproduces and every subtest draws different inputs.
func nnRand(t *testing.T) *rand.Rand {
	var seed uint64
	for _, c := range t.Name() {
		seed = seed*131 + uint64(c)
	}
	return rand.New(rand.NewPCG(seed, 0x6e6e))
}

// nnUniform returns n float32 values in [lo, hi).
func nnUniform(rng *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return out
}

// nnInput returns a random float32 tensor of shape on dev, values in
// [−1, 1), and the same values widened for the references.
func nnInput(t *testing.T, dev *Device, rng *rand.Rand, shape ...int) (*Tensor, []float64) {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := nnUniform(rng, n, -1, 1)
	x := FromFloat32(dev, data, shape...)
	t.Cleanup(x.Release)
	return x, nnFloat64s(data)
}

// nnRead reads a result as float32s and releases it.
func nnRead(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	defer x.Release()
	got, err := x.Float32s()
	require.NoError(t, err)
	return got
}

// nnRequireClose compares got with float64 references element by element
// under tol, naming the case and the first element that differs.
func nnRequireClose(t *testing.T, name string, want []float64, got []float32, tol func(int) float64) {
	t.Helper()
	require.Len(t, got, len(want), name)
	for i := range want {
		diff := math.Abs(float64(got[i]) - want[i])
		if math.IsNaN(want[i]) && math.IsNaN(float64(got[i])) {
			continue
		}
		if !(diff <= tol(i)) {
			t.Fatalf("%s: element %d: got %v, want %v (|diff| %.3g > tolerance %.3g)", name, i, got[i], want[i], diff, tol(i))
		}
	}
}

// nnErrorText runs f, which must panic with an *Error (misuse or an
// unsupported op), and returns its text.
func nnErrorText(t *testing.T, f func()) string {
	t.Helper()
	err := Catch(f)
	var te *Error
	require.True(t, errors.As(err, &te), "expected a *tensor.Error panic, got %v", err)
	return te.Error()
}
