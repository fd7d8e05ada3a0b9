package cpu

import (
	"github.com/webtensor/webtensor/hal"
)

// convChunk bounds the unfolded columns one worker holds at a time, in
// elements (4 MiB of float32): big enough that each GEMM call has long
// rows, small enough to stay in the last-level cache next to the weights.
const convChunk = 1 << 20

// convSplitMin is the per-image multiply-add count from which gemm splits
// one product across the cores (gemmParallelMin) and images run in turn.
const convSplitMin = gemmParallelMin

// Conv2D convolves src [N, C, H, W] with weight [Cout, C/groups, KH, KW]
// into dst [N, Cout, OutH, OutW]. Each group of each image is one GEMM,
// weight [Cout/groups, K] times columns [K, OutH·OutW] with
// K = C/groups·KH·KW, so no whole-batch im2col buffer exists: the columns
// are unfolded a chunk at a time into per-worker scratch, and a pointwise
// convolution (1×1, stride 1, no padding) over contiguous planes
// multiplies the input in place. float16 computes in float32 and rounds
// once.
func (d *Device) Conv2D(dst, src, weight hal.View, w hal.Window, groups int) error {
	const op = hal.KernelConv2D
	o, err := d.operands(op, "dst src weight", dst, src, weight)
	if err != nil {
		return err
	}
	out, in, wt := o[0], o[1], o[2]
	if err := d.windowOp(op, hal.KernelConv2D, out, in, wt); err != nil {
		return err
	}
	if err := needDType(op, "weight", wt, in.DType); err != nil {
		return err
	}
	if err := checkWindow(op, w); err != nil {
		return err
	}
	if err := convShapes(op, out, in, wt, w, groups); err != nil {
		return err
	}
	d.dispatch()
	if out.Elements() == 0 {
		return nil
	}
	if in.DType == hal.Float64 {
		conv2d[float64](out, in, wt, w, groups)
	} else {
		conv2d[float32](out, in, wt, w, groups)
	}
	return nil
}

// convShapes checks src [N, C, H, W], weight [Cout, C/groups, KH, KW] and
// dst [N, Cout, OutH, OutW] against each other and the window.
func convShapes(op string, out, in, wt operand, w hal.Window, groups int) error {
	if len(in.Shape) != 4 || len(wt.Shape) != 4 {
		return errorf(op, hal.ErrInvalid, "src %s and weight %s must have 4 axes", desc(in.View), desc(wt.View))
	}
	if groups < 1 || in.Shape[1]%groups != 0 || wt.Shape[0]%groups != 0 {
		return errorf(op, hal.ErrInvalid, "groups %d must be ≥ 1 and divide the channels of src %s and weight %s",
			groups, desc(in.View), desc(wt.View))
	}
	if !sameShape(wt.Shape, []int{wt.Shape[0], in.Shape[1] / groups, w.KH, w.KW}) {
		return errorf(op, hal.ErrInvalid, "weight %s must be [Cout, %d, %d, %d] for src %s, groups %d and a %dx%d window",
			desc(wt.View), in.Shape[1]/groups, w.KH, w.KW, desc(in.View), groups, w.KH, w.KW)
	}
	if want := []int{in.Shape[0], wt.Shape[0], w.OutH, w.OutW}; !sameShape(out.Shape, want) {
		return errorf(op, hal.ErrInvalid, "src %s convolved with weight %s gives %v, not dst %s",
			desc(in.View), desc(wt.View), want, desc(out.View))
	}
	return nil
}

// convGeom is one convolution's sizes: per group, the GEMM is
// coutG × L × kg.
type convGeom struct {
	n, c, h, wd, cout int
	groups            int
	cinG, coutG, kg   int
	l                 int // output pixels per image
	win               hal.Window
}

func conv2d[T float32 | float64](out, in, wt operand, win hal.Window, groups int) {
	g := convGeom{n: in.Shape[0], c: in.Shape[1], h: in.Shape[2], wd: in.Shape[3], cout: wt.Shape[0],
		groups: groups, win: win, l: win.OutH * win.OutW}
	g.cinG, g.coutG = g.c/groups, g.cout/groups
	g.kg = g.cinG * win.KH * win.KW
	src, off, st := dense[T](&in)
	weights := packWeights[T](&wt)
	dst, commit := output[T](&out, false)
	defer commit()
	if g.kg == 0 {
		clear(dst) // no input channels: every sum is empty
		return
	}

	pointwise := win.KH == 1 && win.KW == 1 && win.StrideH == 1 && win.StrideW == 1 &&
		win.PadH == 0 && win.PadW == 0 && st[3] == 1 && (g.h == 1 || st[2] == g.wd) &&
		(g.cinG == 1 || st[1] >= g.l)
	cols := max(1, min(g.l, convChunk/g.kg))
	// Images go to workers whole when there are enough of them and each
	// one's GEMMs are too small for gemm to split; otherwise images run one
	// at a time, gemm spreads each product over the cores, and so does the
	// unfolding.
	byImage := g.n >= maxWorkers() && g.coutG*g.l*g.kg < convSplitMin
	split := !byImage && maxWorkers() > 1
	image := func(b int, scratch []T) {
		for gi := range groups {
			a := weights[gi*g.coutG*g.kg:]
			c := dst[(b*g.cout+gi*g.coutG)*g.l:]
			base := off + b*st[0] + gi*g.cinG*st[1]
			if pointwise {
				ld := st[1]
				if g.cinG == 1 {
					ld = g.l
				}
				gemm(false, false, g.coutG, g.l, g.kg, 1, a, g.kg, src[base:], ld, 0, c, g.l)
				continue
			}
			for l0 := 0; l0 < g.l; l0 += cols {
				n := min(cols, g.l-l0)
				if split {
					parallelFor(g.cinG, 1, func(lo, hi int) { unfold(scratch, n, src, base, st, g, l0, n, lo, hi) })
				} else {
					unfold(scratch, n, src, base, st, g, l0, n, 0, g.cinG)
				}
				gemm(false, false, g.coutG, n, g.kg, 1, a, g.kg, scratch, n, 0, c[l0:], g.l)
			}
		}
	}
	scratchLen := 0
	if !pointwise {
		scratchLen = g.kg * cols
	}
	if byImage {
		parallelChunks(g.n, workersFor(g.n, 1), func(_, lo, hi int) {
			scratch := make([]T, scratchLen)
			for b := lo; b < hi; b++ {
				image(b, scratch)
			}
		})
		return
	}
	scratch := make([]T, scratchLen)
	for b := range g.n {
		image(b, scratch)
	}
}

// packWeights returns the weight as row-major [Cout, C/groups·KH·KW]: the
// buffer itself when it already is, else a packed copy (weights are small
// next to activations).
func packWeights[T float32 | float64](wt *operand) []T {
	data, off, st := dense[T](wt)
	if (hal.View{Shape: wt.Shape, Strides: st}).Contiguous() {
		return data[off : off+wt.Elements()]
	}
	p := make([]T, 0, wt.Elements())
	s := wt.Shape
	for i := range s[0] {
		for j := range s[1] {
			for k := range s[2] {
				for l := range s[3] {
					p = append(p, data[off+i*st[0]+j*st[1]+k*st[2]+l*st[3]])
				}
			}
		}
	}
	return p
}

// unfold writes columns [l0, l0+cols) of the rows of channels [c0, c1)
// of one group's im2col matrix [C/groups·KH·KW, OutH·OutW] into dst (row
// stride n), reading the group's channels of one image from src at base.
func unfold[T float32 | float64](dst []T, n int, src []T, base int, st []int, g convGeom, l0, cols, c0, c1 int) {
	w := g.win
	ow := w.OutW
	row := c0 * w.KH * w.KW
	for ci := c0; ci < c1; ci++ {
		plane := base + ci*st[1]
		for kh := range w.KH {
			for kw := range w.KW {
				r := dst[row*n : row*n+cols]
				row++
				for j := 0; j < cols; {
					l := l0 + j
					oh, ow0 := l/ow, l%ow
					seg := r[j : j+min(ow-ow0, cols-j)]
					j += len(seg)
					y := oh*w.StrideH - w.PadH + kh*w.DilationH
					if y < 0 || y >= g.h {
						clear(seg)
						continue
					}
					p := plane + y*st[2]
					x0 := ow0*w.StrideW - w.PadW + kw*w.DilationW
					if w.StrideW == 1 && st[3] == 1 {
						// A contiguous run: zeros, a copy, zeros.
						lo := min(max(0, -x0), len(seg))
						hi := max(lo, min(len(seg), g.wd-x0))
						clear(seg[:lo])
						if hi > lo {
							copy(seg[lo:hi], src[p+x0+lo:p+x0+hi])
						}
						clear(seg[hi:])
						continue
					}
					for i := range seg {
						if x := x0 + i*w.StrideW; x >= 0 && x < g.wd {
							seg[i] = src[p+x*st[3]]
						} else {
							seg[i] = 0
						}
					}
				}
			}
		}
	}
}
