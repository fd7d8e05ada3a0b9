package cpu

import (
	"sync"
	"sync/atomic"
)

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
// product is large enough (see gemmWorkers).
func gemmStrided[T float32 | float64](m, n, k int, alpha float64, a, b strided[T], beta float64, c []T, ldc int) {
	gemmWorkers(maxWorkers(), m, n, k, alpha, a, b, beta, c, ldc)
}

// gemmWorkers is gemmStrided on at most maxWorkers goroutines; callers that
// already run products in parallel pass 1.
//
// How a product is split across many cores (issue 17). Splitting c along
// one axis gives every worker a full copy of the other operand to pack:
// at 16 workers a 2048² product packs A sixteen times (only 2·128 flops
// per packed element) and the MLP's 128×784·784×512 packs its 128×784
// input sixteen times, so packing, not the kernel, stopped the scaling
// past four threads. Here the workers instead pack once, together: for
// each slab of k (several kc blocks, as much as gemmSlabElems allows) they
// first pack all of A's and B's panels, each panel by exactly one worker
// (gemmPackShared), then each multiplies its own block of a 2-D grid of
// tiles of c (gemmGrid) out of the shared packed slab. Packing is then
// (m+n)·k elements in all, split W ways, instead of about W·m·k + n·k, and
// the grid keeps the blocks within one tile row or column of each other
// in size. This is the Goto/BLIS scheme with the barrier between packing
// and multiplying being the end of one parallelChunks call; the price is
// two dispatches per slab (one slab for most products) and the packed A
// being read from L3 rather than from the L2 of the core that packed it.
// So where the one-axis split packs little more than the shared plan (few
// workers, a short k, one thin operand), it is kept: gemmWorkers
// estimates both plans' most loaded worker and runs the cheaper.
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
	if workers <= 1 {
		gemmSerial(ker, m, n, k, alpha, a, b, beta, c, ldc)
		return
	}
	mr, nr := ker.mr, ker.nr
	tilesM, tilesN := ceilDiv(m, mr), ceilDiv(n, nr)
	wm, wn := gemmGrid(tilesM, tilesN, workers, mr, nr)
	// Each plan's cost is its most loaded worker's: multiply-adds plus
	// gemmPackCost per element it packs, plus, for the shared packing, the
	// second dispatch.
	shared := ceilDiv(tilesM, wm)*mr*ceilDiv(tilesN, wn)*nr*k + gemmPackCost*ceilDiv((m+n)*k, workers) + gemmDispatchCost
	// The split along one axis: columns when there are tiles enough and c
	// is wide (or too few row tiles), else rows.
	byCols := tilesN >= workers && (n >= m || tilesM < workers)
	byRows := !byCols && tilesM >= workers
	switch {
	case byCols:
		cols := ceilDiv(tilesN, workers) * nr
		if m*cols*k+gemmPackCost*(m*ceilDiv(cols, ker.nc)+cols)*k > shared {
			break
		}
		parallelChunks(tilesN, workers, func(_, lo, hi int) {
			lo, hi = lo*nr, min(n, hi*nr)
			bb := b
			bb.off += lo * b.cs
			gemmSerial(ker, m, hi-lo, k, alpha, a, bb, beta, c[lo:], ldc)
		})
		return
	case byRows:
		rows := ceilDiv(tilesM, workers) * mr
		if rows*n*k+gemmPackCost*(rows*ceilDiv(n, ker.nc)+n)*k > shared {
			break
		}
		parallelChunks(tilesM, workers, func(_, lo, hi int) {
			lo, hi = lo*mr, min(m, hi*mr)
			aa := a
			aa.off += lo * a.rs
			gemmSerial(ker, hi-lo, n, k, alpha, aa, b, beta, c[lo*ldc:], ldc)
		})
		return
	}
	if wm*wn <= 1 {
		gemmSerial(ker, m, n, k, alpha, a, b, beta, c, ldc)
		return
	}
	gemmShared(ker, workers, wm, wn, m, n, k, alpha, a, b, beta, c, ldc)
}

// gemmPackCost weighs one packed element against multiply-adds when
// gemmWorkers compares plans: a packed element is a strided load and a
// store, about one cycle, in which an AVX2 core does 16 float32
// multiply-adds (AVX-512: 32).
const gemmPackCost = 16

// gemmDispatchCost is the shared plan's second dispatch (the wait for
// the slowest packer, and waking the workers again), in multiply-adds:
// a few microseconds. On two workers it keeps products whose packing is
// small beside their multiplies (an MLP's 128×512×512) split along one
// axis, where the shared plan measured slower.
const gemmDispatchCost = 1 << 17

// gemmSlabElems bounds the shared packed slab (A's and B's panels for
// several kc blocks of k): 4M elements, 16 MB of float32, which a
// many-core host's L3 holds and which keeps the dispatches per product to
// two for most products (all of the MLP's, 2048² in two slabs).
// Tests lower it to run products in several slabs.
var gemmSlabElems = 1 << 22

// gemmGridReads weighs, in multiply-adds, one element of the packed slab
// that a worker reads for its block: it reads rows+cols panels' worth per
// k, so among grids equally balanced the squarer blocks win.
const gemmGridReads = 4

// gemmGrid chooses how many row blocks (wm) and column blocks (wn) of
// tiles split c among at most workers workers: the grid whose largest
// block (rows·cols multiply-adds per k, plus the panels it reads) is
// smallest, and among equals the one using fewest workers.
func gemmGrid(tilesM, tilesN, workers, mr, nr int) (wm, wn int) {
	best := -1
	for gm := 1; gm <= min(workers, tilesM); gm++ {
		gn := min(workers/gm, tilesN)
		rows, cols := ceilDiv(tilesM, gm)*mr, ceilDiv(tilesN, gn)*nr
		cost := rows*cols + gemmGridReads*(rows+cols)
		if best < 0 || cost < best || cost == best && gm*gn < wm*wn {
			best, wm, wn = cost, gm, gn
		}
	}
	return wm, wn
}

// gemmShared runs a product on a wm×wn grid of workers that share one
// packed slab of A and B at a time (see gemmWorkers).
func gemmShared[T float32 | float64](ker *gemmKernel[T], workers, wm, wn, m, n, k int, alpha float64, a, b strided[T], beta float64, c []T, ldc int) {
	pool := gemmPool[T]()
	buf, _ := pool.Get().(*gemmBuffers[T])
	if buf == nil {
		buf = new(gemmBuffers[T])
	}
	mr, nr := ker.mr, ker.nr
	tilesM, tilesN := ceilDiv(m, mr), ceilDiv(n, nr)
	mp, np := tilesM*mr, tilesN*nr
	kc := min(ker.kc, k)
	blocks := min(ceilDiv(k, kc), max(1, gemmSlabElems/((mp+np)*kc)))
	buf.a = grow(buf.a, mp*kc*blocks)
	buf.b = grow(buf.b, np*kc*blocks)
	buf.tile = grow(buf.tile, mr*nr*wm*wn)
	al := T(alpha)
	for p0 := 0; p0 < k; p0 += kc * blocks {
		p1 := min(k, p0+kc*blocks)
		// Packing: the units are A's rows and B's columns (each packed for
		// every k of the slab), one panel per worker that owns its first.
		parallelChunks(mp+np, min(workers, tilesM+tilesN), func(_, lo, hi int) {
			i0, i1 := ceilDiv(lo, mr), min(tilesM, ceilDiv(hi, mr))
			j0, j1 := ceilDiv(max(0, lo-mp), nr), min(tilesN, ceilDiv(max(0, hi-mp), nr))
			for pc := p0; pc < p1; pc += kc {
				kb := min(kc, k-pc)
				q := (pc - p0) / kc
				if i0 < i1 {
					packA(buf.a[q*mp*kc+i0*mr*kb:], a, i0*mr, pc, min(m, i1*mr)-i0*mr, kb, mr)
					countPacked(min(m, i1*mr)-i0*mr, kb)
				}
				if j0 < j1 {
					packB(buf.b[q*np*kc+j0*nr*kb:], b, pc, j0*nr, kb, min(n, j1*nr)-j0*nr, nr)
					countPacked(min(n, j1*nr)-j0*nr, kb)
				}
			}
		})
		parallelChunks(wm*wn, wm*wn, func(w, _, _ int) {
			t0, t1 := chunkOf(tilesM, wm, w/wn)
			u0, u1 := chunkOf(tilesN, wn, w%wn)
			r0, r1 := t0*mr, min(m, t1*mr)
			c0, c1 := u0*nr, min(n, u1*nr)
			tile := buf.tile[w*mr*nr : (w+1)*mr*nr]
			for pc := p0; pc < p1; pc += kc {
				kb := min(kc, k-pc)
				q := (pc - p0) / kc
				pa, pb := buf.a[q*mp*kc:], buf.b[q*np*kc:]
				be := T(1)
				if pc == 0 {
					be = T(beta)
				}
				for jc := c0; jc < c1; jc += ker.nc {
					je := min(c1, jc+ker.nc)
					for ic := r0; ic < r1; ic += ker.mc {
						ie := min(r1, ic+ker.mc)
						gemmMacro(ker, kb, pa[ic*kb:], pb[jc*kb:], ie-ic, je-jc, al, be, c[ic*ldc+jc:], ldc, tile)
					}
				}
			}
		})
	}
	pool.Put(buf)
}

// chunkOf is chunk i of [0, n) cut into parts chunks whose sizes differ by
// at most one, as parallelChunks cuts.
func chunkOf(n, parts, i int) (lo, hi int) {
	lo = i*(n/parts) + min(i, n%parts)
	hi = lo + n/parts
	if i < n%parts {
		hi++
	}
	return lo, hi
}

// gemmCountPacking, set by tests, makes countPacked total the elements
// packed into gemmPacked; off, it costs one predictable branch per block.
var (
	gemmCountPacking bool
	gemmPacked       atomic.Int64
)

func countPacked(lanes, kb int) {
	if gemmCountPacking {
		gemmPacked.Add(int64(lanes * kb))
	}
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

// gemmStreaming lets gemmSerial hand products to gemmStreamB; benchmarks
// turn it off to time the packed-block order on the same shapes.
var gemmStreaming = true

// gemmSerial is the Goto/BLIS loop nest on one goroutine: a kc×nc block of
// b is packed into nr-wide column panels (kept in L3, each panel in L1 while
// in use), an mc×kc block of a into mr-tall row panels (kept in L2), and the
// microkernel multiplies one panel pair into an mr×nr tile of c. The first
// k block applies beta, later ones accumulate. A product whose A block
// (all of m, one kc block of k) fits the mc×kc space and whose b has
// contiguous rows runs as gemmStreamB instead, B packed a panel at a time.
func gemmSerial[T float32 | float64](ker *gemmKernel[T], m, n, k int, alpha float64, a, b strided[T], beta float64, c []T, ldc int) {
	pool := gemmPool[T]()
	buf, _ := pool.Get().(*gemmBuffers[T])
	if buf == nil {
		buf = new(gemmBuffers[T])
	}
	if gemmStreaming && ceilDiv(m, ker.mr)*ker.mr*min(k, ker.kc) <= ker.mc*ker.kc && b.cs == 1 && n > ker.nr {
		gemmStreamB(ker, m, n, k, T(alpha), a, b, T(beta), c, ldc, buf)
		pool.Put(buf)
		return
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
			countPacked(nb, kb)
			be := T(1)
			if pc == 0 {
				be = T(beta)
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				packA(buf.a, a, ic, pc, mb, kb, mr)
				countPacked(mb, kb)
				gemmMacro(ker, kb, buf.a, buf.b, mb, nb, al, be, c[ic*ldc+jc:], ldc, buf.tile)
			}
		}
	}
	pool.Put(buf)
}

// gemmMacro multiplies packed panels into the mb×nb block of c at c[0]:
// pa holds mb rows (panels of mr, k groups each), pb nb columns (panels of
// nr). Edge tiles go through tile and mergeTile.
func gemmMacro[T float32 | float64](ker *gemmKernel[T], kb int, pa, pb []T, mb, nb int, alpha, beta T, c []T, ldc int, tile []T) {
	mr, nr := ker.mr, ker.nr
	for jr := 0; jr < nb; jr += nr {
		w := min(nr, nb-jr)
		bp := pb[jr*kb : (jr+nr)*kb]
		for ir := 0; ir < mb; ir += mr {
			h := min(mr, mb-ir)
			gemmTile(ker, kb, pa[ir*kb:(ir+mr)*kb], bp, h, w, alpha, beta, c[ir*ldc+jr:], ldc, tile)
		}
	}
}

// gemmTile multiplies one A panel by one B panel into the h×w tile of c
// at c[0]: in place when the tile is whole, else through tile and
// mergeTile.
func gemmTile[T float32 | float64](ker *gemmKernel[T], kb int, ap, bp []T, h, w int, alpha, beta T, c []T, ldc int, tile []T) {
	if h == ker.mr && w == ker.nr {
		ker.run(kb, ap, bp, c, ldc, alpha, beta)
		return
	}
	ker.run(kb, ap, bp, tile, ker.nr, 1, 0)
	mergeTile(tile, ker.nr, h, w, alpha, beta, c, ldc)
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
