package cpu

import "sync"

// Two convolutions whose GEMM is too thin for the implicit path's panel
// packing to pay for itself, both of them in a small CNN's first layer:
//
//   - convDirect, a forward pass with a tiny K (C/groups·KH·KW, 9 for one
//     input channel and a 3×3 window): implicit GEMM packs KH·KW short,
//     clipped runs per B panel row for a handful of multiply-adds per
//     element, so packing costs several times the arithmetic.
//   - convKernelGradient, the weight gradient of such a layer as the
//     graph computes it (correlateOverBatch): a convolution of one or a
//     few "images" (the forward's input channels) with a window as wide
//     as the forward's output, whose output is the small KH×KW kernel.
//     Its GEMM has n·OutH·OutW columns, 9 for one channel, so each
//     implicit B panel is mostly padding and its rows are runs of three.

// directMaxK is the largest K that convDirect takes: 3×3 windows over up
// to three input channels (an RGB image's first layer).
const directMaxK = 27

// useDirect reports whether convDirect runs the convolution: stride 1
// (its padded-plane trick needs unit steps along both axes), one group,
// a tiny K, and rows of src contiguous.
func useDirect(g convGeom, st []int) bool {
	w := g.win
	return g.groups == 1 && g.kg <= directMaxK && w.StrideH == 1 && w.StrideW == 1 && st[3] == 1
}

// directScratch is one worker's space for convDirect: the zero-padded
// input planes, the packed weight, one B panel and the wide output.
type directScratch[T float32 | float64] struct {
	plane, weights, panel, wide []T
	offsets                     []int
}

var directPools = struct{ f32, f64 sync.Pool }{}

func getDirectScratch[T float32 | float64]() (*directScratch[T], *sync.Pool) {
	pool := &directPools.f64
	var z T
	if _, ok := any(z).(float32); ok {
		pool = &directPools.f32
	}
	if s, ok := pool.Get().(*directScratch[T]); ok {
		return s, pool
	}
	return new(directScratch[T]), pool
}

// convDirect runs a stride-1 convolution with a tiny K through the GEMM
// microkernel without im2col runs. Each image's C input planes are copied
// once into zero-padded planes Hp×Wp (Hp = H + 2·PadH, Wp = W + 2·PadW);
// on the "wide" output grid of OutH rows of Wp columns (Wp − OutW of them
// past the output's edge, computed and dropped), the im2col row of tap
// (ci, kh, kw) at wide index j is the padded planes at j + ci·Hp·Wp +
// kh·DilationH·Wp + kw·DilationW, so each B panel row is one contiguous
// copy of nr elements. The kernel writes the wide output, whose valid
// columns are then copied into dst row by row. Images go to workers.
func convDirect[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) {
	ker := gemmKernelFor[T]()
	mr, nr := ker.mr, ker.nr
	win := g.win
	hp, wp := g.h+2*win.PadH, g.wd+2*win.PadW
	wide := win.OutH * wp
	panels := ceilDiv(wide, nr)
	mPanels := ceilDiv(g.cout, mr)
	// The last panel reads up to nr−1 elements past the wide grid, from
	// the last tap's offset on: the planes carry that much zero tail.
	reach := (g.c-1)*hp*wp + (win.KH-1)*win.DilationH*wp + (win.KW-1)*win.DilationW
	planeLen := max(g.c*hp*wp, reach+panels*nr)
	ic := newConvPlan(g, src, off, st, wt, dst)
	parallelChunks(g.n, workersFor(g.n, 1), func(_, lo, hi int) {
		s, pool := getDirectScratch[T]()
		defer pool.Put(s)
		s.plane = grow(s.plane, planeLen)
		clear(s.plane) // borders and tail stay zero; interiors are overwritten per image
		s.weights = grow(s.weights, mPanels*mr*g.kg)
		for p := range mPanels {
			ic.packWeightPanel(s.weights[p*mr*g.kg:][:mr*g.kg], 0, p, 0, g.kg)
		}
		s.panel = grow(s.panel, g.kg*nr)
		s.wide = grow(s.wide, mPanels*mr*panels*nr)
		s.offsets = s.offsets[:0]
		for ci := range g.c {
			for kh := range win.KH {
				for kw := range win.KW {
					s.offsets = append(s.offsets, ci*hp*wp+kh*win.DilationH*wp+kw*win.DilationW)
				}
			}
		}
		ldc := panels * nr
		for b := lo; b < hi; b++ {
			for ci := range g.c {
				for y := range g.h {
					row := off + b*st[0] + ci*st[1] + y*st[2]
					at := ci*hp*wp + (y+win.PadH)*wp + win.PadW
					copy(s.plane[at:at+g.wd], src[row:row+g.wd])
				}
			}
			for j := 0; j < wide; j += nr {
				for t, o := range s.offsets {
					copy(s.panel[t*nr:(t+1)*nr], s.plane[j+o:j+o+nr])
				}
				for p := range mPanels {
					ker.run(g.kg, s.weights[p*mr*g.kg:][:mr*g.kg], s.panel, s.wide[p*mr*ldc+j:], ldc, 1, 0)
				}
			}
			out := dst[b*g.cout*g.l:]
			for co := range g.cout {
				for oh := range win.OutH {
					copy(out[co*g.l+oh*win.OutW:][:win.OutW], s.wide[co*ldc+oh*wp:][:win.OutW])
				}
			}
		}
	})
}

// useKernelGradient reports whether convKernelGradient runs the
// convolution: a weight gradient's shape (a window at least 8 wide giving
// an output under 8 wide) with too few images for the pixelwise
// orientation (convPixelwise), one group, undilated contiguous rows of
// src, and each output channel's kernel rows (KH·KW) one stride apart in
// the weight, as in a permuted gradient.
func useKernelGradient(g convGeom, st, wst []int, nr int) bool {
	w := g.win
	return g.groups == 1 && w.OutW < 8 && w.KW >= 8 && 2*g.n < nr && w.DilationW == 1 &&
		st[3] == 1 && wst[2] == w.KW*wst[3]
}

// kernelGradScratch is one worker's space for convKernelGradient.
type kernelGradScratch[T float32 | float64] struct {
	windows []T // one channel's windows, [OutH·OutW, KH·KW]
}

var kernelGradPools = struct{ f32, f64, acc32, acc64 sync.Pool }{}

// convKernelGradient computes the output [N, Cout, L] (L = OutH·OutW, a
// handful of pixels) as Σ over channels c of X_c · W_cᵀ, transposed:
// X_c [N·L, KH·KW] stacks every image's channel c under the window at
// each output pixel (zero where it hangs over the padding), and W_c
// [Cout, KH·KW] is the weight's channel c, read in place through its
// strides. X_c is N·L contiguous copies of window rows, and each product
// is a plain GEMM with M = N·L: the long K runs through the packed
// panels once per channel instead of once per nr/L-filled B panel.
// Workers split the channels, each summing into its own accumulator; the
// accumulators are added at the end.
func convKernelGradient[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) {
	w, woff, wst := dense[T](wt)
	win := g.win
	khkw := win.KH * win.KW
	workers := min(maxWorkers(), g.c, max(1, g.n*g.l*g.cout*g.kg/gemmParallelMin))
	// The products' M, L, rounded up to whole A panels with zero windows:
	// gemm would otherwise allocate the zero rows of the last panel.
	rows := ceilDiv(g.l, gemmKernelFor[T]().mr) * gemmKernelFor[T]().mr
	accLen := g.n * rows * g.cout
	pool, accPool := &kernelGradPools.f64, &kernelGradPools.acc64
	var z T
	if _, ok := any(z).(float32); ok {
		pool, accPool = &kernelGradPools.f32, &kernelGradPools.acc32
	}
	accs, _ := accPool.Get().(*[]T)
	if accs == nil {
		accs = new([]T)
	}
	defer accPool.Put(accs)
	*accs = grow(*accs, workers*accLen)
	clear(*accs)
	parallelChunks(g.c, workers, func(k, lo, hi int) {
		s, _ := pool.Get().(*kernelGradScratch[T])
		if s == nil {
			s = new(kernelGradScratch[T])
		}
		defer pool.Put(s)
		s.windows = grow(s.windows, g.n*rows*khkw)
		acc := (*accs)[k*accLen : (k+1)*accLen]
		for c := lo; c < hi; c++ {
			for b := range g.n {
				x := s.windows[b*rows*khkw : (b+1)*rows*khkw]
				kernelWindows(g, x, src, off+b*st[0]+c*st[1], st)
				clear(x[g.l*khkw:])
			}
			wc := strided[T]{w, woff + c*wst[1], wst[3], wst[0]}
			gemmWorkers(1, g.n*rows, g.cout, khkw, 1, strided[T]{s.windows, 0, khkw, 1}, wc, 1, acc, g.cout)
		}
	})
	// dst [N, Cout, L] is the sum of the accumulators [N, rows, Cout],
	// transposed.
	for b := range g.n {
		for co := range g.cout {
			for l := range g.l {
				var sum T
				for k := range workers {
					sum += (*accs)[k*accLen+(b*rows+l)*g.cout+co]
				}
				dst[(b*g.cout+co)*g.l+l] = sum
			}
		}
	}
}

// kernelWindows writes into x [OutH·OutW, KH·KW] the plane at src[base:]
// (row stride st[2], contiguous rows) under the window at each output
// pixel, zero over the padding.
func kernelWindows[T float32 | float64](g convGeom, x, src []T, base int, st []int) {
	win := g.win
	khkw := win.KH * win.KW
	for oh := range win.OutH {
		for ow := range win.OutW {
			r := x[(oh*win.OutW+ow)*khkw:][:khkw]
			x0 := ow*win.StrideW - win.PadW
			lo := min(max(0, -x0), win.KW)
			hi := max(lo, min(win.KW, g.wd-x0))
			for kh := range win.KH {
				row := r[kh*win.KW : (kh+1)*win.KW]
				y := oh*win.StrideH - win.PadH + kh*win.DilationH
				if y < 0 || y >= g.h {
					clear(row)
					continue
				}
				clear(row[:lo])
				at := base + y*st[2] + x0
				copy(row[lo:hi], src[at+lo:at+hi])
				clear(row[hi:])
			}
		}
	}
}
