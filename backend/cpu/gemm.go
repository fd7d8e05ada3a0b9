package cpu

import "sync"

// strided is a matrix view: element (i, j) lies at data[off+i*rs+j*cs].
// Packing reads any strides, so transposed, broadcast and sliced operands
// reach the kernels without a separate copy.
type strided[T float32 | float64] struct {
	data        []T
	off, rs, cs int
}

// gemmParallelMin is the number of multiply-adds below which a product
// stays on one goroutine: at about 100 GFLOPS that is ~10 µs of work, well
// above the cost of waking a second worker.
const gemmParallelMin = 1 << 19

// gemm computes c = alpha·op(a)·op(b) + beta·c for row-major c (m×n, row
// stride ldc), where op transposes when at/bt is set; a and b are row-major
// with leading dimensions lda and ldb, as in BLAS. beta = 0 ignores c's
// contents (NaN included).
func gemm[T float32 | float64](at, bt bool, m, n, k int, alpha float64, a []T, lda int, b []T, ldb int, beta float64, c []T, ldc int) {
	x := strided[T]{a, 0, lda, 1}
	if at {
		x.rs, x.cs = 1, lda
	}
	y := strided[T]{b, 0, ldb, 1}
	if bt {
		y.rs, y.cs = 1, ldb
	}
	gemmStrided(m, n, k, alpha, x, y, beta, c, ldc)
}

// gemmStrided is gemm on strided operands, split across workers when the
// product is large enough. Workers get disjoint blocks of c along the
// longer of its axes, each blocked and packed on its own, so they share
// nothing and two workers run at twice the speed of one.
func gemmStrided[T float32 | float64](m, n, k int, alpha float64, a, b strided[T], beta float64, c []T, ldc int) {
	gemmWorkers(maxWorkers(), m, n, k, alpha, a, b, beta, c, ldc)
}

// gemmWorkers is gemmStrided on at most maxWorkers goroutines; callers that
// already run products in parallel pass 1.
func gemmWorkers[T float32 | float64](maxWorkers, m, n, k int, alpha float64, a, b strided[T], beta float64, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleMatrix(m, n, T(beta), c, ldc)
		return
	}
	ker := gemmKernelFor[T]()
	work := m * n * k
	workers := min(maxWorkers, max(1, work/gemmParallelMin))
	tilesM, tilesN := ceilDiv(m, ker.mr), ceilDiv(n, ker.nr)
	switch {
	case workers <= 1:
	case tilesN >= workers && (n >= m || tilesM < workers):
		parallelChunks(tilesN, workers, func(_, lo, hi int) {
			lo, hi = lo*ker.nr, min(n, hi*ker.nr)
			bb := b
			bb.off += lo * b.cs
			gemmSerial(ker, m, hi-lo, k, alpha, a, bb, beta, c[lo:], ldc)
		})
		return
	case tilesM >= workers:
		parallelChunks(tilesM, workers, func(_, lo, hi int) {
			lo, hi = lo*ker.mr, min(m, hi*ker.mr)
			aa := a
			aa.off += lo * a.rs
			gemmSerial(ker, hi-lo, n, k, alpha, aa, b, beta, c[lo*ldc:], ldc)
		})
		return
	}
	gemmSerial(ker, m, n, k, alpha, a, b, beta, c, ldc)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// scaleMatrix sets c = beta·c, writing zeros when beta = 0 so that NaN in
// c does not survive.
func scaleMatrix[T float32 | float64](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmBuffers is one worker's packing space, reused through a pool so that
// a product allocates nothing once warm.
type gemmBuffers[T float32 | float64] struct {
	a, b, tile []T
}

var gemmPools = struct{ f32, f64 sync.Pool }{}

func gemmPool[T float32 | float64]() *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return &gemmPools.f32
	}
	return &gemmPools.f64
}

func grow[T float32 | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// gemmSerial is the Goto/BLIS loop nest on one goroutine: a kc×nc block of
// b is packed into nr-wide column panels (kept in L3, each panel in L1 while
// in use), an mc×kc block of a into mr-tall row panels (kept in L2), and the
// microkernel multiplies one panel pair into an mr×nr tile of c. The first
// k block applies beta, later ones accumulate.
func gemmSerial[T float32 | float64](ker *gemmKernel[T], m, n, k int, alpha float64, a, b strided[T], beta float64, c []T, ldc int) {
	pool := gemmPool[T]()
	buf, _ := pool.Get().(*gemmBuffers[T])
	if buf == nil {
		buf = new(gemmBuffers[T])
	}
	mr, nr := ker.mr, ker.nr
	kc := min(ker.kc, k)
	nc := min(ker.nc, ceilDiv(n, nr)*nr)
	mc := min(ker.mc, ceilDiv(m, mr)*mr)
	buf.a = grow(buf.a, mc*kc)
	buf.b = grow(buf.b, kc*nc)
	buf.tile = grow(buf.tile, mr*nr)
	al := T(alpha)
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			packB(buf.b, b, pc, jc, kb, nb, nr)
			be := T(1)
			if pc == 0 {
				be = T(beta)
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				packA(buf.a, a, ic, pc, mb, kb, mr)
				for jr := 0; jr < nb; jr += nr {
					w := min(nr, nb-jr)
					bp := buf.b[jr*kb : (jr+nr)*kb]
					for ir := 0; ir < mb; ir += mr {
						h := min(mr, mb-ir)
						ap := buf.a[ir*kb : (ir+mr)*kb]
						co := (ic+ir)*ldc + jc + jr
						if h == mr && w == nr {
							ker.run(kb, ap, bp, c[co:], ldc, al, be)
							continue
						}
						ker.run(kb, ap, bp, buf.tile, nr, 1, 0)
						mergeTile(buf.tile, nr, h, w, al, be, c[co:], ldc)
					}
				}
			}
		}
	}
	pool.Put(buf)
}

// mergeTile adds the h×w corner of an edge tile computed into scratch to c,
// as c = alpha·tile + beta·c.
func mergeTile[T float32 | float64](tile []T, nr, h, w int, alpha, beta T, c []T, ldc int) {
	for i := range h {
		t := tile[i*nr : i*nr+w]
		row := c[i*ldc : i*ldc+w]
		if beta == 0 {
			for j, v := range t {
				row[j] = alpha * v
			}
			continue
		}
		for j, v := range t {
			row[j] = alpha*v + beta*row[j]
		}
	}
}
