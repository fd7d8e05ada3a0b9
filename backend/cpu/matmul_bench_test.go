package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatMulImpl compares the two candidate matmul kernels directly on
// Go slices, without device overhead, to justify the choice in matmul.go.
func BenchmarkMatMulImpl(b *testing.B) {
	impls := []struct {
		name string
		fn   func(dst, a, b []float32, m, k, n int)
	}{
		{"go", matmulGo},
		{"gonum", matmulGonum},
	}
	for _, size := range []int{256, 1024} {
		rng := rand.New(rand.NewPCG(1, 2))
		x, y := randSlice(rng, size*size), randSlice(rng, size*size)
		dst := make([]float32, size*size)
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%s/%d", impl.name, size), func(b *testing.B) {
				for b.Loop() {
					impl.fn(dst, x, y, size, size, size)
				}
				flops := 2 * float64(size) * float64(size) * float64(size) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32()*2 - 1
	}
	return s
}
