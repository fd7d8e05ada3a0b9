package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkSortRow compares, on one row of 1024 random float32 values,
// the row sorts of Sort (pdqsort of packed key·position uint64s for keys
// of 32 bits, of (uint64 key, position) pairs for Float64 and Int64) with
// the obvious alternative, a stable sort of positions under a NaN-aware
// float comparator (what sort.Stable over the row would do):
//
//	go test -run '^$' -bench SortRow ./backend/cpu
func BenchmarkSortRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 1024)
	for i := range x {
		x[i] = float64(float32(rng.NormFloat64()))
	}
	b.Run("keyed-pdqsort", func(b *testing.B) {
		pairs := make([]keyed, len(x))
		b.SetBytes(int64(4 * len(x)))
		for b.Loop() {
			for j, v := range x {
				pairs[j] = keyed{floatKey(v), int32(j)}
			}
			slices.SortFunc(pairs, compareKeyed)
		}
	})
	b.Run("packed-uint64", func(b *testing.B) {
		packed := make([]uint64, len(x))
		b.SetBytes(int64(4 * len(x)))
		for b.Loop() {
			for j, v := range x {
				packed[j] = uint64(floatKey32(v))<<32 | uint64(j)
			}
			slices.Sort(packed)
		}
	})
	b.Run("stable-comparator", func(b *testing.B) {
		perm := make([]int32, len(x))
		b.SetBytes(int64(4 * len(x)))
		for b.Loop() {
			for j := range perm {
				perm[j] = int32(j)
			}
			slices.SortStableFunc(perm, func(p, q int32) int {
				a, c := x[p], x[q]
				switch {
				case math.IsNaN(a):
					if math.IsNaN(c) {
						return 0
					}
					return 1
				case math.IsNaN(c), a < c:
					return -1
				case a > c:
					return 1
				}
				return 0
			})
		}
	})
}
