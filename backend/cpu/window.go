package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// The window kernels (Im2Col, Col2Im, Pool2D, GridSample) work on NCHW
// images one (n, c) plane or one output row per task. They compute in
// float32 or float64; float16 operands are converted to float32 first and
// the result rounded back once.

// windowOp validates what every window kernel shares: a float dtype the
// device runs, src and dst of that dtype, a rank-4 NCHW src, and dst
// contiguous and apart from the inputs.
func (d *Device) windowOp(op, kernel string, out operand, ins ...operand) error {
	src := ins[0]
	if !d.caps.Supports(kernel, src.DType) {
		return unsupportedDType(op, src.DType)
	}
	if err := needDType(op, "dst", out, src.DType); err != nil {
		return err
	}
	if err := needContiguous(op, "dst", out); err != nil {
		return err
	}
	return needDistinct(op, out, ins...)
}

func checkWindow(op string, w hal.Window) error {
	if w.KH < 1 || w.KW < 1 || w.StrideH < 1 || w.StrideW < 1 || w.DilationH < 1 || w.DilationW < 1 ||
		w.PadH < 0 || w.PadW < 0 || w.OutH < 0 || w.OutW < 0 {
		return errorf(op, hal.ErrInvalid, "bad window %+v", w)
	}
	return nil
}

// planes returns how many (n, c) planes of per elements a worker should
// get.
func planes(per int) int { return max(1, elementGrain/max(per, 1)) }

// Im2Col unfolds src [N, C, H, W] into dst [N, C·KH·KW, OutH·OutW].
func (d *Device) Im2Col(dst, src hal.View, w hal.Window) error {
	const op = "im2col"
	o, err := d.operands(op, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if err := d.windowOp(op, hal.KernelIm2Col, out, in); err != nil {
		return err
	}
	if err := checkWindow(op, w); err != nil {
		return err
	}
	if len(in.Shape) != 4 || !sameShape(out.Shape, []int{in.Shape[0], in.Shape[1] * w.KH * w.KW, w.OutH * w.OutW}) {
		return errorf(op, hal.ErrInvalid, "src %s does not unfold into dst %s with window %dx%d to %dx%d",
			desc(in.View), desc(out.View), w.KH, w.KW, w.OutH, w.OutW)
	}
	d.dispatch()
	if in.DType == hal.Float64 {
		im2col[float64](out, in, w)
	} else {
		im2col[float32](out, in, w)
	}
	return nil
}

func im2col[T float32 | float64](out, in operand, w hal.Window) {
	src, off, st := dense[T](&in)
	dst, commit := output[T](&out, false)
	C, H, W := in.Shape[1], in.Shape[2], in.Shape[3]
	L := w.OutH * w.OutW
	per := w.KH * w.KW * L // dst elements per (n, c)
	parallelFor(in.Shape[0]*C, planes(per), func(lo, hi int) {
		for nc := lo; nc < hi; nc++ {
			base := off + nc/C*st[0] + nc%C*st[1]
			rows := dst[nc*per : (nc+1)*per]
			for kh := range w.KH {
				for kw := range w.KW {
					row := rows[(kh*w.KW+kw)*L:][:L]
					for oh := range w.OutH {
						r := row[oh*w.OutW:][:w.OutW]
						h := oh*w.StrideH - w.PadH + kh*w.DilationH
						if h < 0 || h >= H {
							clear(r)
							continue
						}
						p := base + h*st[2]
						for ow := range r {
							x := ow*w.StrideW - w.PadW + kw*w.DilationW
							if x < 0 || x >= W {
								r[ow] = 0
							} else {
								r[ow] = src[p+x*st[3]]
							}
						}
					}
				}
			}
		}
	})
	commit()
}

// Col2Im folds src [N, C·KH·KW, OutH·OutW] into dst [N, C, H, W], summing
// overlaps. Each (n, c) plane is its own task, so no two tasks touch one
// dst element.
func (d *Device) Col2Im(dst, src hal.View, w hal.Window) error {
	const op = "col2im"
	o, err := d.operands(op, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if err := d.windowOp(op, hal.KernelCol2Im, out, in); err != nil {
		return err
	}
	if err := checkWindow(op, w); err != nil {
		return err
	}
	if len(out.Shape) != 4 || !sameShape(in.Shape, []int{out.Shape[0], out.Shape[1] * w.KH * w.KW, w.OutH * w.OutW}) {
		return errorf(op, hal.ErrInvalid, "src %s does not fold into dst %s with window %dx%d from %dx%d",
			desc(in.View), desc(out.View), w.KH, w.KW, w.OutH, w.OutW)
	}
	d.dispatch()
	if in.DType == hal.Float64 {
		col2im[float64](out, in, w)
	} else {
		col2im[float32](out, in, w)
	}
	return nil
}

func col2im[T float32 | float64](out, in operand, w hal.Window) {
	src, off, st := dense[T](&in)
	dst, commit := output[T](&out, false)
	C, H, W := out.Shape[1], out.Shape[2], out.Shape[3]
	K := w.KH * w.KW
	parallelFor(out.Shape[0]*C, planes(K*w.OutH*w.OutW), func(lo, hi int) {
		for nc := lo; nc < hi; nc++ {
			plane := dst[nc*H*W : (nc+1)*H*W]
			clear(plane)
			n, c := nc/C, nc%C
			for kh := range w.KH {
				for kw := range w.KW {
					p := off + n*st[0] + (c*K+kh*w.KW+kw)*st[1]
					for oh := range w.OutH {
						h := oh*w.StrideH - w.PadH + kh*w.DilationH
						if h < 0 || h >= H {
							continue
						}
						row := plane[h*W : (h+1)*W]
						q := p + oh*w.OutW*st[2]
						for ow := range w.OutW {
							if x := ow*w.StrideW - w.PadW + kw*w.DilationW; x >= 0 && x < W {
								row[x] += src[q+ow*st[2]]
							}
						}
					}
				}
			}
		}
	})
	commit()
}

// Pool2D pools src [N, C, H, W] into dst [N, C, OutH, OutW].
//
// Max takes the first largest element of each window, a NaN over any
// number (the first NaN, as ArgMax), and writes its position h·W + w into
// indices; padding never wins, and a window with no element inside the
// input gives −Inf and index −1.
//
// Avg sums the window's elements in float64 and divides, as PyTorch, by
// the number of window positions inside the padded input [−pad, size+pad)
// when countIncludePad, else inside the input; a ceil-mode window may run
// past both.
func (d *Device) Pool2D(op hal.PoolOp, dst, indices, src hal.View, w hal.Window, countIncludePad bool) error {
	name := "pool2d " + op.String()
	o, err := d.operands(name, "dst indices? src", dst, indices, src)
	if err != nil {
		return err
	}
	out, idx, in := o[0], o[1], o[2]
	if err := d.windowOp(name, op.Kernel(), out, in); err != nil {
		return err
	}
	if err := checkWindow(name, w); err != nil {
		return err
	}
	if len(in.Shape) != 4 || !sameShape(out.Shape, []int{in.Shape[0], in.Shape[1], w.OutH, w.OutW}) {
		return errorf(name, hal.ErrInvalid, "src %s does not pool into dst %s", desc(in.View), desc(out.View))
	}
	switch {
	case op == hal.PoolMax && idx.Buf == nil:
		return errorf(name, hal.ErrInvalid, "max pooling needs an indices view")
	case op == hal.PoolMax:
		if err := needDType(name, "indices", idx, hal.Int32); err != nil {
			return err
		}
		if err := needShape(name, "indices", idx, out.Shape); err != nil {
			return err
		}
		if err := needContiguous(name, "indices", idx); err != nil {
			return err
		}
		if err := needDistinct(name, idx, in); err != nil {
			return err
		}
		if idx.Buf == out.Buf {
			return errorf(name, hal.ErrInvalid, "indices share a buffer with dst")
		}
	case idx.Buf != nil:
		return errorf(name, hal.ErrInvalid, "average pooling takes no indices, got %s", desc(idx.View))
	}
	d.dispatch()
	if in.DType == hal.Float64 {
		pool2d[float64](op, out, idx, in, w, countIncludePad)
	} else {
		pool2d[float32](op, out, idx, in, w, countIncludePad)
	}
	return nil
}

func pool2d[T float32 | float64](op hal.PoolOp, out, idx, in operand, w hal.Window, countIncludePad bool) {
	src, off, st := dense[T](&in)
	dst, commit := output[T](&out, false)
	var indices []int32
	if op == hal.PoolMax {
		indices = asType[int32](idx.words)[idx.Offset:]
	}
	C, H, W := in.Shape[1], in.Shape[2], in.Shape[3]
	OH, OW := w.OutH, w.OutW
	// inside counts the positions start, start+dilation, … (k of them)
	// in [lo, hi).
	inside := func(start, k, dilation, lo, hi int) int {
		n := 0
		for i := range k {
			if p := start + i*dilation; p >= lo && p < hi {
				n++
			}
		}
		return n
	}
	if op == hal.PoolMax && st[3] == 1 && windowsInside(w, H, W) {
		parallelFor(in.Shape[0]*C, planes(OH*OW*w.KH*w.KW), func(lo, hi int) {
			for nc := lo; nc < hi; nc++ {
				base := off + nc/C*st[0] + nc%C*st[1]
				o := nc * OH * OW
				maxPoolPlane(dst[o:o+OH*OW], indices[o:o+OH*OW], src[base:], st[2], W, w)
			}
		})
		commit()
		return
	}
	parallelFor(in.Shape[0]*C, planes(OH*OW*w.KH*w.KW), func(lo, hi int) {
		for nc := lo; nc < hi; nc++ {
			base := off + nc/C*st[0] + nc%C*st[1]
			for oh := range OH {
				h0 := oh*w.StrideH - w.PadH
				for ow := range OW {
					w0 := ow*w.StrideW - w.PadW
					o := nc*OH*OW + oh*OW + ow
					if op == hal.PoolAvg {
						var sum float64
						for kh := range w.KH {
							h := h0 + kh*w.DilationH
							if h < 0 || h >= H {
								continue
							}
							for kw := range w.KW {
								if x := w0 + kw*w.DilationW; x >= 0 && x < W {
									sum += float64(src[base+h*st[2]+x*st[3]])
								}
							}
						}
						var count int
						if countIncludePad {
							count = inside(h0, w.KH, w.DilationH, -w.PadH, H+w.PadH) * inside(w0, w.KW, w.DilationW, -w.PadW, W+w.PadW)
						} else {
							count = inside(h0, w.KH, w.DilationH, 0, H) * inside(w0, w.KW, w.DilationW, 0, W)
						}
						dst[o] = T(sum / float64(count))
						continue
					}
					best, at := T(math.Inf(-1)), -1
					for kh := range w.KH {
						h := h0 + kh*w.DilationH
						if h < 0 || h >= H {
							continue
						}
						for kw := range w.KW {
							x := w0 + kw*w.DilationW
							if x < 0 || x >= W {
								continue
							}
							v := src[base+h*st[2]+x*st[3]]
							if at < 0 || v > best || (v != v && best == best) {
								best, at = v, h*W+x
							}
						}
					}
					dst[o], indices[o] = best, int32(at)
				}
			}
		}
	})
	commit()
}

// maxPool2x2Vector pools d's windows (rows r0 and r1 of the plane, r0
// starting at plane position base) with the AVX2 kernel when T is float32
// and the CPU has it, and reports whether it did.
func maxPool2x2Vector[T float32 | float64](d []T, ix []int32, r0, r1 []T, base, W int) bool {
	f, ok := any(d).([]float32)
	if !hasSIMD || !ok || len(d) == 0 {
		return false
	}
	r0f, r1f := any(r0).([]float32)[:2*len(d)], any(r1).([]float32)[:2*len(d)]
	maxPool2x2F32AVX2(&f[0], &ix[:len(f)][0], &r0f[0], &r1f[0], len(f), int32(base), int32(W))
	return true
}

// windowsInside reports whether every pooling window lies wholly inside
// the H×W input: no padding, and no ceil-mode window past the end.
func windowsInside(w hal.Window, H, W int) bool {
	return w.PadH == 0 && w.PadW == 0 &&
		(w.OutH-1)*w.StrideH+(w.KH-1)*w.DilationH < H &&
		(w.OutW-1)*w.StrideW+(w.KW-1)*w.DilationW < W
}

// maxPoolPlane is max pooling of one plane whose windows all lie inside it
// (windowsInside) and whose rows are contiguous, rowStride apart in src:
// no bounds checks per tap, and the common 2×2 stride-2 window unrolled.
// It picks as pool2d does: the first largest, or the first NaN.
func maxPoolPlane[T float32 | float64](dst []T, indices []int32, src []T, rowStride, W int, w hal.Window) {
	OH, OW := w.OutH, w.OutW
	if w.KH == 2 && w.KW == 2 && w.StrideW == 2 && w.DilationH == 1 && w.DilationW == 1 {
		for oh := range OH {
			h := oh * w.StrideH
			r0, r1 := src[h*rowStride:h*rowStride+2*OW], src[(h+1)*rowStride:(h+1)*rowStride+2*OW]
			d, ix := dst[oh*OW:oh*OW+OW], indices[oh*OW:oh*OW+OW]
			if maxPool2x2Vector(d, ix, r0, r1, h*W, W) {
				continue
			}
			for ow := range d {
				x := 2 * ow
				best, at := r0[x], h*W+x
				if v := r0[x+1]; v > best || (v != v && best == best) {
					best, at = v, h*W+x+1
				}
				if v := r1[x]; v > best || (v != v && best == best) {
					best, at = v, (h+1)*W+x
				}
				if v := r1[x+1]; v > best || (v != v && best == best) {
					best, at = v, (h+1)*W+x+1
				}
				d[ow], ix[ow] = best, int32(at)
			}
		}
		return
	}
	for oh := range OH {
		h0 := oh * w.StrideH
		for ow := range OW {
			w0 := ow * w.StrideW
			best, at := src[h0*rowStride+w0], h0*W+w0
			for kh := range w.KH {
				h := h0 + kh*w.DilationH
				row := src[h*rowStride:]
				for kw := range w.KW {
					x := w0 + kw*w.DilationW
					if v := row[x]; v > best || (v != v && best == best) {
						best, at = v, h*W+x
					}
				}
			}
			dst[oh*OW+ow], indices[oh*OW+ow] = best, int32(at)
		}
	}
}

// GridSample samples src [N, C, H, W] bilinearly at grid [N, OH, OW, 2]
// into dst [N, C, OH, OW], as torch.nn.functional.grid_sample with mode
// bilinear. Coordinates and weights are computed in float64.
func (d *Device) GridSample(dst, src, grid hal.View, padding hal.GridPadding, alignCorners bool) error {
	const op = "grid_sample"
	o, err := d.operands(op, "dst src grid", dst, src, grid)
	if err != nil {
		return err
	}
	out, in, g := o[0], o[1], o[2]
	if err := d.windowOp(op, hal.KernelGridSample, out, in, g); err != nil {
		return err
	}
	if err := needDType(op, "grid", g, in.DType); err != nil {
		return err
	}
	if padding != hal.GridZeros && padding != hal.GridBorder {
		return errorf(op, hal.ErrInvalid, "unknown padding %v", padding)
	}
	if len(in.Shape) != 4 || len(g.Shape) != 4 || g.Shape[0] != in.Shape[0] || g.Shape[3] != 2 ||
		!sameShape(out.Shape, []int{in.Shape[0], in.Shape[1], g.Shape[1], g.Shape[2]}) {
		return errorf(op, hal.ErrInvalid, "src %s sampled at grid %s does not give dst %s", desc(in.View), desc(g.View), desc(out.View))
	}
	d.dispatch()
	if in.DType == hal.Float64 {
		gridSample[float64](out, in, g, padding, alignCorners)
	} else {
		gridSample[float32](out, in, g, padding, alignCorners)
	}
	return nil
}

func gridSample[T float32 | float64](out, in, g operand, padding hal.GridPadding, alignCorners bool) {
	src, off, st := dense[T](&in)
	grid, goff, gst := dense[T](&g)
	dst, commit := output[T](&out, false)
	C, H, W := in.Shape[1], in.Shape[2], in.Shape[3]
	OH, OW := g.Shape[1], g.Shape[2]
	// unnormalize maps [−1, 1] to pixel coordinates as PyTorch does: to
	// the centres of the corner pixels when alignCorners, else to the
	// outer edges of the corner pixels; border padding then clamps.
	unnormalize := func(x float64, size int) float64 {
		if alignCorners {
			x = (x + 1) / 2 * float64(size-1)
		} else {
			x = ((x+1)*float64(size) - 1) / 2
		}
		if padding == hal.GridBorder {
			x = min(max(x, 0), float64(size-1))
		}
		return x
	}
	parallelFor(in.Shape[0]*OH, planes(OW*C*4), func(lo, hi int) {
		for nh := lo; nh < hi; nh++ {
			n, oh := nh/OH, nh%OH
			for ow := range OW {
				p := goff + n*gst[0] + oh*gst[1] + ow*gst[2]
				x := unnormalize(float64(grid[p]), W)
				y := unnormalize(float64(grid[p+gst[3]]), H)
				x0, y0 := math.Floor(x), math.Floor(y)
				fx, fy := x-x0, y-y0
				// The four neighbours and their weights; one outside
				// the input (or a NaN coordinate) contributes nothing.
				var (
					pos [4]int
					wt  [4]float64
					k   int
				)
				for _, c := range [4]struct{ dx, dy, w float64 }{
					{0, 0, (1 - fx) * (1 - fy)}, {1, 0, fx * (1 - fy)}, {0, 1, (1 - fx) * fy}, {1, 1, fx * fy},
				} {
					cx, cy := x0+c.dx, y0+c.dy
					if cx >= 0 && cx < float64(W) && cy >= 0 && cy < float64(H) {
						pos[k], wt[k] = int(cy)*st[2]+int(cx)*st[3], c.w
						k++
					}
				}
				for ch := range C {
					base := off + n*st[0] + ch*st[1]
					var v float64
					for i := range k {
						v += wt[i] * float64(src[base+pos[i]])
					}
					dst[((n*C+ch)*OH+oh)*OW+ow] = T(v)
				}
			}
		}
	})
	commit()
}
