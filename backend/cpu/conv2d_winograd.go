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
// sum, about ten times as much; with at least 16 input channels per group
// (winogradMinChannels) the worst error stays within the project's float32
// bound of 1e-5·Σ|terms|, which F(2,3) would not need but F(4,3) keeps,
// so the faster F(4,3) is the one used.

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

// winogradSplits counts the convolutions whose blocks were cut by output
// channels (runSplit), so that tests can tell the split ran.
var winogradSplits atomic.Int64

// winogradApplies reports whether g is a convolution the Winograd path
// computes: a 3×3 window, stride 1 and dilation 1 (any padding, groups
// and batch), with at least winogradMinChannels input channels per group.
func winogradApplies(g convGeom) bool {
	w := g.win
	return w.KH == 3 && w.KW == 3 && w.StrideH == 1 && w.StrideW == 1 && w.DilationH == 1 && w.DilationW == 1 &&
		g.cinG >= winogradMinChannels && g.coutG > 0 && w.OutH > 0 && w.OutW > 0
}

// winogradMinChannels is the fewest input channels per group for which
// Winograd keeps the float32 bound of the direct sums, 1e-5·Σ|terms|:
// its rounding errors scale with the transformed 6×6 patch, not with the
// nine terms of one output, and only a sum over many channels averages
// them down. Measured worst error ÷ Σ|terms| on N(0,1) data
// (TestConv2DWinogradAccuracy; the smaller counts while developing it):
// C = 1: 1.1e-4, 2: 2.0e-5, 4: 5.9e-6, 8: 4.2e-6, 16: 2.6e-6,
// 64: 1.7e-6, 256: 1.2e-6, 512: 0.9e-6 (the implicit GEMM: 0.3–2.6e-7).
const winogradMinChannels = 16

// useWinograd reports whether conv2d runs g by Winograd. By default that
// is where it measured faster than the implicit GEMM
// (BenchmarkConv2DWinograd; BENCHMARKS.md, "Winograd convolution on the
// CPU"): at least 16 input and output channels per group, where the 36
// products are wide enough for the microkernel; at least 32 tiles, over
// which the weight transform (about as costly as 50 tiles' products per
// channel pair) is spread; and tiles at least a third full, as on 2×2
// images a 4×4 tile computes four times the outputs it keeps and saves
// nothing (3×3 images: 2.1× faster, 5×5: 1.4×, 2×2: 1.1×, all at batch 32).
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
	filled := 3*g.n*g.win.OutH*g.win.OutW >= tiles*wgOut*wgOut
	return g.coutG >= 16 && tiles >= 32 && filled
}

// winogradConv is one convolution's plan for the Winograd path.
type winogradConv[T float32 | float64] struct {
	convPlan[T]
	u             []T  // per group and position, mPanels A panels of cinG groups of mr
	mRows         int  // mPanels·mr
	tilesW, tiles int  // tiles per output row; per image
	block         int  // tiles per block, a multiple of nr
	inside        bool // every tile's patch lies inside src (padSource made room)
	// Distances between positions in U, V and M, each padded by a cache
	// line: unpadded, they are often multiples of 4 KiB, and the 36
	// streams that a transform writes would share one set of the caches.
	uStride, vStride, mStride int
}

// wgPad is the padding of a position's stride: 64 bytes of float32.
const wgPad = 16

// winogradScratch is one worker's V and M for a block of tiles.
type winogradScratch[T float32 | float64] struct {
	v, m  []T
	patch []T // rows of nr lanes: a panel of tiles being transformed (36 in, 24+16 out)
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
	c := winogradConv[T]{convPlan: newConvPlan(g, src, off, st, wt, dst)}
	ker := c.ker
	c.mRows = c.mPanels * ker.mr
	c.tilesW = ceilDiv(g.win.OutW, wgOut)
	tilesH := ceilDiv(g.win.OutH, wgOut)
	c.tiles = tilesH * c.tilesW
	// Patches that meet the image's edge are gathered a row piece at a
	// time; a zero-padded copy of the input, with room for every tile's
	// patch, makes each a plain 6×6 copy, eight tiles at a time by
	// gatherPatchesF32. With that, the copy paid at every size measured
	// (BenchmarkConv2DWinograd at one thread: 5×5 and 7×7 images 1.2–1.3×,
	// 10×10–56×56 1.2–1.3× with the assembly gather, 2×2 and 3×3 even);
	// without the assembly only where it is at most twice the input.
	if hp, wp := tilesH*wgOut+2, c.tilesW*wgOut+2; gatherPatchesF32 != nil || hp*wp <= 2*g.h*g.wd {
		if padded := c.padSource(hp, wp); padded != nil {
			c.inside = true
			defer convPaddedPool[T]().Put(padded)
		}
	}
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
	c.uStride = c.mRows*g.cinG + wgPad
	c.vStride = c.block*g.cinG + wgPad
	c.mStride = c.mRows*c.block + wgPad

	uPool := winogradPool[T](true)
	u, _ := uPool.Get().(*[]T)
	if u == nil {
		u = new([]T)
	}
	*u = grow(*u, g.groups*wgPos*c.uStride)
	c.u = *u
	defer uPool.Put(u)
	wPanels := g.groups * c.mPanels
	parallelChunks(wPanels, workersFor(wPanels, max(1, 256/max(1, g.cinG))), func(_, lo, hi int) {
		for q := lo; q < hi; q++ {
			c.transformWeights(q/c.mPanels, q%c.mPanels)
		}
	})

	tasks := g.groups * blocks
	if splits := winogradRowSplits(workers, tasks, c.mPanels); splits > 1 {
		c.runSplit(workers, blocks, splits, total)
		return
	}
	parallelChunks(tasks, min(workers, tasks), func(_, lo, hi int) {
		pool := winogradPool[T](false)
		s, _ := pool.Get().(*winogradScratch[T])
		if s == nil {
			s = new(winogradScratch[T])
		}
		s.v = grow(s.v, wgPos*c.vStride)
		s.m = grow(s.m, wgPos*c.mStride)
		s.patch = grow(s.patch, (wgIn*wgOut+wgOut*wgOut)*ker.nr)
		for t := lo; t < hi; t++ {
			gi, b := t/blocks, t%blocks
			t0 := b * c.block
			n := min(c.block, total-t0)
			c.transformInput(s, s.v, gi, t0, n, 0, g.cinG)
			c.multiply(s, s.v, gi, ceilDiv(n, ker.nr), 0, c.mPanels)
			c.transformOutput(s, gi, t0, n, 0, g.coutG)
		}
		pool.Put(s)
	})
}

// winogradRowSplits is how many ranges of output channels each block's
// products are cut into (see runSplit): 1 while the blocks alone occupy
// every worker, else the count that leaves the most loaded worker the
// fewest panels (tasks in its chunk × panels per task), the smaller count
// among equals. On 16 workers a 14×14 batch of 8 (128 tiles: four blocks
// of 32) ran on four of them otherwise.
func winogradRowSplits(workers, tasks, mPanels int) int {
	if tasks >= workers {
		return 1
	}
	best, load := 1, tasks*mPanels // one worker's share is at most all of it
	for rs := 1; rs <= min(mPanels, workers); rs++ {
		if l := ceilDiv(tasks*rs, workers) * ceilDiv(mPanels, rs); l < load {
			best, load = rs, l
		}
	}
	return best
}

// winogradSplitChannels is the fewest input channels one task of the
// split input transform covers.
const winogradSplitChannels = 8

// runSplit runs the blocks' products cut into splits ranges of output
// channels each, when there are fewer blocks than workers. The input
// transform of a block, which every range needs, runs first, once, into V
// shared by all the workers, itself cut by input channels; then each task
// multiplies its channels' U panels by its block's V and transforms its
// channels' outputs. Each V is thus made once, not once per range.
func (c *winogradConv[T]) runSplit(workers, blocks, splits, total int) {
	g, ker := c.g, c.ker
	pool := winogradPool[T](false)
	shared, _ := pool.Get().(*winogradScratch[T])
	if shared == nil {
		shared = new(winogradScratch[T])
	}
	winogradSplits.Add(1)
	vBlock := wgPos * c.vStride
	shared.v = grow(shared.v, g.groups*blocks*vBlock)
	blockOf := func(t int) (gi, t0, n int, v []T) {
		gi, b := t/blocks, t%blocks
		t0 = b * c.block
		return gi, t0, min(c.block, total-t0), shared.v[t*vBlock : (t+1)*vBlock]
	}
	tasks := g.groups * blocks
	chSplits := max(1, min(ceilDiv(workers, tasks), g.cinG/winogradSplitChannels))
	parallelChunks(tasks*chSplits, min(workers, tasks*chSplits), func(_, lo, hi int) {
		s, _ := pool.Get().(*winogradScratch[T])
		if s == nil {
			s = new(winogradScratch[T])
		}
		s.patch = grow(s.patch, (wgIn*wgOut+wgOut*wgOut)*ker.nr)
		for t := lo; t < hi; t++ {
			gi, t0, n, v := blockOf(t / chSplits)
			c0, c1 := chunkOf(g.cinG, chSplits, t%chSplits)
			c.transformInput(s, v, gi, t0, n, c0, c1)
		}
		pool.Put(s)
	})
	parallelChunks(tasks*splits, min(workers, tasks*splits), func(_, lo, hi int) {
		s, _ := pool.Get().(*winogradScratch[T])
		if s == nil {
			s = new(winogradScratch[T])
		}
		s.m = grow(s.m, wgPos*c.mStride)
		s.patch = grow(s.patch, (wgIn*wgOut+wgOut*wgOut)*ker.nr)
		for t := lo; t < hi; t++ {
			gi, t0, n, v := blockOf(t / splits)
			p0, p1 := chunkOf(c.mPanels, splits, t%splits)
			c.multiply(s, v, gi, ceilDiv(n, ker.nr), p0, p1)
			c.transformOutput(s, gi, t0, n, p0*ker.mr, min(g.coutG, p1*ker.mr))
		}
		pool.Put(s)
	})
	pool.Put(shared)
}

// transformWeights writes U = G g Gᵀ of the weight for group gi's output channels [ip·mr, ip·mr+mr) into
// c.u as one packed A panel per position: position p of channel co and
// input channel ci lies at (gi·36 + p)·uStride + ip·mr·cinG + ci·mr +
// co%mr, zero for channels past coutG. The transform runs in float64 and
// rounds once.
func (c *winogradConv[T]) transformWeights(gi, ip int) {
	g, mr := c.g, c.ker.mr
	w, woff, wst := c.w, c.woff, c.wst
	rows := min(mr, g.coutG-ip*mr)
	u := c.u[gi*wgPos*c.uStride:]
	for ci := range g.cinG {
		for r := range rows {
			o := woff + (gi*g.coutG+ip*mr+r)*wst[0] + ci*wst[1]
			k := func(i, j int) float64 { return float64(w[o+i*wst[2]+j*wst[3]]) }
			// G g: 6×3, one column at a time; then (G g) Gᵀ: 6×6, a row
			// at a time. Scalars throughout: arrays copied between the
			// steps stalled on store forwarding.
			a0, a1, a2, a3, a4, a5 := weightTransform(k(0, 0), k(1, 0), k(2, 0))
			b0, b1, b2, b3, b4, b5 := weightTransform(k(0, 1), k(1, 1), k(2, 1))
			c0, c1, c2, c3, c4, c5 := weightTransform(k(0, 2), k(1, 2), k(2, 2))
			at := u[(ip*g.cinG+ci)*mr+r:]
			put := func(i int, x, y, z float64) {
				v0, v1, v2, v3, v4, v5 := weightTransform(x, y, z)
				q := at[i*wgIn*c.uStride:]
				q[0], q[c.uStride], q[2*c.uStride] = T(v0), T(v1), T(v2)
				q[3*c.uStride], q[4*c.uStride], q[5*c.uStride] = T(v3), T(v4), T(v5)
			}
			put(0, a0, b0, c0)
			put(1, a1, b1, c1)
			put(2, a2, b2, c2)
			put(3, a3, b3, c3)
			put(4, a4, b4, c4)
			put(5, a5, b5, c5)
		}
		for p := range wgPos * min(1, mr-rows) { // rows past coutG
			clear(u[p*c.uStride+(ip*g.cinG+ci)*mr+rows:][:mr-rows])
		}
	}
}

// weightTransform is G·(g0, g1, g2) for the points 0, ±1, ±2, ∞: the
// rows of G are
//
//	 1/4     0     0
//	−1/6  −1/6  −1/6
//	−1/6   1/6  −1/6
//	1/24  1/12   1/6
//	1/24 −1/12   1/6
//	   0     0     1
//
// It multiplies by the reciprocals, as divisions would take most of the
// weight transform's time.
func weightTransform(g0, g1, g2 float64) (u0, u1, u2, u3, u4, u5 float64) {
	const sixth, twelfth, twentyFourth = 1.0 / 6, 1.0 / 12, 1.0 / 24
	even := (g0 + g2) * -sixth
	odd := g1 * sixth
	a, b := g0*twentyFourth+g2*sixth, g1*twelfth
	return g0 * 0.25, even - odd, even + odd, a + b, a - b, g2
}

// transformInput writes V = Bᵀ d B of group gi's input channels for the n
// tiles from tile t0 (counted across images) into v as packed B panels,
// for input channels [c0, c1):
// position p of channel ci and the block's tile j lies at
// p·vStride + (j/nr·cinG + ci)·nr + j%nr. Lanes past n are zero. A
// panel's nr tiles are transformed side by side, one lane each, so that
// the transform is a few operations on whole rows of lanes (inputLanes).
func (c *winogradConv[T]) transformInput(s *winogradScratch[T], v []T, gi, t0, n, c0, c1 int) {
	g, nr := c.g, c.ker.nr
	pStride := c.vStride
	var base [32]int // per lane: the image's first channel of the group in src
	var y0s, x0s [32]int
	patch := s.patch
	// Eight lanes at a time by gatherPatchesF32 where every patch lies
	// inside the zero-padded copy of the input with contiguous rows.
	var fast func(l int, offs *[8]int)
	var offs [8]int
	if gatherPatchesF32 != nil && c.inside && c.st[3] == 1 {
		if p, ok := any(patch).([]float32); ok {
			src := any(c.src).([]float32)
			fast = func(l int, offs *[8]int) { gatherPatchesF32(p[l:], nr, src, offs, c.st[2]) }
		}
	}
	for jp := range ceilDiv(n, nr) {
		lanes := min(nr, n-jp*nr)
		for l := range lanes {
			t := t0 + jp*nr + l
			b, r := t/c.tiles, t%c.tiles
			y0s[l] = r/c.tilesW*wgOut - c.g.win.PadH
			x0s[l] = r%c.tilesW*wgOut - c.g.win.PadW
			base[l] = c.off + b*c.st[0] + gi*g.cinG*c.st[1]
		}
		if lanes < nr {
			clear(patch)
		}
		for ci := c0; ci < c1; ci++ {
			l := 0
			if fast != nil {
				for ; l+8 <= lanes; l += 8 {
					for k := range offs {
						offs[k] = base[l+k] + ci*c.st[1] + y0s[l+k]*c.st[2] + x0s[l+k]
					}
					fast(l, &offs)
				}
			}
			for ; l < lanes; l++ {
				c.gather(patch[l:], nr, base[l]+ci*c.st[1], y0s[l], x0s[l])
			}
			// Bᵀ d: along each row of the patch, in place; then (Bᵀ d) B
			// down each column, into V.
			for i := range wgIn {
				inputLanes(patch[i*wgIn*nr:], nr, patch[i*wgIn*nr:], nr, nr)
			}
			out := v[(jp*g.cinG+ci)*nr:]
			for j := range wgIn {
				inputLanes(out[j*pStride:], wgIn*pStride, patch[j*nr:], wgIn*nr, nr)
			}
		}
	}
	// Panels past n hold nothing: the GEMM does not read them.
}

// gather copies the 6×6 patch at input row y0, column x0 of the plane at
// src[base] into d, element (i, j) at d[(i·6 + j)·ld], zero where it
// lies in the padding. The rows and columns inside the image are found
// once per patch, not tested per element: on the small images of late
// network stages nearly every tile meets the padding.
func (c *winogradConv[T]) gather(d []T, ld, base, y0, x0 int) {
	g, src := c.g, c.src
	sy, sx := c.st[2], c.st[3]
	d = d[:(wgPos-1)*ld+1]
	i0 := min(wgIn, max(0, -y0))
	i1 := max(i0, min(wgIn, g.h-y0))
	j0 := min(wgIn, max(0, -x0))
	j1 := max(j0, min(wgIn, g.wd-x0))
	full := j0 == 0 && j1 == wgIn && sx == 1
	for i := range wgIn {
		q := d[i*wgIn*ld:]
		q = q[:5*ld+1]
		if i < i0 || i >= i1 {
			q[0], q[ld], q[2*ld], q[3*ld], q[4*ld], q[5*ld] = 0, 0, 0, 0, 0, 0
			continue
		}
		o := base + (y0+i)*sy + x0*sx
		if full {
			row := src[o : o+wgIn : o+wgIn]
			q[0], q[ld], q[2*ld], q[3*ld], q[4*ld], q[5*ld] = row[0], row[1], row[2], row[3], row[4], row[5]
			continue
		}
		for j := range j0 {
			q[j*ld] = 0
		}
		for j := j0; j < j1; j++ {
			q[j*ld] = src[o+j*sx]
		}
		for j := j1; j < wgIn; j++ {
			q[j*ld] = 0
		}
	}
}

// gatherPatchesF32, where set, does gather for eight lanes whose patches
// lie inside src: lane l's patch rows start at src[offs[l] + i·sy], and
// element (i, j) goes to dst[(i·6 + j)·ld + l]. It reads eight elements
// from each row's start, two past the patch.
var gatherPatchesF32 func(dst []float32, ld int, src []float32, offs *[8]int, sy int)

// inputLanes is inputLanesGo, or its assembly where the CPU has it.
func inputLanes[T float32 | float64](dst []T, ds int, src []T, ss, n int) {
	laneTransform(inputLanesF32, inputLanesGo[T], dst, ds, src, ss, n)
}

// laneTransform runs the lane transform asm (an assembly kernel for
// float32, nil where the CPU has none) when it can, else portable.
func laneTransform[T float32 | float64](asm func(dst []float32, ds int, src []float32, ss, n int),
	portable func(dst []T, ds int, src []T, ss, n int), dst []T, ds int, src []T, ss, n int) {
	if asm != nil && n%8 == 0 {
		if d, ok := any(dst).([]float32); ok {
			asm(d, ds, any(src).([]float32), ss, n)
			return
		}
	}
	portable(dst, ds, src, ss, n)
}

// inputLanesF32, where set, is inputLanesGo for float32 and n a multiple
// of 8.
var inputLanesF32 func(dst []float32, ds int, src []float32, ss, n int)

// inputLanesGo applies Bᵀ to n lanes side by side: lane l of row k of
// the input is src[k·ss + l], of the output dst[k·ds + l]. Bᵀ's rows are
//
//	4  0 −5  0  1  0
//	0 −4 −4  1  1  0
//	0  4 −4 −1  1  0
//	0 −2 −1  2  1  0
//	0  2 −1 −2  1  0
//	0  4  0 −5  0  1
//
// Every lane is read before it is written, so dst may be src.
func inputLanesGo[T float32 | float64](dst []T, ds int, src []T, ss, n int) {
	x0, x1, x2 := src[:n], src[ss:ss+n], src[2*ss:2*ss+n]
	x3, x4, x5 := src[3*ss:3*ss+n], src[4*ss:4*ss+n], src[5*ss:5*ss+n]
	y0, y1, y2 := dst[:n], dst[ds:ds+n], dst[2*ds:2*ds+n]
	y3, y4, y5 := dst[3*ds:3*ds+n], dst[4*ds:4*ds+n], dst[5*ds:5*ds+n]
	for l := range n {
		a0, a1, a2, a3, a4, a5 := x0[l], x1[l], x2[l], x3[l], x4[l], x5[l]
		t0 := a4 - 4*a2
		t1 := a3 - 4*a1
		t2 := a4 - a2
		t3 := 2 * (a3 - a1)
		y0[l] = 4*a0 - 5*a2 + a4
		y1[l] = t0 + t1
		y2[l] = t0 - t1
		y3[l] = t2 + t3
		y4[l] = t2 - t3
		y5[l] = 4*a1 - 5*a3 + a5
	}
}

// multiply computes M_p = U_p · V_p (V from v) for the 36 positions of a
// block's first used panels of tiles and output channel panels [p0, p1),
// into the same rows of s.m. Each
// B panel (one K block of nr tiles) stays in L1 while every output
// channel's A panel streams past it from L2.
func (c *winogradConv[T]) multiply(s *winogradScratch[T], v []T, gi, used, p0, p1 int) {
	g, ker := c.g, c.ker
	mr, nr := ker.mr, ker.nr
	for p := range wgPos {
		vp := v[p*c.vStride:]
		mp := s.m[p*c.mStride:]
		up := c.u[(gi*wgPos+p)*c.uStride:]
		for pc := 0; pc < g.cinG; pc += ker.kc {
			kb := min(ker.kc, g.cinG-pc)
			be := T(1)
			if pc == 0 {
				be = 0
			}
			for jp := range used {
				bp := vp[(jp*g.cinG+pc)*nr:][:kb*nr]
				for ip := p0; ip < p1; ip++ {
					ap := up[(ip*g.cinG+pc)*mr:][:kb*mr]
					ker.run(kb, ap, bp, mp[ip*mr*c.block+jp*nr:], c.block, 1, be)
				}
			}
		}
	}
}

// transformOutput writes Aᵀ M A of the block's n tiles from tile t0 into
// dst for group gi's output channels [co0, co1), clipping tiles at the output's
// right and bottom edges. As in transformInput, a panel's tiles are
// transformed side by side (outputLanes) and then scattered.
func (c *winogradConv[T]) transformOutput(s *winogradScratch[T], gi, t0, n, co0, co1 int) {
	g, nr := c.g, c.ker.nr
	oh, ow := g.win.OutH, g.win.OutW
	pStride := c.mStride
	rows, tile := s.patch[:wgIn*wgOut*nr], s.patch[wgIn*wgOut*nr:][:wgOut*wgOut*nr]
	var at [32]int // per lane: the tile's first output in dst, less the channel
	var hs, ws [32]int
	for jp := range ceilDiv(n, nr) {
		lanes := min(nr, n-jp*nr)
		for l := range lanes {
			t := t0 + jp*nr + l
			b, r := t/c.tiles, t%c.tiles
			y0, x0 := r/c.tilesW*wgOut, r%c.tilesW*wgOut
			hs[l], ws[l] = min(wgOut, oh-y0), min(wgOut, ow-x0)
			at[l] = (b*g.cout+gi*g.coutG)*oh*ow + y0*ow + x0
		}
		for co := co0; co < co1; co++ {
			in := s.m[co*c.block+jp*nr:]
			// M A along each row, then Aᵀ (M A) down each column.
			for i := range wgIn {
				outputLanes(rows[i*wgOut*nr:], nr, in[i*wgIn*pStride:], pStride, nr)
			}
			for j := range wgOut {
				outputLanes(tile[j*nr:], wgOut*nr, rows[j*nr:], wgOut*nr, nr)
			}
			plane := c.dst[co*oh*ow:]
			for l := range lanes {
				o := at[l]
				lane := tile[l:]
				for i := range hs[l] {
					row := plane[o+i*ow:][:ws[l]]
					q := lane[i*wgOut*nr:]
					if len(row) == wgOut { // an interior tile's row, unrolled
						q = q[:3*nr+1]
						row[0], row[1], row[2], row[3] = q[0], q[nr], q[2*nr], q[3*nr]
						continue
					}
					for j := range row {
						row[j] = q[j*nr]
					}
				}
			}
		}
	}
}

// outputLanes is outputLanesGo, or its assembly where the CPU has it.
func outputLanes[T float32 | float64](dst []T, ds int, src []T, ss, n int) {
	laneTransform(outputLanesF32, outputLanesGo[T], dst, ds, src, ss, n)
}

// outputLanesF32, where set, is outputLanesGo for float32 and n a
// multiple of 8.
var outputLanesF32 func(dst []float32, ds int, src []float32, ss, n int)

// outputLanesGo applies Aᵀ to n lanes side by side (six rows in, four
// out, laid out as in inputLanesGo). Aᵀ's rows are
//
//	1  1  1  1  1  0
//	0  1 −1  2 −2  0
//	0  1  1  4  4  0
//	0  1 −1  8 −8  1
func outputLanesGo[T float32 | float64](dst []T, ds int, src []T, ss, n int) {
	x0, x1, x2 := src[:n], src[ss:ss+n], src[2*ss:2*ss+n]
	x3, x4, x5 := src[3*ss:3*ss+n], src[4*ss:4*ss+n], src[5*ss:5*ss+n]
	y0, y1, y2, y3 := dst[:n], dst[ds:ds+n], dst[2*ds:2*ds+n], dst[3*ds:3*ds+n]
	for l := range n {
		a, b := x1[l]+x2[l], x1[l]-x2[l]
		c, d := x3[l]+x4[l], x3[l]-x4[l]
		y0[l] = x0[l] + a + c
		y1[l] = b + 2*d
		y2[l] = a + 4*c
		y3[l] = b + 8*d + x5[l]
	}
}
