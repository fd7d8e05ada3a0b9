package cpu

import (
	"sync"
	"unsafe"
)

// Implicit-GEMM convolution. Per group, the convolution is the product of
// the weight [Cout/groups, K] (K = C/groups·KH·KW) and the im2col matrix
// [K, N·OutH·OutW], whose columns run over every image's output pixels
// in turn. That matrix is never built: each nr-wide B panel of the GEMM
// microkernel is packed straight from the (strided) NCHW input, one
// kc-row block at a time, so the only copy of the input is the packed
// panel, which stays in L1/L2 while every output channel's A panel
// streams past it. The weight is packed once per call into mr-tall A
// panels that span all of K and that every worker shares (interleaved
// from its contiguous rows).
//
// Packing is what costs: with few output channels (a thin ResNet, a
// first layer) each packed element feeds only a few microkernel calls. A
// panel's nr columns are cut once into segments, one per output row they
// cross (convSeg), and the block's rows into kernel taps (convRow, once
// per K block): every row of the panel is then one copy per segment from
// one input row. On AVX2 that copy is assembly (conv2d_pack_amd64.s):
// 32 bytes a load and a store, at stride 1 or, for strided convolutions,
// 64 bytes de-interleaved per 32; the lanes past a segment spill into the
// next segment's, written after it. Where a segment meets the padding,
// masked loads read the columns inside the image and zeros elsewhere;
// below convPadMax elements the input is instead copied once, zero-padded
// and contiguous (padSource), so that no segment meets padding and the
// loop checks nothing. Images smaller than two panels pack all of K at
// once, so that the tiles that straddle images, which the kernel cannot
// store in place, are scattered once. Elsewhere (channels-last input
// above convPadMax, the portable kernel, other CPUs) the same segments
// are copied by Go loops.
//
// Work is cut into tasks of (group, column range, row range) so that both
// the output channels (M) and the pixels (N) are split across the
// workers; each worker packs into its own scratch, taken from a pool so
// that a warm convolution allocates nothing that grows with the calls.
// Putting all images' pixels in one column range also keeps the GEMM wide
// when one image's output is tiny (late ResNet stages, and the weight
// gradient, which the graph computes as a convolution whose output is the
// KH×KW kernel).

// convTaskCols is at most how many output pixels one task covers, and
// convTaskBytes about the size of its C block (Cout/groups × its
// columns), which each K block updates: it must stay in L2 beside the A
// block, on both threads of a core.
const convTaskCols, convTaskBytes = 384, 128 << 10

// convScratch is one worker's packing space.
type convScratch[T float32 | float64] struct {
	panel, tile, weights []T
	segs                 []convSeg
	rows                 []convRow
	maxOff               int // the largest off in rows
}

// convSeg is a run of a B panel's columns that lie in one output row of
// one image, so that a kernel row (ci, kh, kw) reads them from one input
// row: col is the first column's lane in the panel, n the run's length,
// y0 and x0 the input coordinates of the first column's kernel origin
// (oh·StrideH − PadH and ow·StrideW − PadW, before the tap's offset), and
// base the element offset in src of that origin in the group's first
// channel (which may lie outside the image: only taps inside it are read).
// plain is 1 when convPackRowsAsm may fill the segment's lanes past n with
// whatever follows in src: later segments overwrite them, and a panel row
// read from the segment's start stays inside src for every row.
// convPackRowsAVX2 reads the fields by offset: keep their order.
type convSeg struct {
	col, n, base, y0, x0, plain int
}

// convRow is one row (ci, kh, kw) of the im2col matrix, a kernel tap: it
// reads dy = kh·DilationH rows and dx = kw·DilationW columns past a
// column's kernel origin, at element offset off = ci·st[1] + dy·st[2] +
// dx·st[3] from it. convPackRowsAVX2 reads the fields by offset.
type convRow struct {
	off, dy, dx int
}

// convPackRowsAsm, where set, packs rows (each a convRow) of segments
// (each a convSeg) of a B panel from a source whose rows are contiguous,
// with elements of 1<<shift bytes, rowBytes bytes per panel row and the
// given stride along the rows (see convPackRowsAVX2), and reports whether
// it could. It writes up to rowBytes bytes past the panel's end. inside
// says that every segment is plain and inside the input for every row, so
// that it need check nothing.
var convPackRowsAsm func(panel, src unsafe.Pointer, rows []convRow, segs []convSeg, h, wd, shift, rowBytes, stride int, inside bool) bool

var convPools = struct{ f32, f64, packed32, packed64, padded32, padded64 sync.Pool }{}

func convScratchPool[T float32 | float64]() *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return &convPools.f32
	}
	return &convPools.f64
}

// getConvScratch takes a worker's scratch from T's pool (a new one when
// the pool is empty); convScratchPool[T]().Put gives it back.
func getConvScratch[T float32 | float64]() *convScratch[T] {
	if s, ok := convScratchPool[T]().Get().(*convScratch[T]); ok {
		return s
	}
	return new(convScratch[T])
}

func convPackedPool[T float32 | float64]() *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return &convPools.packed32
	}
	return &convPools.packed64
}

func convPaddedPool[T float32 | float64]() *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return &convPools.padded32
	}
	return &convPools.padded64
}

// convPadMax is the most elements a zero-padded copy of a convolution's
// input may have (16 MiB of float32): below it, padSource makes one. A
// variable so that tests can turn the copy off.
var convPadMax = 1 << 22

// convKMax is the tallest B panel (rows of K) a convolution of small
// images packs at once.
const convKMax = 2304

// convPlan is what the implicit-GEMM and Winograd paths both take from
// the call: the geometry, the microkernel, the input (offset off, strides
// st), the contiguous output, the weight (offset woff, strides wst) and
// how many mr-tall A panels a group's output channels fill.
type convPlan[T float32 | float64] struct {
	g       convGeom
	ker     *gemmKernel[T]
	src     []T
	off     int
	st      []int
	dst     []T
	w       []T
	woff    int
	wst     []int
	mPanels int
	padSt   [4]int // st when padSource replaced the input
}

// newConvPlan is the convPlan of convolving src with wt into dst.
func newConvPlan[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) convPlan[T] {
	ker := gemmKernelFor[T]()
	c := convPlan[T]{g: g, ker: ker, src: src, off: off, st: st, dst: dst, mPanels: ceilDiv(g.coutG, ker.mr)}
	c.w, c.woff, c.wst = dense[T](wt)
	return c
}

// implicitConv is one convolution's plan for the implicit-GEMM path.
type implicitConv[T float32 | float64] struct {
	convPlan[T]
	packedA []T  // per group, ceil(coutG/mr) panels of K groups of mr
	cols    int  // N·OutH·OutW, the GEMM's N
	asmRows bool // packPanel may call convPackRowsAsm
	padded  bool // every tap of every column lies inside src
	kc      int  // rows of B per packed panel
}

// convImplicit runs the convolution of src (offset off, strides st) with
// the weight wt into the contiguous dst by implicit GEMM.
func convImplicit[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) {
	c := implicitConv[T]{convPlan: newConvPlan(g, src, off, st, wt, dst), cols: g.n * g.l}
	ker := c.ker
	workers := min(maxWorkers(), max(1, g.groups*g.coutG*c.cols*g.kg/gemmParallelMin))
	if convPixelwise(g, ker.nr) {
		c.pixelwiseRun(workers)
		return
	}
	if padded := c.padSource(0, 0); padded != nil {
		c.padded = true
		defer convPaddedPool[T]().Put(padded)
	}
	packedLen := g.groups * c.mPanels * ker.mr * g.kg
	pool := convPackedPool[T]()
	packed, _ := pool.Get().(*[]T)
	if packed == nil {
		packed = new([]T)
	}
	*packed = grow(*packed, packedLen)
	c.packedA = *packed
	defer pool.Put(packed)
	for gi := range g.groups {
		for p := range c.mPanels {
			c.packWeightPanel(c.packedA[(gi*c.mPanels+p)*ker.mr*g.kg:][:ker.mr*g.kg], gi, p, 0, g.kg)
		}
	}

	// Tasks: groups × column ranges × row ranges, enough of them to keep
	// every worker busy, each a multiple of the tile size.
	colTiles := ceilDiv(c.cols, ker.nr)
	var z T
	cBytes := g.coutG * int(unsafe.Sizeof(z))
	tileCols := max(1, min(convTaskCols, convTaskBytes/cBytes)/ker.nr)
	if per := ceilDiv(colTiles, ceilDiv(workers, g.groups)); per < tileCols {
		tileCols = max(1, per)
	}
	colTasks := ceilDiv(colTiles, tileCols)
	rowTasks := 1
	if g.groups*colTasks < workers {
		rowTasks = min(c.mPanels, ceilDiv(workers, g.groups*colTasks))
	}
	panelsPerRowTask := ceilDiv(c.mPanels, rowTasks)
	rowTasks = ceilDiv(c.mPanels, panelsPerRowTask)
	// Images smaller than two panels put image boundaries inside most
	// panels, whose tiles the kernel cannot store in place: they go through
	// scatter, once per K block. Packing all of K at once (up to convKMax
	// rows) scatters each tile once, with a copy rather than an add; the
	// taller B panel leaves L1 but not L2, which feeds the kernel fast
	// enough.
	c.kc = min(ker.kc, g.kg)
	if g.l < 2*ker.nr {
		c.kc = min(g.kg, max(ker.kc, convKMax))
	}
	c.asmRows = convPackRowsAsm != nil && c.st[3] == 1 && len(c.src) > 0 &&
		max(c.g.h, c.g.wd, c.g.win.PadW+ker.nr*g.win.StrideW) < 1<<30
	tasks := g.groups * colTasks * rowTasks
	parallelChunks(tasks, min(workers, tasks), func(_, lo, hi int) {
		s := getConvScratch[T]()
		s.panel = grow(s.panel, c.kc*ker.nr+ker.nr) // slack for convPackRowsAsm
		s.tile = grow(s.tile, ker.mr*ker.nr)
		for t := lo; t < hi; t++ {
			rt := t % rowTasks
			ct := t / rowTasks % colTasks
			gi := t / (rowTasks * colTasks)
			j0 := ct * tileCols * ker.nr
			j1 := min(c.cols, j0+tileCols*ker.nr)
			p0 := rt * panelsPerRowTask
			p1 := min(c.mPanels, p0+panelsPerRowTask)
			c.task(s, gi, j0, j1, p0, p1)
		}
		convScratchPool[T]().Put(s)
	})
}

// padSource replaces c's input with a zero-padded contiguous copy, and
// its geometry with the copy's (no padding, rows and columns as far as
// the windows reach, and at least hMin × wMin), and returns the copy's
// buffer for its pool; or returns nil, changing nothing, when the input
// has no padding, contiguous rows and hMin × wMin within it, or the copy
// would pass convPadMax. The Winograd path asks for room for its tiles'
// whole patches, so that none meets the image's edge. Without padding every
// segment of a B panel row is a plain copy of one input row: no masked
// loads at the borders, which small feature maps (ResNet's 14², 7² and
// less) are mostly made of.
func (c *convPlan[T]) padSource(hMin, wMin int) *[]T {
	g := c.g
	win := g.win
	hp := max(win.PadH+g.h, (win.OutH-1)*win.StrideH+(win.KH-1)*win.DilationH+1, hMin)
	wp := max(win.PadW+g.wd, (win.OutW-1)*win.StrideW+(win.KW-1)*win.DilationW+1, wMin)
	if win.PadH == 0 && win.PadW == 0 && hp == g.h && wp == g.wd && c.st[3] == 1 {
		return nil
	}
	planes := g.n * g.c
	if planes*hp*wp > convPadMax {
		return nil
	}
	pool := convPaddedPool[T]()
	buf, _ := pool.Get().(*[]T)
	if buf == nil {
		buf = new([]T)
	}
	*buf = grow(*buf, planes*hp*wp+2*c.ker.nr*win.StrideW) // slack: more segments plain
	out := *buf
	src, off, st := c.src, c.off, c.st
	parallelFor(planes, max(1, (1<<15)/(hp*wp)), func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			in := off + pl/g.c*st[0] + pl%g.c*st[1]
			plane := out[pl*hp*wp : (pl+1)*hp*wp]
			clear(plane[:win.PadH*wp])
			for y := range g.h {
				row := plane[(win.PadH+y)*wp : (win.PadH+y+1)*wp]
				r := row[win.PadW : win.PadW+g.wd]
				switch {
				case st[3] == 1 && g.wd >= 32:
					copy(r, src[in+y*st[2]:][:g.wd])
				case st[3] == 1: // short rows: no call to memmove
					for x, v := range src[in+y*st[2]:][:g.wd] {
						r[x] = v
					}
				default:
					for x := range r {
						r[x] = src[in+y*st[2]+x*st[3]]
					}
				}
				for x := range win.PadW {
					row[x] = 0
				}
				for x := win.PadW + g.wd; x < wp; x++ {
					row[x] = 0
				}
			}
			clear(plane[(win.PadH+g.h)*wp:])
		}
	})
	c.padSt = [4]int{g.c * hp * wp, hp * wp, wp, 1}
	c.src, c.off, c.st = out, 0, c.padSt[:]
	c.g.h, c.g.wd, c.g.win.PadH, c.g.win.PadW = hp, wp, 0, 0
	return buf
}

// packWeightPanel packs rows [p·mr, p·mr+mr) and columns [pc, pc+kb) of
// group gi's weight matrix [Cout/groups, K] into panel (element (i, k) at
// (k−pc)·mr + i), zero past Cout/groups.
func (c *convPlan[T]) packWeightPanel(panel []T, gi, p, pc, kb int) {
	g, mr, st := c.g, c.ker.mr, c.wst
	khkw := g.win.KH * g.win.KW
	if (g.win.KW == 1 || st[3] == 1) && (g.win.KH == 1 || st[2] == g.win.KW) {
		h := min(mr, g.coutG-p*mr)
		row := c.woff + (gi*g.coutG+p*mr)*st[0]
		if g.cinG == 1 || st[1] == khkw {
			// Each output channel's K elements are contiguous (the usual
			// row-major weight): interleave the rows, which is unrolled
			// for the assembly kernels' six.
			interleave(panel, c.w, row+pc, st[0], h, mr, kb)
			return
		}
		// Each input channel's window is contiguous, the channels apart:
		// a weight gradient's output gradient, [Cout, N, OH, OW] with
		// batch and channels exchanged (a pointwise convolution's is its
		// longest operand). One interleave per channel's run.
		for k := 0; k < kb; {
			ci, r := (pc+k)/khkw, (pc+k)%khkw
			n := min(khkw-r, kb-k)
			interleave(panel[k*mr:], c.w, row+ci*st[1]+r, st[0], h, mr, n)
			k += n
		}
		return
	}
	for i := range mr {
		co := p*mr + i
		if co >= g.coutG {
			for k := range kb {
				panel[k*mr+i] = 0
			}
			continue
		}
		row := c.woff + (gi*g.coutG+co)*st[0]
		ci, kh, kw := pc/khkw, pc%khkw/g.win.KW, pc%g.win.KW
		for k := 0; k < kb; {
			// One run along the kernel's width.
			n := min(g.win.KW-kw, kb-k)
			o := row + ci*st[1] + kh*st[2] + kw*st[3]
			for q := range n {
				panel[(k+q)*mr+i] = c.w[o+q*st[3]]
			}
			k += n
			if kw += n; kw == g.win.KW {
				kw = 0
				if kh++; kh == g.win.KH {
					kh = 0
					ci++
				}
			}
		}
	}
}

// task computes group gi's output channels of A panels [p0, p1) for GEMM
// columns [j0, j1).
func (c *implicitConv[T]) task(s *convScratch[T], gi, j0, j1, p0, p1 int) {
	g, ker := c.g, c.ker
	mr, nr := ker.mr, ker.nr
	for pc := 0; pc < g.kg; pc += c.kc {
		kb := min(c.kc, g.kg-pc)
		first := pc == 0
		s.rows, s.maxOff = c.convTaps(s.rows, pc, kb)
		for j := j0; j < j1; j += nr {
			w := min(nr, j1-j)
			panel := s.panel[:kb*nr]
			c.packPanel(s, panel, gi, kb, j, w)
			b, l := j/g.l, j%g.l
			direct := w == nr && l+nr <= g.l
			for p := p0; p < p1; p++ {
				ap := c.packedA[(gi*c.mPanels+p)*mr*g.kg:][pc*mr : (pc+kb)*mr]
				h := min(mr, g.coutG-p*mr)
				co := gi*g.coutG + p*mr
				be := T(1)
				if first {
					be = 0
				}
				if direct && h == mr {
					ker.run(kb, ap, panel, c.dst[(b*g.cout+co)*g.l+l:], g.l, 1, be)
					continue
				}
				ker.run(kb, ap, panel, s.tile, nr, 1, 0)
				c.scatter(s.tile, h, w, co, j, first)
			}
		}
	}
}

// scatter adds (or, on the first K block, writes) the h×w corner of tile,
// rows from output channel co and columns from GEMM column j, into dst;
// its columns may run across images.
func (c *implicitConv[T]) scatter(tile []T, h, w, co, j int, first bool) {
	g := c.g
	b, l := j/g.l, j%g.l
	for x := 0; x < w; {
		n := min(w-x, g.l-l)
		for i := range h {
			t := tile[i*c.ker.nr+x : i*c.ker.nr+x+n]
			d := c.dst[(b*g.cout+co+i)*g.l+l:][:n]
			if first {
				for q, v := range t { // runs are short: no call to memmove
					d[q] = v
				}
				continue
			}
			for q, v := range t {
				d[q] += v
			}
		}
		x += n
		b, l = b+1, 0
	}
}

// packPanel writes rows [pc, pc+kb) of columns [j, j+w) of group gi's
// im2col matrix into panel as kb groups of nr, zero past w; s.rows holds
// those rows' taps (convTaps). The columns are cut into segments, one per
// output row they cross, once per panel; every row then copies each
// segment from one input row: convPackRowsAsm where the CPU has it and
// the input's rows are contiguous (strides 1 and 2), else Go loops.
func (c *implicitConv[T]) packPanel(s *convScratch[T], panel []T, gi, kb, j, w int) {
	g, nr := c.g, c.ker.nr
	win := g.win
	ow := win.OutW
	src, st := c.src, c.st
	s.segs = s.segs[:0]
	inside := c.padded
	b, l := j/g.l, j%g.l
	for x := 0; x < w; {
		oh, ox := l/ow, l%ow
		n := min(w-x, ow-ox)
		y0, x0 := oh*win.StrideH-win.PadH, ox*win.StrideW-win.PadW
		sg := convSeg{col: x, n: n, base: c.off + b*st[0] + gi*g.cinG*st[1] + y0*st[2] + x0*st[3], y0: y0, x0: x0}
		if (x+n < w || w == nr) && sg.base+s.maxOff+nr*win.StrideW <= len(src) {
			sg.plain = 1
		} else {
			inside = false
		}
		s.segs = append(s.segs, sg)
		x += n
		l += n
		if l == g.l {
			b, l = b+1, 0
		}
	}
	rows := s.rows[:kb]
	var z T
	if c.asmRows && convPackRowsAsm(unsafe.Pointer(unsafe.SliceData(panel)), unsafe.Pointer(unsafe.SliceData(src)), rows, s.segs,
		g.h, g.wd, int(unsafe.Sizeof(z))/4+1, nr*int(unsafe.Sizeof(z)), win.StrideW, inside) {
		return
	}
	contiguousRuns := win.StrideW == 1 && st[3] == 1
	step := win.StrideW * st[3]
	for p, r := range rows {
		out := panel[p*nr : p*nr+nr]
		for _, sg := range s.segs {
			seg := out[sg.col : sg.col+sg.n]
			if y := sg.y0 + r.dy; y < 0 || y >= g.h {
				clear(seg)
				continue
			}
			at, x0 := sg.base+r.off, sg.x0+r.dx
			if contiguousRuns {
				lo := min(max(0, -x0), len(seg))
				hi := max(lo, min(len(seg), g.wd-x0))
				clear(seg[:lo])
				if hi > lo {
					copy(seg[lo:hi], src[at+lo:at+hi])
				}
				clear(seg[hi:])
				continue
			}
			for i := range seg {
				if x := x0 + i*win.StrideW; x >= 0 && x < g.wd {
					seg[i] = src[at+i*step]
				} else {
					seg[i] = 0
				}
			}
		}
		if w < nr {
			clear(out[w:])
		}
	}
}

// convTaps returns dst[:0] with rows [pc, pc+kb) of the im2col matrix's
// taps (see convRow), and the largest of their offsets.
func (c *implicitConv[T]) convTaps(dst []convRow, pc, kb int) ([]convRow, int) {
	win, st := c.g.win, c.st
	khkw := win.KH * win.KW
	ci, kh, kw := pc/khkw, pc%khkw/win.KW, pc%win.KW
	dst = dst[:0]
	maxOff := 0
	for range kb {
		dy, dx := kh*win.DilationH, kw*win.DilationW
		dst = append(dst, convRow{off: ci*st[1] + dy*st[2] + dx*st[3], dy: dy, dx: dx})
		maxOff = max(maxOff, dst[len(dst)-1].off)
		if kw++; kw == win.KW {
			kw = 0
			if kh++; kh == win.KH {
				kh = 0
				ci++
			}
		}
	}
	return dst, maxOff
}

// convPixelwise reports whether the convolution runs better with images
// as the GEMM's columns, one product per output pixel (pixelwiseRun):
// when each image has only a few output columns, the window is wide, and
// there are images enough to fill at least half of a B panel's nr lanes
// (a first layer's weight gradient, with one or three "images", the input
// channels, fills few; the output-pixel orientation wastes less there).
// That is a convolution's weight gradient, which the graph computes as a
// convolution whose window is the forward's output and whose output is
// the KH×KW kernel: packed by output pixels, every B panel row would be
// a few scattered elements, while along the window it is a long
// contiguous run of one input row.
func convPixelwise(g convGeom, nr int) bool {
	return g.win.OutW < 8 && g.win.KW >= 8 && 2*g.n >= nr
}

// pixelwiseRun runs c with images as the GEMM's columns: for each group
// and output pixel l, C_l [Cout/groups, N] = A · B_l where B_l [K, N]
// holds, in column b, image b's window at l. Tasks are (group, pixel,
// panel of nr images); a worker walks K once, a kc block at a time,
// packs that block of A itself (K, the forward's N·OutH·OutW, is too long
// to pack whole: batch 256 at 56×56 would be 200 MB for 64 channels), and
// runs every one of its tasks on it while it stays in cache. Each task
// accumulates its mr·mPanels × nr block in scratch and stores it at the
// end.
func (c *implicitConv[T]) pixelwiseRun(workers int) {
	g, ker := c.g, c.ker
	mr, nr := ker.mr, ker.nr
	imagePanels := ceilDiv(g.n, nr)
	tasks := g.groups * g.l * imagePanels
	accLen := c.mPanels * mr * nr
	parallelChunks(tasks, min(workers, tasks), func(_, lo, hi int) {
		s := getConvScratch[T]()
		kc := min(ker.kc, g.kg)
		s.panel = grow(s.panel, kc*nr)
		s.tile = grow(s.tile, (hi-lo)*accLen)
		s.weights = grow(s.weights, c.mPanels*mr*kc)
		for pc := 0; pc < g.kg; pc += ker.kc {
			kb := min(ker.kc, g.kg-pc)
			panel := s.panel[:kb*nr]
			be := T(1)
			if pc == 0 {
				be = 0
			}
			packedGroup := -1
			for t := lo; t < hi; t++ {
				bp := t % imagePanels
				l := t / imagePanels % g.l
				gi := t / (imagePanels * g.l)
				if gi != packedGroup {
					// This block of the group's weight, packed by each
					// worker for itself: K here is N·OutH·OutW of the
					// forward pass, too long to pack whole.
					for p := range c.mPanels {
						c.packWeightPanel(s.weights[p*mr*kb:][:mr*kb], gi, p, pc, kb)
					}
					packedGroup = gi
				}
				c.packImages(panel, gi, l, pc, kb, bp*nr, min(g.n, bp*nr+nr))
				acc := s.tile[(t-lo)*accLen:]
				for p := range c.mPanels {
					ker.run(kb, s.weights[p*mr*kb:][:mr*kb], panel, acc[p*mr*nr:], nr, 1, be)
				}
			}
		}
		for t := lo; t < hi; t++ {
			bp := t % imagePanels
			l := t / imagePanels % g.l
			gi := t / (imagePanels * g.l)
			acc := s.tile[(t-lo)*accLen:]
			b0, b1 := bp*nr, min(g.n, bp*nr+nr)
			for co := range g.coutG {
				row := acc[co*nr:]
				for b := b0; b < b1; b++ {
					c.dst[(b*g.cout+gi*g.coutG+co)*g.l+l] = row[b-b0]
				}
			}
		}
		convScratchPool[T]().Put(s)
	})
}

// packImages writes rows [pc, pc+kb) of B_l (see pixelwiseRun) for images
// [b0, b1) into panel as kb groups of nr, zero past b1−b0. Each run of
// the window along its width reads a contiguous stretch of one input row
// per image when the window is undilated along it, and a full panel of
// them is transposed eight by eight (interleaveF32).
func (c *implicitConv[T]) packImages(panel []T, gi, l, pc, kb, b0, b1 int) {
	g, nr := c.g, c.ker.nr
	win := g.win
	src, st := c.src, c.st
	lanes := b1 - b0
	khkw := win.KH * win.KW
	ly, lx := l/win.OutW, l%win.OutW
	ci, wy, wx := pc/khkw, pc%khkw/win.KW, pc%win.KW
	for p := 0; p < kb; {
		run := min(win.KW-wx, kb-p)
		rows := panel[p*nr : (p+run)*nr]
		y := ly*win.StrideH - win.PadH + wy*win.DilationH
		if y < 0 || y >= g.h {
			clear(rows)
		} else {
			base := c.off + b0*st[0] + (gi*g.cinG+ci)*st[1] + y*st[2]
			x0 := lx*win.StrideW - win.PadW + wx*win.DilationW
			// Window columns [lo, hi) of the run fall inside the row.
			lo, hi := 0, run
			if win.DilationW == 1 {
				lo = min(max(0, -x0), run)
				hi = max(lo, min(run, g.wd-x0))
			}
			clear(rows[:lo*nr])
			clear(rows[hi*nr:])
			fast := win.DilationW == 1 && st[3] == 1 && hi-lo >= 8
			switch {
			case fast && lanes == nr && fastInterleave(rows[lo*nr:], src, base+x0+lo, st[0], nr, nr, hi-lo):
			case fast && fastInterleaveLanes(rows[lo*nr:], src, base+x0+lo, st[0], lanes, nr, hi-lo):
				for q := lo; q < hi; q++ {
					clear(rows[q*nr+lanes : q*nr+nr])
				}
			default:
				for q := lo; q < hi; q++ {
					out := rows[q*nr : q*nr+nr]
					x := x0 + q*win.DilationW
					if x < 0 || x >= g.wd {
						clear(out)
						continue
					}
					o := base + x*st[3]
					for b := range lanes {
						out[b] = src[o+b*st[0]]
					}
					clear(out[lanes:])
				}
			}
		}
		p += run
		if wx += run; wx == win.KW {
			wx = 0
			if wy++; wy == win.KH {
				wy = 0
				ci++
			}
		}
	}
}
