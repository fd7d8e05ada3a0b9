package haltest

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// matmulShapes are {m, k, n}: scalar, a long reduction, ragged sizes just
// past powers of two (tile edges), an exact tile multiple, and k = 1. Their
// total is under 5 MFLOP.
var matmulShapes = [][3]int{
	{1, 1, 1},
	{3, 1025, 5},
	{129, 257, 65},
	{64, 64, 64},
	{7, 1, 9},
}

// matmulEmptyShapes have a zero dimension. m or n = 0 gives an empty
// result; k = 0 gives all zeros. A backend may refuse them with
// hal.ErrUnsupported.
var matmulEmptyShapes = [][3]int{
	{0, 5, 3},
	{4, 5, 0},
	{3, 0, 4},
}

func testMatMul(t *testing.T, dev hal.Device) {
	for _, s := range matmulShapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(t *testing.T) {
			runMatMul(t, dev, s[0], s[1], s[2])
		})
	}
	for _, s := range matmulEmptyShapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(t *testing.T) {
			runMatMul(t, dev, s[0], s[1], s[2])
		})
	}
}

// runMatMul checks one product against the float64 reference, with the
// error bound of matmulTolPerTerm scaled per element.
func runMatMul(t *testing.T, dev hal.Device, m, k, n int) {
	rng := newRand(uint64(m), uint64(k), uint64(n))
	a, b := randValues(rng, m*k, -4, 1), randValues(rng, k*n, -4, 1)
	da, db := upload(t, dev, a), upload(t, dev, b)
	dst := upload(t, dev, filled(m*n+tail, sentinel))
	err := dev.MatMul(dst, da, db, m, k, n)
	if (m == 0 || k == 0 || n == 0) && errors.Is(err, hal.ErrUnsupported) {
		t.Skipf("backend refuses a zero dimension: %v", err)
	}
	require.NoError(t, err)
	got := download(t, dev, dst, m*n+tail)
	want, tol := refMatMul(a, b, m, k, n)
	checkBounded(t, got[:m*n], want, tol)
	assert.Equal(t, filled(tail, sentinel), got[m*n:], "wrote past m·n")
}

// refMatMul returns the float64 product and, per element, the allowed
// error k·matmulTolPerTerm·Σ|a·b|. Each product of two float32s is exact
// in float64 and the float64 sum is accurate far beyond the tolerance.
func refMatMul(a, b []float32, m, k, n int) (want, tol []float64) {
	want, tol = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var sum, mag float64
			for p := range k {
				prod := float64(a[i*k+p]) * float64(b[p*n+j])
				sum += prod
				mag += math.Abs(prod)
			}
			want[i*n+j] = sum
			tol[i*n+j] = float64(k) * matmulTolPerTerm * mag
		}
	}
	return want, tol
}
