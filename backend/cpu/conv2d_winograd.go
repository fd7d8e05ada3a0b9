package cpu

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Winograd convolution F(4×4, 3×3) for 3×3, stride-1, undilated layers.
//
// The output is cut into 4×4 tiles; each reads a 6×6 patch of the input.
// With the transforms of Lavin and Gray ("Fast Algorithms for
// Convolutional Neural Networks", 2015; interpolation points 0, ±1, ±2,
// ∞), a tile's output is Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A, and summed over the
// input channels the elementwise product becomes, for each of the 36
// positions of the 6×6 transformed tile, one matrix product
//
//	M_p [Cout × tiles] = U_p [Cout × C] · V_p [C × tiles]
//
// with U_p the transformed weights and V_p the transformed input patches.
// That is 36 multiplies per 16 outputs per channel pair instead of 144 (a
// quarter of the direct arithmetic), and the input transform writes 36/16
// = 2.25 values per input value where the implicit GEMM's im2col packing
// writes 9.
//
// The weights are transformed once per call (in float64, rounded once)
// straight into the GEMM microkernel's packed A panels. Tiles are taken a
// block at a time (per worker, its own scratch from a pool): the input
// transform writes the block's V_p directly as packed B panels, the
// microkernel multiplies them into M_p, and the output transform scatters
// the block's 4×4 tiles into dst, clipping those that overhang the
// output's edge. A block is sized so that its V and M stay near the core
// (see winogradBlockBytes).
//
// Accuracy: the transforms scale values by up to 5 (input), 1/4 to 1
// (weights) and 8 (output), so float32 rounding errs more than the direct
// sum; measured on random N(0,1) data at C = 256 and 512 the worst error
// relative to Σ|terms| stays within the project's 1e-5 float32 bound
// (TestConv2DWinogradAccuracy logs it).

// Tile sizes: wgOut×wgOut outputs from a wgIn×wgIn patch, wgPos positions.
const (
	wgOut = 4
	wgIn  = wgOut + 2
	wgPos = wgIn * wgIn
)

// winogradBlockBytes bounds the scratch of one block of tiles (its V and
// M, 36·(C + Cout)·tiles values): about the L2 cache of one core, so that
// what the input transform writes is still near when the GEMM reads it.
var winogradBlockBytes = 1 << 20

// winogradMode is how conv2d chooses Winograd: winogradAuto where it
// measured faster, winogradOff never, winogradForce wherever it applies.
// WEBTENSOR_CONV_WINOGRAD=0 or 1 sets off or force at start-up, for side
// by side comparisons; tests set it directly.
var winogradMode atomic.Int32

const (
	winogradAuto = iota
	winogradOff
	winogradForce
)

func init() {
	switch os.Getenv("WEBTENSOR_CONV_WINOGRAD") {
	case "0":
		winogradMode.Store(winogradOff)
	case "1":
		winogradMode.Store(winogradForce)
	}
}

// winogradRuns counts the convolutions that took the Winograd path, so
// that tests can tell the dispatch really chose it.
var winogradRuns atomic.Int64

// winogradApplies reports whether g is a convolution the Winograd path
// computes: a 3×3 window, stride 1 and dilation 1 (any padding, groups
// and batch).
func winogradApplies(g convGeom) bool {
	w := g.win
	return w.KH == 3 && w.KW == 3 && w.StrideH == 1 && w.StrideW == 1 && w.DilationH == 1 && w.DilationW == 1 &&
		g.cinG > 0 && g.coutG > 0 && w.OutH > 0 && w.OutW > 0
}

// useWinograd reports whether conv2d runs g by Winograd. By default that
// is where it measured faster than the implicit GEMM (BENCHMARKS.md,
// "Winograd convolution on the CPU"): at least 16 input and output
// channels per group, where the 36 products are wide enough for the
// microkernel, and a few tiles of output.
func useWinograd[T float32 | float64](g convGeom) bool {
	var z T
	if _, ok := any(z).(float32); !ok || !winogradApplies(g) {
		return false // float64 keeps the direct sums' accuracy
	}
	switch winogradMode.Load() {
	case winogradOff:
		return false
	case winogradForce:
		return true
	}
	tiles := g.n * ceilDiv(g.win.OutH, wgOut) * ceilDiv(g.win.OutW, wgOut)
	return g.cinG >= 16 && g.coutG >= 16 && tiles >= 16
}

// winogradConv is one convolution's plan for the Winograd path.
type winogradConv[T float32 | float64] struct {
	g              convGeom
	ker            *gemmKernel[T]
	src            []T
	off            int
	st             []int
	dst            []T
	u              []T // per group and position, mPanels A panels of cinG groups of mr
	mPanels, mRows int
	tilesW, tiles  int // tiles per output row; per image
	block          int // tiles per block, a multiple of nr
}

// winogradScratch is one worker's V and M for a block of tiles.
type winogradScratch[T float32 | float64] struct {
	v, m []T
}

var winogradPools = struct{ f32, f64, u32, u64 sync.Pool }{}

func winogradPool[T float32 | float64](weights bool) *sync.Pool {
	var z T
	_, f32 := any(z).(float32)
	switch {
	case f32 && weights:
		return &winogradPools.u32
	case f32:
		return &winogradPools.f32
	case weights:
		return &winogradPools.u64
	}
	return &winogradPools.f64
}

// convWinograd runs the convolution of src (offset off, strides st) with
// the weight wt into the contiguous dst by Winograd F(4×4, 3×3).
func convWinograd[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) {
	winogradRuns.Add(1)
	ker := gemmKernelFor[T]()
	c := winogradConv[T]{g: g, ker: ker, src: src, off: off, st: st, dst: dst}
	c.mPanels = ceilDiv(g.coutG, ker.mr)
	c.mRows = c.mPanels * ker.mr
	c.tilesW = ceilDiv(g.win.OutW, wgOut)
	c.tiles = ceilDiv(g.win.OutH, wgOut) * c.tilesW
	total := g.n * c.tiles
	var z T
	perTile := wgPos * (g.cinG + c.mRows) * int(unsafe.Sizeof(z))
	c.block = max(1, winogradBlockBytes/perTile/ker.nr) * ker.nr
	flops := g.groups * g.coutG * g.cinG * total * wgPos
	workers := min(maxWorkers(), max(1, flops/gemmParallelMin))
	// Enough blocks for every worker.
	if per := ceilDiv(ceilDiv(total, ker.nr), ceilDiv(workers, g.groups)) * ker.nr; per < c.block {
		c.block = per
	}
	blocks := ceilDiv(total, c.block)

	uPool := winogradPool[T](true)
	u, _ := uPool.Get().(*[]T)
	if u == nil {
		u = new([]T)
	}
	*u = grow(*u, g.groups*wgPos*c.mRows*g.cinG)
	c.u = *u
	defer uPool.Put(u)
	w, woff, wst := dense[T](wt)
	rows := g.groups * g.coutG
	parallelChunks(rows, workersFor(rows, max(1, 4096/max(1, g.cinG))), func(_, lo, hi int) {
		c.transformWeights(w, woff, wst, lo, hi)
	})

	tasks := g.groups * blocks
	parallelChunks(tasks, min(workers, tasks), func(_, lo, hi int) {
		pool := winogradPool[T](false)
		s, _ := pool.Get().(*winogradScratch[T])
		if s == nil {
			s = new(winogradScratch[T])
		}
		s.v = grow(s.v, wgPos*g.cinG*c.block)
		s.m = grow(s.m, wgPos*c.mRows*c.block)
		for t := lo; t < hi; t++ {
			gi, b := t/blocks, t%blocks
			t0 := b * c.block
			n := min(c.block, total-t0)
			c.transformInput(s.v, gi, t0, n)
			c.multiply(s, gi)
			c.transformOutput(s.m, gi, t0, n)
		}
		pool.Put(s)
	})
}

// transformWeights writes U = G g Gᵀ of the weight w (offset woff,
// strides wst) for the output channels [lo, hi)
// (counted across groups) into c.u, as packed A panels: position p of
// group gi's channel co and input channel ci lies at
// ((gi·36 + p)·mPanels + co/mr)·mr·cinG + ci·mr + co%mr. The rows that
// pad the last panel are zero.
func (c *winogradConv[T]) transformWeights(w []T, woff int, wst []int, lo, hi int) {
	g, mr := c.g, c.ker.mr
	for row := lo; row < hi; row++ {
		gi, co := row/g.coutG, row%g.coutG
		for ci := range g.cinG {
			var k [3][3]float64
			for i := range 3 {
				for j := range 3 {
					k[i][j] = float64(w[woff+row*wst[0]+ci*wst[1]+i*wst[2]+j*wst[3]])
				}
			}
			// G g: 6×3, then (G g) Gᵀ: 6×6.
			var gk [wgIn][3]float64
			for j := range 3 {
				a, b, d := weightTransform(k[0][j], k[1][j], k[2][j])
				gk[0][j], gk[1][j], gk[2][j], gk[3][j], gk[4][j], gk[5][j] = a[0], a[1], b[0], b[1], d[0], d[1]
			}
			for i := range wgIn {
				a, b, d := weightTransform(gk[i][0], gk[i][1], gk[i][2])
				u := [wgIn]float64{a[0], a[1], b[0], b[1], d[0], d[1]}
				for j, x := range u {
					p := i*wgIn + j
					c.u[((gi*wgPos+p)*c.mPanels+co/mr)*mr*g.cinG+ci*mr+co%mr] = T(x)
				}
			}
		}
		if co == g.coutG-1 {
			// Zero the rows past coutG in the group's last panels.
			for p := range wgPos {
				panel := c.u[((gi*wgPos+p)*c.mPanels+c.mPanels-1)*mr*g.cinG:][:mr*g.cinG]
				zeroRows(panel, g.coutG-(c.mPanels-1)*mr, mr, g.cinG)
			}
		}
	}
}

// weightTransform is G·(g0, g1, g2) for the points 0, ±1, ±2, ∞, as three
// pairs.
func weightTransform(g0, g1, g2 float64) (a, b, d [2]float64) {
	even, odd := g0+g2, g1
	a = [2]float64{g0 / 4, -(even + odd) / 6}
	b = [2]float64{-(even - odd) / 6, g0/24 + g1/12 + g2/6}
	d = [2]float64{g0/24 - g1/12 + g2/6, g2}
	return a, b, d
}

// transformInput writes V = Bᵀ d B of group gi's input channels for the n
// tiles from tile t0 (counted across images) into v as packed B panels:
// position p of channel ci and the block's tile j lies at
// ((p·panels + j/nr)·cinG + ci)·nr + j%nr. Lanes past n are zero.
func (c *winogradConv[T]) transformInput(v []T, gi, t0, n int) {
	g, nr := c.g, c.ker.nr
	panels := c.block / nr
	pStride := panels * g.cinG * nr
	var base [32]int // per lane: the patch's channel-0 row-0 offset in src, or −1
	var y0s, x0s [32]int
	for jp := range ceilDiv(n, nr) {
		lanes := min(nr, n-jp*nr)
		for l := range lanes {
			t := t0 + jp*nr + l
			b, r := t/c.tiles, t%c.tiles
			y0s[l] = r/c.tilesW*wgOut - g.win.PadH
			x0s[l] = r%c.tilesW*wgOut - g.win.PadW
			base[l] = c.off + b*c.st[0] + gi*g.cinG*c.st[1]
		}
		for ci := range g.cinG {
			out := v[jp*g.cinG*nr+ci*nr:]
			for l := range lanes {
				var d [wgIn][wgIn]T
				c.gather(&d, base[l]+ci*c.st[1], y0s[l], x0s[l])
				inputTransform(&d)
				for i := range wgIn {
					for j := range wgIn {
						out[(i*wgIn+j)*pStride+l] = d[i][j]
					}
				}
			}
			if lanes < nr {
				for p := range wgPos {
					clear(out[p*pStride+lanes : p*pStride+nr])
				}
			}
		}
	}
}

// gather copies the 6×6 patch at input row y0, column x0 of the plane at
// src[base] into d, zero where it lies in the padding.
func (c *winogradConv[T]) gather(d *[wgIn][wgIn]T, base, y0, x0 int) {
	g, src := c.g, c.src
	sy, sx := c.st[2], c.st[3]
	if y0 >= 0 && x0 >= 0 && y0+wgIn <= g.h && x0+wgIn <= g.wd {
		for i := range wgIn {
			o := base + (y0+i)*sy + x0*sx
			if sx == 1 {
				row := src[o : o+wgIn : o+wgIn]
				d[i] = [wgIn]T{row[0], row[1], row[2], row[3], row[4], row[5]}
				continue
			}
			for j := range wgIn {
				d[i][j] = src[o+j*sx]
			}
		}
		return
	}
	for i := range wgIn {
		y := y0 + i
		if y < 0 || y >= g.h {
			d[i] = [wgIn]T{}
			continue
		}
		for j := range wgIn {
			if x := x0 + j; x >= 0 && x < g.wd {
				d[i][j] = src[base+y*sy+x*sx]
			} else {
				d[i][j] = 0
			}
		}
	}
}

// inputTransform replaces d with Bᵀ d B.
func inputTransform[T float32 | float64](d *[wgIn][wgIn]T) {
	for i := range wgIn {
		d[i] = inputTransform1(d[i])
	}
	for j := range wgIn {
		col := inputTransform1([wgIn]T{d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j]})
		for i := range wgIn {
			d[i][j] = col[i]
		}
	}
}

// inputTransform1 is Bᵀ·x for the rows of Bᵀ
//
//	4  0 −5  0  1  0
//	0 −4 −4  1  1  0
//	0  4 −4 −1  1  0
//	0 −2 −1  2  1  0
//	0  2 −1 −2  1  0
//	0  4  0 −5  0  1
func inputTransform1[T float32 | float64](x [wgIn]T) [wgIn]T {
	t0 := x[4] - 4*x[2]
	t1 := x[3] - 4*x[1]
	t2 := x[4] - x[2]
	t3 := 2 * (x[3] - x[1])
	return [wgIn]T{4*x[0] - 5*x[2] + x[4], t0 + t1, t0 - t1, t2 + t3, t2 - t3, 4*x[1] - 5*x[3] + x[5]}
}

// multiply computes M_p = U_p · V_p for the 36 positions of a block. Each
// B panel (one K block of nr tiles) stays in L1 while every output
// channel's A panel streams past it from L2.
func (c *winogradConv[T]) multiply(s *winogradScratch[T], gi int) {
	g, ker := c.g, c.ker
	mr, nr := ker.mr, ker.nr
	panels := c.block / nr
	for p := range wgPos {
		vp := s.v[p*panels*g.cinG*nr:]
		mp := s.m[p*c.mRows*c.block:]
		up := c.u[(gi*wgPos+p)*c.mPanels*mr*g.cinG:]
		for pc := 0; pc < g.cinG; pc += ker.kc {
			kb := min(ker.kc, g.cinG-pc)
			be := T(1)
			if pc == 0 {
				be = 0
			}
			for jp := range panels {
				bp := vp[(jp*g.cinG+pc)*nr:][:kb*nr]
				for ip := range c.mPanels {
					ap := up[(ip*g.cinG+pc)*mr:][:kb*mr]
					ker.run(kb, ap, bp, mp[ip*mr*c.block+jp*nr:], c.block, 1, be)
				}
			}
		}
	}
}

// transformOutput writes Aᵀ M A of the block's n tiles from tile t0 into
// dst for group gi's output channels, clipping tiles at the output's
// right and bottom edges.
func (c *winogradConv[T]) transformOutput(m []T, gi, t0, n int) {
	g := c.g
	oh, ow := g.win.OutH, g.win.OutW
	pStride := c.mRows * c.block
	for j := range n {
		t := t0 + j
		b, r := t/c.tiles, t%c.tiles
		y0, x0 := r/c.tilesW*wgOut, r%c.tilesW*wgOut
		h, w := min(wgOut, oh-y0), min(wgOut, ow-x0)
		for co := range g.coutG {
			var x [wgIn][wgIn]T
			in := m[co*c.block+j:]
			for p := range wgPos {
				x[p/wgIn][p%wgIn] = in[p*pStride]
			}
			y := outputTransform(&x)
			plane := c.dst[((b*g.cout+gi*g.coutG+co)*oh+y0)*ow+x0:]
			for i := range h {
				copy(plane[i*ow:i*ow+w], y[i][:w])
			}
		}
	}
}

// outputTransform is Aᵀ x A.
func outputTransform[T float32 | float64](x *[wgIn][wgIn]T) (y [wgOut][wgOut]T) {
	var rows [wgIn][wgOut]T
	for i := range wgIn {
		rows[i] = outputTransform1(x[i])
	}
	for j := range wgOut {
		col := outputTransform1([wgIn]T{rows[0][j], rows[1][j], rows[2][j], rows[3][j], rows[4][j], rows[5][j]})
		for i := range wgOut {
			y[i][j] = col[i]
		}
	}
	return y
}

// outputTransform1 is Aᵀ·x for the rows of Aᵀ
//
//	1  1  1  1  1  0
//	0  1 −1  2 −2  0
//	0  1  1  4  4  0
//	0  1 −1  8 −8  1
func outputTransform1[T float32 | float64](x [wgIn]T) [wgOut]T {
	a, b := x[1]+x[2], x[1]-x[2]
	c, d := x[3]+x[4], x[3]-x[4]
	return [wgOut]T{x[0] + a + c, b + 2*d, a + 4*c, b + 8*d + x[5]}
}
