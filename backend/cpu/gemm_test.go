package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// withKernels runs f once with each kernel this CPU can run (assembly
// ones and the portable Go kernel), with at least two workers so the
// parallel splits run too.
func withKernels(t *testing.T, f func(t *testing.T)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	for i, k := range kernelsF32 {
		t.Run(k.name, func(t *testing.T) {
			gemmChoice.Store(int32(i))
			defer gemmChoice.Store(0)
			f(t)
		})
	}
}

// gemmCase is one product checked against a float64 reference.
type gemmCase struct {
	m, n, k     int
	at, bt      bool
	pad         int // extra leading-dimension elements that must never be read
	alpha, beta float64
}

func (c gemmCase) String() string {
	return fmt.Sprintf("%dx%dx%d/at=%v/bt=%v/pad=%d/alpha=%g/beta=%g", c.m, c.n, c.k, c.at, c.bt, c.pad, c.alpha, c.beta)
}

func checkGEMM[T float32 | float64](t *testing.T, rng *rand.Rand, c gemmCase) {
	epsT := 0x1p-52
	if _, ok := any(T(0)).(float32); ok {
		epsT = 0x1p-23
	}
	// a is stored m×k (or k×m when transposed) with leading dimension
	// cols+pad; the padding holds NaN so reading it would show.
	store := func(rows, cols int) ([]T, []float64, int) {
		ld := cols + c.pad
		s := make([]T, max(0, (rows-1)*ld+cols))
		for i := range s {
			s[i] = T(math.NaN())
		}
		v := make([]float64, rows*cols)
		for i := range rows {
			for j := range cols {
				x := T(rng.NormFloat64())
				s[i*ld+j], v[i*cols+j] = x, float64(x)
			}
		}
		return s, v, ld
	}
	ar, ac := c.m, c.k
	if c.at {
		ar, ac = ac, ar
	}
	br, bc := c.k, c.n
	if c.bt {
		br, bc = bc, br
	}
	a, av, lda := store(ar, ac)
	b, bv, ldb := store(br, bc)
	ldc := c.n + c.pad
	dst := make([]T, max(0, (c.m-1)*ldc+c.n))
	old := make([]float64, len(dst))
	for i := range dst {
		if c.beta == 0 {
			dst[i] = T(math.NaN())
		} else {
			dst[i] = T(rng.NormFloat64())
		}
		old[i] = float64(dst[i])
	}
	gemm(c.at, c.bt, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, dst, ldc)
	aAt := func(i, p int) float64 {
		if c.at {
			return av[p*c.m+i]
		}
		return av[i*c.k+p]
	}
	bAt := func(p, j int) float64 {
		if c.bt {
			return bv[j*c.k+p]
		}
		return bv[p*c.n+j]
	}
	for i := range c.m {
		for j := range c.n {
			s, mag := 0.0, 0.0
			for p := range c.k {
				x := aAt(i, p) * bAt(p, j)
				s += x
				mag += math.Abs(x)
			}
			o := i*ldc + j
			want := c.alpha * s
			if c.beta != 0 {
				want += c.beta * old[o]
			}
			tol := 2*epsT*(float64(c.k)*math.Abs(c.alpha)*mag+math.Abs(c.beta*old[o])+math.Abs(want)) + 1e-300
			if math.Abs(float64(dst[o])-want) > tol || math.IsNaN(float64(dst[o])) {
				t.Fatalf("%v: c[%d,%d] = %v, want %v ± %g", c, i, j, dst[o], want, tol)
			}
		}
		for j := c.n; j < ldc && i*ldc+j < len(dst); j++ {
			if got := float64(dst[i*ldc+j]); !math.IsNaN(got) && got != old[i*ldc+j] {
				t.Fatalf("%v: padding c[%d,%d] written", c, i, j)
			}
		}
	}
}

// TestGEMM checks the packed engine against a float64 reference over
// odd sizes (edge tiles in both directions, several k, m and n blocks),
// every transpose combination, padded leading dimensions and alpha/beta,
// including beta = 0 over a NaN-filled dst.
func TestGEMM(t *testing.T) {
	shapes := [][3]int{
		{1, 1, 1}, {1, 7, 17}, {7, 1, 17}, {7, 17, 1}, {6, 16, 8}, {17, 33, 300},
		{1025, 17, 40}, {17, 1025, 40}, {150, 130, 600}, {5, 4100, 9}, {300, 20, 1000}, {13, 64, 24},
		{250, 70, 64}, {64, 211, 256}, // B streamed a panel at a time (gemmStreamB), A over one mc block
	}
	scalars := [][2]float64{{1, 0}, {-0.5, 2}, {2, 1}}
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for i, s := range shapes {
			for tr := range 4 {
				ab := scalars[(i+tr)%len(scalars)]
				c := gemmCase{s[0], s[1], s[2], tr&1 != 0, tr&2 != 0, (i + tr) % 3, ab[0], ab[1]}
				checkGEMM[float32](t, rng, c)
				checkGEMM[float64](t, rng, c)
			}
		}
	})
}

// TestGEMMDegenerate covers k = 0 and alpha = 0, which only scale dst
// (clearing NaN when beta = 0), and empty m or n.
func TestGEMMDegenerate(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, c := range []gemmCase{
			{m: 3, n: 5, k: 0, alpha: 1, beta: 0},
			{m: 3, n: 5, k: 0, alpha: 1, beta: 0.5, pad: 2},
			{m: 4, n: 9, k: 7, alpha: 0, beta: 0, at: true},
			{m: 4, n: 9, k: 7, alpha: 0, beta: 3},
			{m: 0, n: 9, k: 7, alpha: 1, beta: 0},
			{m: 4, n: 0, k: 7, alpha: 1, beta: 0},
		} {
			checkGEMM[float32](t, rng, c)
			checkGEMM[float64](t, rng, c)
		}
	})
}

// TestGEMMStrided feeds gemmStrided operands with no unit stride and a
// broadcast (stride 0) row axis, which packing must read as they lie.
func TestGEMMStrided(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		checkStridedGEMM(t, rand.New(rand.NewPCG(7, 8)), 37, 45, 290)
	})
}

// checkStridedGEMM multiplies an m×k a read at every third element by a
// k×n b whose rows are all one row (stride 0), against a float64 sum.
func checkStridedGEMM(t *testing.T, rng *rand.Rand, m, n, k int) {
	data := make([]float64, 3*m*k+5)
	for i := range data {
		data[i] = rng.NormFloat64()
	}
	a := strided[float64]{data, 5, 3 * k, 3} // every third element
	brow := make([]float64, 2*n)
	for i := range brow {
		brow[i] = rng.NormFloat64()
	}
	b := strided[float64]{brow, 1, 0, 2} // one row repeated k times
	c := make([]float64, m*n)
	gemmStrided(m, n, k, 1.5, a, b, 0, c, n)
	for i := range m {
		for j := range n {
			s, mag := 0.0, 0.0
			for p := range k {
				x := data[a.off+i*a.rs+p*a.cs] * brow[b.off+j*b.cs]
				s += x
				mag += math.Abs(x)
			}
			require.InDelta(t, 1.5*s, c[i*n+j], 4*0x1p-52*float64(k)*mag+1e-300, "%dx%dx%d: c[%d,%d]", m, n, k, i, j)
		}
	}
}
