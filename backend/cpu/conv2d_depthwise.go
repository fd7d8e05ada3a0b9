package cpu

import (
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// convDepthwise computes a convolution with one input channel per group
// (depthwise, with any channel multiplier) directly, one output plane at a
// time: a GEMM would have one row per group, a sixth of its tile, and a K
// of only KH·KW. float32 3×3 windows with strides 1 or 2 (MobileNet's
// layers) take depthwise3x3; everything else the general sliding sums.
func convDepthwise[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) {
	if s, ok := any(src).([]float32); ok && depthwise3x3Applies(g.win) {
		depthwise3x3(g, s, off, st, wt, any(dst).([]float32))
		return
	}
	convDepthwiseGeneral(g, src, off, st, wt, dst)
}

// convDepthwiseGeneral is convDepthwise for any window, stride, dilation
// and dtype: each output plane is the sum of KH·KW scaled input planes
// shifted by the window offsets, added row by row over contiguous runs.
func convDepthwiseGeneral[T float32 | float64](g convGeom, src []T, off int, st []int, wt *operand, dst []T) {
	w, woff, wst := dense[T](wt)
	win := g.win
	planes := g.n * g.cout
	grain := max(1, (1<<16)/max(1, g.l*win.KH*win.KW))
	parallelFor(planes, grain, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			b, co := pl/g.cout, pl%g.cout
			in := off + b*st[0] + co/g.coutG*st[1]
			out := dst[pl*g.l : (pl+1)*g.l]
			clear(out)
			for kh := range win.KH {
				for kw := range win.KW {
					wv := w[woff+co*wst[0]+kh*wst[2]+kw*wst[3]]
					// Output columns [owLo, owHi) read inside the row: x = ow·StrideW + x0.
					x0 := kw*win.DilationW - win.PadW
					owLo := 0
					if x0 < 0 {
						owLo = ceilDiv(-x0, win.StrideW)
					}
					owHi := min(win.OutW, max(0, (g.wd-1-x0)/win.StrideW+1))
					if x0 >= g.wd || owLo >= owHi {
						continue
					}
					for oh := range win.OutH {
						y := oh*win.StrideH - win.PadH + kh*win.DilationH
						if y < 0 || y >= g.h {
							continue
						}
						row := out[oh*win.OutW+owLo : oh*win.OutW+owHi]
						base := in + y*st[2]
						if win.StrideW == 1 && st[3] == 1 {
							s := src[base+owLo+x0 : base+owHi+x0]
							for i, v := range s {
								row[i] += wv * v
							}
							continue
						}
						at, step := base+(owLo*win.StrideW+x0)*st[3], win.StrideW*st[3]
						for i := range row {
							row[i] += wv * src[at]
							at += step
						}
					}
				}
			}
		}
	})
}

// depthwise3x3Applies reports whether depthwise3x3 computes a window: 3×3
// with strides of 1 or 2 (any padding and dilation). Larger strides would
// need stride² phase planes for few outputs.
func depthwise3x3Applies(w hal.Window) bool {
	return w.KH == 3 && w.KW == 3 && w.StrideH <= 2 && w.StrideW <= 2
}

// depthwiseTapsAsm, when set (AVX2 and FMA, conv2d_depthwise_amd64.go), is
// depthwiseTaps in assembly; tests clear it to check the portable loop.
var depthwiseTapsAsm func(out, in []float32, offs *[9]int, w *[9]float32)

// depthwiseSplitAsm, when set (AVX2), splits the first n elements of even
// and odd from src as depthwiseSplit does, for some n it returns.
var depthwiseSplitAsm func(even, odd, src []float32) int

// depthwiseSplit sets even[k] = src[2k] and odd[k] = src[2k+1]: one pass
// over a contiguous input row fills its two column phases at stride 2.
func depthwiseSplit(even, odd, src []float32) {
	k := 0
	if depthwiseSplitAsm != nil {
		k = depthwiseSplitAsm(even, odd, src)
	}
	for i := k; i < len(even); i++ {
		even[i] = src[2*i]
	}
	for i := k; i < len(odd); i++ {
		odd[i] = src[2*i+1]
	}
}

// depthwiseTaps sets out[j] = Σ_t w[t]·in[offs[t]+j] for every j of out.
func depthwiseTaps(out, in []float32, offs *[9]int, w *[9]float32) {
	n := len(out)
	p0, p1, p2 := in[offs[0]:][:n], in[offs[1]:][:n], in[offs[2]:][:n]
	p3, p4, p5 := in[offs[3]:][:n], in[offs[4]:][:n], in[offs[5]:][:n]
	p6, p7, p8 := in[offs[6]:][:n], in[offs[7]:][:n], in[offs[8]:][:n]
	for j := range out {
		out[j] = w[0]*p0[j] + w[1]*p1[j] + w[2]*p2[j] + w[3]*p3[j] + w[4]*p4[j] +
			w[5]*p5[j] + w[6]*p6[j] + w[7]*p7[j] + w[8]*p8[j]
	}
}

// depthwisePlan lays out one input plane for depthwise3x3 so that the
// whole output plane is one 1-D sum of nine shifted runs. The input,
// zero-padded, is split into StrideH·StrideW phase planes, phase (a, b)
// holding the padded pixels (y·StrideH + a, x·StrideW + b) in rows of wq:
// tap (kh, kw) then reads phase (kh·DilationH mod StrideH, kw·DilationW
// mod StrideW) at row oh + kh·DilationH / StrideH and column ow +
// kw·DilationW / StrideW for output (oh, ow), the same shift for every
// output. Output (oh, ow) is computed at oh·wq + ow; the columns from OutW
// to wq are junk and are dropped when the plane is copied out, which is
// cheaper than edge cases for small planes (MobileNet's are 3×3 to 56×56).
type depthwisePlan struct {
	hq, wq int    // rows and columns of each phase plane
	phase  int    // elements per phase plane, with slack for the junk columns
	n      int    // outputs computed per plane: OutH·wq rounded up to 8
	offs   [9]int // where each tap's run starts in the phase planes
	// The rows [yLo, yHi) and columns [xLo, xHi) of each phase plane that
	// lie inside the input; the rest is padding, the same zeros for every
	// plane, so only these are written per plane.
	yLo, yHi, xLo, xHi [4]int
}

func newDepthwisePlan(w hal.Window, h, wd int) depthwisePlan {
	var p depthwisePlan
	p.hq = w.OutH + 2*w.DilationH/w.StrideH
	p.wq = w.OutW + 2*w.DilationW/w.StrideW
	p.n = (w.OutH*p.wq + 7) &^ 7
	// A tap's run ends before (hq - OutH)·wq + (wq - OutW) + n ≤ hq·wq + wq + 7.
	p.phase = p.hq*p.wq + p.wq + 8
	for kh := range 3 {
		for kw := range 3 {
			a, b := kh*w.DilationH%w.StrideH, kw*w.DilationW%w.StrideW
			p.offs[kh*3+kw] = (a*w.StrideW+b)*p.phase + kh*w.DilationH/w.StrideH*p.wq + kw*w.DilationW/w.StrideW
		}
	}
	// Phase plane index i = yy·stride + a - pad lies inside [0, size) for
	// i in [lo, hi), lo ≤ hi ≤ n.
	inside := func(n, stride, a, pad, size int) (lo, hi int) {
		x0 := a - pad
		if x0 < 0 {
			lo = min(n, ceilDiv(-x0, stride))
		}
		hi = lo
		if size-1-x0 >= 0 {
			hi = max(lo, min(n, (size-1-x0)/stride+1))
		}
		return lo, hi
	}
	for a := range w.StrideH {
		for b := range w.StrideW {
			ph := a*w.StrideW + b
			p.yLo[ph], p.yHi[ph] = inside(p.hq, w.StrideH, a, w.PadH, h)
			p.xLo[ph], p.xHi[ph] = inside(p.wq, w.StrideW, b, w.PadW, wd)
		}
	}
	return p
}

// depthwisePool holds depthwise3x3's per-worker scratch (*[]float32).
var depthwisePool sync.Pool

// depthwise3x3 is convDepthwise for depthwise3x3Applies windows in
// float32: per output plane, the phase planes are filled from the input
// (any strides), the nine taps summed in registers over the whole plane
// (depthwiseTaps: 8 outputs per AVX2 instruction, one store per output),
// and the rows copied out without their junk columns.
func depthwise3x3(g convGeom, src []float32, off int, st []int, wt *operand, dst []float32) {
	w, woff, wst := dense[float32](wt)
	win := g.win
	p := newDepthwisePlan(win, g.h, g.wd)
	phases := win.StrideH * win.StrideW
	taps := depthwiseTapsAsm
	if taps == nil {
		taps = depthwiseTaps
	}
	weights := make([][9]float32, g.cout)
	for co := range weights {
		for t := range 9 {
			weights[co][t] = w[woff+co*wst[0]+t/3*wst[2]+t%3*wst[3]]
		}
	}
	grain := max(1, (1<<16)/max(1, 9*g.l))
	parallelFor(g.n*g.cout, grain, func(lo, hi int) {
		need := phases*p.phase + p.n
		sp, _ := depthwisePool.Get().(*[]float32)
		if sp == nil || cap(*sp) < need {
			s := make([]float32, need)
			sp = &s
		}
		buf := (*sp)[:need]
		in, out := buf[:phases*p.phase], buf[phases*p.phase:]
		clear(in) // the padding; depthwisePhases writes only the inside
		b, co := lo/g.cout, lo%g.cout
		for pl := lo; pl < hi; pl++ {
			// Planes of one input channel (a channel multiplier) share its phases.
			if pl == lo || co%g.coutG == 0 {
				depthwisePhases(p, phases, win, src, off+b*st[0]+co/g.coutG*st[1], st, in)
			}
			taps(out, in, &p.offs, &weights[co])
			plane := dst[pl*g.l : (pl+1)*g.l]
			for oh := range win.OutH {
				copy(plane[oh*win.OutW:(oh+1)*win.OutW], out[oh*p.wq:])
			}
			if co++; co == g.cout {
				b, co = b+1, 0
			}
		}
		depthwisePool.Put(sp)
	})
}

// depthwisePhases writes the inside of the phase planes of depthwisePlan
// from the input plane at base: contiguous rows at stride 1 are copied
// whole, anything else gathered.
func depthwisePhases(p depthwisePlan, phases int, win hal.Window, src []float32, base int, st []int, in []float32) {
	if win.StrideW == 2 && st[3] == 1 {
		depthwisePhasesSplit(p, win, src, base, st, in)
		return
	}
	for ph := range phases {
		a, b := ph/win.StrideW, ph%win.StrideW
		plane := in[ph*p.phase:][:p.hq*p.wq]
		xLo, xHi := p.xLo[ph], p.xHi[ph]
		if xLo == xHi {
			continue
		}
		step := win.StrideW * st[3]
		for yy := p.yLo[ph]; yy < p.yHi[ph]; yy++ {
			row := plane[yy*p.wq+xLo : yy*p.wq+xHi]
			at := base + (yy*win.StrideH+a-win.PadH)*st[2] + (xLo*win.StrideW+b-win.PadW)*st[3]
			if step == 1 {
				copy(row, src[at:])
				continue
			}
			s := src[at : at+(len(row)-1)*step+1]
			for j := range row {
				row[j] = s[j*step]
			}
		}
	}
}

// depthwisePhasesSplit is depthwisePhases for contiguous rows at column
// stride 2: each input row is read once and split between its two column
// phases, the one whose first inside column is the row's first element
// taking the even elements.
func depthwisePhasesSplit(p depthwisePlan, win hal.Window, src []float32, base int, st []int, in []float32) {
	for a := range win.StrideH {
		e, o := a*2, a*2+1 // phase planes of columns b = 0 and 1
		if p.xLo[e]*2-win.PadW != 0 {
			e, o = o, e
		}
		ne, no := p.xHi[e]-p.xLo[e], p.xHi[o]-p.xLo[o]
		for yy := p.yLo[a*2]; yy < p.yHi[a*2]; yy++ {
			at := base + (yy*win.StrideH+a-win.PadH)*st[2]
			even := in[e*p.phase+yy*p.wq+p.xLo[e]:][:ne]
			odd := in[o*p.phase+yy*p.wq+p.xLo[o]:][:no]
			depthwiseSplit(even, odd, src[at:at+ne+no])
		}
	}
}
