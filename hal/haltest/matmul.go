package haltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// mmCase is one MatMul: the batch shape, M, K, N, the layouts of a and b,
// and alpha, beta.
type mmCase struct {
	name        string
	batch       []int
	m, k, n     int
	la, lb      layout
	alpha, beta float64
}

// transposedLast swaps the last two axes in memory: a matrix stored the
// other way round, as a transposed operand (Aᵀ·B, Q·Kᵀ) arrives.
func transposedLast(rank, offset int) layout {
	o := identity(rank)
	o[rank-1], o[rank-2] = o[rank-2], o[rank-1]
	return layout{name: "T", order: o, offset: offset}
}

// broadcastAxis makes axis ax of a rank-axis view stride 0.
func broadcastAxis(rank, ax int, order []int) layout {
	b := make([]bool, rank)
	b[ax] = true
	return layout{name: fmt.Sprintf("bcast%d", ax), bcast: b, order: order, offset: 1}
}

// mmCases: the scalar product; a long K; sizes just past powers of two
// (tile edges); GEMV (N = 1, and M = 1); the outer product (K = 1); empty
// M, N and K (K = 0 gives beta·dst); transposes and steps through strides;
// alpha and beta, with beta = 0 over a NaN-filled dst; batches, with batch
// axes broadcast by stride 0 as torch.matmul's [B,H,T,D]·[B,H,D,T] and
// attention with a shared K or V need.
func mmCases(dt hal.DType) []mmCase {
	alpha, beta := -1.5, 0.25
	if dt.IsInteger() {
		alpha, beta = 2, -1
	}
	c2 := contiguous
	stepped := layout{name: "stepped", step: []int{3, 2}, offset: 4}
	cases := []mmCase{
		{"1x1x1", nil, 1, 1, 1, c2, c2, 1, 0},
		{"3x1025x5", nil, 3, 1025, 5, c2, c2, 1, 0},
		{"129x257x65", nil, 129, 257, 65, c2, c2, 1, 0},
		{"64x64x64", nil, 64, 64, 64, c2, c2, 1, 0},
		{"7x1x9/outer", nil, 7, 1, 9, c2, c2, 1, 0},
		{"33x17x1/gemv", nil, 33, 17, 1, c2, c2, 1, 0},
		{"1x40x33/vecmat", nil, 1, 40, 33, c2, c2, 1, 0},
		{"3x0x4/k=0", nil, 3, 0, 4, c2, c2, 1, 0},
		{"3x0x4/k=0/beta", nil, 3, 0, 4, c2, c2, 1, beta},
		{"0x5x3", nil, 0, 5, 3, c2, c2, 1, 0},
		{"4x5x0", nil, 4, 5, 0, c2, c2, 1, 0},
		{"37x19x23/aT", nil, 37, 19, 23, transposedLast(2, 2), c2, 1, 0},
		{"37x19x23/bT", nil, 37, 19, 23, c2, transposedLast(2, 0), 1, 0},
		{"37x19x23/aT-bT", nil, 37, 19, 23, transposedLast(2, 0), transposedLast(2, 3), 1, 0},
		{"37x19x23/stepped", nil, 37, 19, 23, stepped, withOffset(5), 1, 0},
		{"37x19x23/alpha", nil, 37, 19, 23, c2, c2, alpha, 0},
		{"37x19x23/alpha-beta", nil, 37, 19, 23, c2, transposedLast(2, 1), alpha, beta},
		{"37x19x23/beta=1", nil, 37, 19, 23, c2, c2, 1, 1},
		{"4x9x11x6/batched", []int{4}, 9, 11, 6, withOffset(1), c2, 1, 0},
		{"2x3x7x5x7/attention", []int{2, 3}, 7, 5, 7, c2, c2, 1, 0},
		{"2x3x7x5x7/attention-kT", []int{2, 3}, 7, 5, 7, c2, transposedLast(4, 0), alpha, 0},
		{"2x3x7x5x7/bcast-a-heads", []int{2, 3}, 7, 5, 7, broadcastAxis(4, 1, nil), c2, 1, 0},
		{"2x3x7x5x7/bcast-b-batch", []int{2, 3}, 7, 5, 7, c2, broadcastAxis(4, 0, []int{0, 1, 3, 2}), 1, beta},
		{"2x3x7x5x7/bcast-both", []int{2, 3}, 7, 5, 7, broadcastAxis(4, 0, nil), broadcastAxis(4, 1, nil), 1, 0},
		{"2x2x1x2x3x4x5x6/rank8", []int{2, 2, 1, 2, 3, 4}, 5, 3, 6, c2, c2, 1, 0},
		{"2x0x3x4x5/empty-batch", []int{2, 0}, 3, 4, 5, c2, c2, 1, 0},
	}
	return cases
}

func testMatMul(t *testing.T, s *suite, dt hal.DType) {
	for _, c := range mmCases(dt) {
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t.Name())
			g := perDType(logUniform(-4, 1, true), intsIn(-8, 8))
			aShape := append(append([]int{}, c.batch...), c.m, c.k)
			bShape := append(append([]int{}, c.batch...), c.k, c.n)
			dShape := append(append([]int{}, c.batch...), c.m, c.n)
			a := s.operand(t, dt, aShape, c.la, bind(g, rng, dt))
			b := s.operand(t, dt, bShape, c.lb, bind(g, rng, dt))
			init := bind(g, rng, dt)
			if c.beta == 0 && dt.IsFloat() {
				init = func() float64 { return nan } // must be ignored
			}
			dst := s.operand(t, dt, dShape, withOffset(len(c.batch)%2), init)
			c0 := dst.values()
			require.NoError(t, s.dev.MatMul(dst.View, a.View, b.View, c.alpha, c.beta))
			want, tol := refMatMul(dt, a.values(), b.values(), c0, numel(c.batch), c.m, c.k, c.n, c.alpha, c.beta)
			got := s.result(t, dst)
			if dt.IsInteger() {
				checkExact(t, dt, got, want, nil)
			} else {
				checkWithin(t, s.arith, dt, got, want, tol, nil)
			}
		})
	}
}

// refMatMul returns alpha·a·b + beta·c per batch (beta = 0 ignores c) and
// each element's allowed error, u·(perTerm·k·|alpha|·Σ|a·b| + 2|beta·c|):
// the dot product's bound plus the roundings of the scaling and the
// addition.
func refMatMul(dt hal.DType, a, b, c []float64, batch, m, k, n int, alpha, beta float64) (want, tol []float64) {
	u := unitRoundoff(dt)
	want, tol = make([]float64, batch*m*n), make([]float64, batch*m*n)
	for z := range batch {
		az, bz, cz := a[z*m*k:], b[z*k*n:], z*m*n
		for i := range m {
			for j := range n {
				var sum, mag float64
				for p := range k {
					prod := az[i*k+p] * bz[p*n+j]
					sum += prod
					mag += math.Abs(prod)
				}
				w := alpha * sum
				e := perTerm * float64(k) * math.Abs(alpha) * mag
				if beta != 0 {
					w += beta * c[cz+i*n+j]
					e += 2 * math.Abs(beta*c[cz+i*n+j])
				}
				want[cz+i*n+j], tol[cz+i*n+j] = w, u*e
			}
		}
	}
	return want, tol
}

// mmRand is kept for benchmarks: n random values in [−1, 1).
func mmRand(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}
