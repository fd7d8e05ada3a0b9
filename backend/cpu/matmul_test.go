package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMatMulKernels checks both candidate kernels on shapes that straddle
// the block sizes and the 4-way unroll, independent of the device plumbing.
func TestMatMulKernels(t *testing.T) {
	shapes := [][3]int{{1, 1, 1}, {5, 3, 7}, {2, kc + 3, nc + 5}, {33, 2*kc + 1, 17}, {3, 0, 4}, {0, 4, 3}}
	for _, s := range shapes {
		m, k, n := s[0], s[1], s[2]
		rng := rand.New(rand.NewPCG(uint64(m), uint64(k*n)))
		a, b := randSlice(rng, m*k), randSlice(rng, k*n)
		for name, fn := range map[string]func(dst, a, b []float32, m, k, n int){"go": matmulGo, "gonum": matmulGonum} {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", name, m, k, n), func(t *testing.T) {
				dst := make([]float32, m*n)
				for i := range dst {
					dst[i] = float32(math.NaN()) // must be overwritten
				}
				fn(dst, a, b, m, k, n)
				for i := range m {
					for j := range n {
						var want, mag float64
						for p := range k {
							want += float64(a[i*k+p]) * float64(b[p*n+j])
							mag += math.Abs(float64(a[i*k+p]) * float64(b[p*n+j]))
						}
						got := float64(dst[i*n+j])
						require.LessOrEqualf(t, math.Abs(got-want), float64(k)*0x1p-23*mag,
							"dst[%d,%d] = %v, want %v", i, j, got, want)
					}
				}
			})
		}
	}
}
