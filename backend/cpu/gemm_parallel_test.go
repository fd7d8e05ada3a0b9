package cpu

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// gemmProcs are the worker counts the parallel tests run under: on a
// two-core machine 16 and 64 still run the 16- and 64-way grids, only
// time-sliced.
var gemmProcs = []int{1, 2, 3, 7, 16, 64}

// withProcs runs f under each of gemmProcs.
func withProcs(t *testing.T, f func(t *testing.T, procs int)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range gemmProcs {
		runtime.GOMAXPROCS(p)
		f(t, p)
	}
}

// TestGEMMParallel checks every shape class the partition treats
// differently (tall, wide, square, the MLP's, odd sizes with edge tiles on
// both axes, a tiny product that stays serial, a long k in several slabs)
// with every transpose, padded leading dimensions and alpha/beta, float32
// and float64, against the float64 reference, under 1 to 64 workers and
// with each kernel.
func TestGEMMParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("large products under six worker counts")
	}
	defer func(v int) { gemmSlabElems = v }(gemmSlabElems)
	shapes := []struct {
		m, n, k int
		slab    int // gemmSlabElems for this shape, 0 for the default
	}{
		{1000, 40, 300, 0},       // tall
		{40, 1000, 300, 0},       // wide
		{256, 256, 256, 0},       // square
		{128, 512, 784, 0},       // the MLP's first layer
		{263, 271, 129, 0},       // odd: edge tiles on both axes
		{5, 7, 11, 0},            // tiny: serial
		{7, 3000, 50, 0},         // fewer row tiles than workers
		{150, 170, 1100, 100000}, // k in several slabs (slab smaller than k)
	}
	scalars := [][2]float64{{1, 0}, {-0.5, 2}, {2, 1}}
	withKernels(t, func(t *testing.T) {
		withProcs(t, func(t *testing.T, procs int) {
			rng := rand.New(rand.NewPCG(uint64(procs), 9))
			for i, s := range shapes {
				gemmSlabElems = 1 << 22
				if s.slab > 0 {
					gemmSlabElems = s.slab
				}
				tr := (i + procs) % 4
				ab := scalars[(i+procs)%len(scalars)]
				c := gemmCase{s.m, s.n, s.k, tr&1 != 0, tr&2 != 0, (i + procs) % 3, ab[0], ab[1]}
				checkGEMM[float32](t, rng, c)
				checkGEMM[float64](t, rng, c)
			}
			gemmSlabElems = 100000
			checkStridedGEMM(t, rng, 150, 170, 600)
		})
	})
}

// TestGEMMGrid checks the grid: within the workers and the tiles, using
// more than one worker whenever there are tiles enough, and no block more
// than one tile row and column larger than the ideal.
func TestGEMMGrid(t *testing.T) {
	for _, tc := range [][3]int{{342, 64, 16}, {22, 16, 16}, {22, 16, 7}, {1, 200, 16}, {200, 1, 16}, {3, 3, 64}, {1, 1, 16}, {40, 2, 3}} {
		tilesM, tilesN, workers := tc[0], tc[1], tc[2]
		wm, wn := gemmGrid(tilesM, tilesN, workers, 6, 32)
		require.True(t, wm >= 1 && wn >= 1 && wm*wn <= workers && wm <= tilesM && wn <= tilesN, "%v: grid %d×%d", tc, wm, wn)
		if min(workers, tilesM*tilesN) > 1 {
			require.Greater(t, wm*wn, 1, "%v: one worker", tc)
		}
		// The largest block is within one tile row and column of an
		// even share of the tiles among wm×wn workers.
		require.LessOrEqual(t, ceilDiv(tilesM, wm), tilesM/wm+1, "%v", tc)
		require.LessOrEqual(t, ceilDiv(tilesN, wn), tilesN/wn+1, "%v", tc)
	}
}

// TestGEMMPackingVolume counts the elements packed by one product: at 16
// workers the MLP's products and 2048³ pack every element of a and b
// exactly once ((m+n)·k), where a split of c along one axis packed the
// other operand once per worker (logged beside it).
func TestGEMMPackingVolume(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func() { gemmCountPacking = false }()
	gemmCountPacking = true
	ker := gemmKernelFor[float32]()
	// The MLP's forward product and its two backward ones (x·W, xᵀ·dy,
	// dy·Wᵀ at batch 128), 2048³ (matmul/2048) and an odd shape.
	for _, s := range [][3]int{{128, 512, 784}, {784, 512, 128}, {128, 784, 512}, {2048, 2048, 2048}, {263, 271, 129}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for _, procs := range []int{1, 16} {
			runtime.GOMAXPROCS(procs)
			gemmPacked.Store(0)
			gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
			got, oneAxis := int(gemmPacked.Load()), oneAxisPacking(ker, m, n, k, procs)
			switch {
			case procs == 1:
				require.Equal(t, n*k+m*k*ceilDiv(n, ker.nc), got, "%v serial", s)
			case m*n*k >= 1<<25:
				// The MLP's products and 2048³: always the shared plan.
				require.Equal(t, (m+n)*k, got, "%v at %d workers", s, procs)
			default:
				// The odd shape: either plan, by the kernel's tile sizes.
				require.Contains(t, []int{(m + n) * k, oneAxis}, got, "%v at %d workers", s, procs)
			}
			t.Logf("%dx%dx%d at %d workers: %d elements packed (one-axis split at 16: %d)", m, n, k, procs, gemmPacked.Load(), oneAxisPacking(ker, m, n, k, 16))
		}
	}
}

// oneAxisPacking is what the split of c along one axis (main before issue
// 17) packed: each of w workers its share of the split operand's panels
// and all of the other operand, per its own nc and mc blocks.
func oneAxisPacking(ker *gemmKernel[float32], m, n, k, w int) int {
	w = min(w, max(1, m*n*k/gemmParallelMin))
	tilesM, tilesN := ceilDiv(m, ker.mr), ceilDiv(n, ker.nr)
	switch {
	case tilesN >= w && (n >= m || tilesM < w):
		cols := ceilDiv(tilesN, w) * ker.nr
		return n*k + w*m*k*ceilDiv(cols, ker.nc)
	case tilesM >= w:
		return m*k + w*n*k
	}
	return n*k + m*k*ceilDiv(n, ker.nc)
}

// TestGEMMAllocations checks that a product allocates nothing on one
// worker once its buffers are pooled, and on 16 workers (where it measured
// none) at most the odd dispatch record.
func TestGEMMAllocations(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, s := range [][3]int{{128, 512, 784}, {300, 310, 320}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		run := func() { gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n) }
		runtime.GOMAXPROCS(1)
		run()
		require.Zero(t, testing.AllocsPerRun(5, run), "%v serial", s)
		runtime.GOMAXPROCS(16)
		run()
		allocs := testing.AllocsPerRun(5, run)
		t.Logf("%v at 16 workers: %v allocations per product", s, allocs)
		require.LessOrEqual(t, allocs, 2.0, "%v at 16 workers", s)
	}
}
