package cpu

import (
	"github.com/webtensor/webtensor/hal"
)

// convSplitMin is the per-image multiply-add count from which gemm splits
// one pointwise product across the cores (gemmParallelMin) and images run
// in turn.
const convSplitMin = gemmParallelMin

// Conv2D convolves src [N, C, H, W] with weight [Cout, C/groups, KH, KW]
// into dst [N, Cout, OutH, OutW]. Each group is one GEMM, weight
// [Cout/groups, K] times the im2col matrix [K, N·OutH·OutW] with
// K = C/groups·KH·KW, which is never built: the GEMM packs its B panels
// straight from src (conv2d_implicit.go). A pointwise convolution (1×1,
// stride 1, no padding) over contiguous planes multiplies the input in
// place, and a depthwise one (one input channel per group, any channel
// multiplier) runs as direct sliding sums. float16 computes in float32
// and rounds once.
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
	dst, commit := output[T](&out, false)
	defer commit()
	if g.kg == 0 {
		clear(dst) // no input channels: every sum is empty
		return
	}
	pointwise := win.KH == 1 && win.KW == 1 && win.StrideH == 1 && win.StrideW == 1 &&
		win.PadH == 0 && win.PadW == 0 && st[3] == 1 && (g.h == 1 || st[2] == g.wd) &&
		(g.cinG == 1 || st[1] >= g.l)
	switch {
	case !pointwise && useKernelGradient(g, st, wt.Strides, gemmKernelFor[T]().nr):
		convKernelGradient(g, src, off, st, &wt, dst)
		return
	case !pointwise && useDirect(g, st):
		convDirect(g, src, off, st, &wt, dst)
		return
	case !pointwise && useWinograd[T](g):
		convWinograd(g, src, off, st, &wt, dst)
		return
	case g.cinG == 1 && g.groups > 1 && !pointwise:
		convDepthwise(g, src, off, st, &wt, dst)
		return
	case !pointwise:
		convImplicit(g, src, off, st, &wt, dst)
		return
	}
	// Pointwise: the input planes are the GEMM's B operand as they lie.
	weights := packWeights[T](&wt)
	image := func(b int) {
		for gi := range groups {
			a := weights[gi*g.coutG*g.kg:]
			c := dst[(b*g.cout+gi*g.coutG)*g.l:]
			base := off + b*st[0] + gi*g.cinG*st[1]
			ld := st[1]
			if g.cinG == 1 {
				ld = g.l
			}
			gemm(false, false, g.coutG, g.l, g.kg, 1, a, g.kg, src[base:], ld, 0, c, g.l)
		}
	}
	// Images go to workers whole when there are enough of them and each
	// one's GEMMs are too small for gemm to split; otherwise images run one
	// at a time and gemm spreads each product over the cores.
	if g.n >= maxWorkers() && g.coutG*g.l*g.kg < convSplitMin {
		parallelChunks(g.n, workersFor(g.n, 1), func(_, lo, hi int) {
			for b := lo; b < hi; b++ {
				image(b)
			}
		})
		return
	}
	for b := range g.n {
		image(b)
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
