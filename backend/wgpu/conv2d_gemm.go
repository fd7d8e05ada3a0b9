//go:build cgo || (js && wasm)

package wgpu

import (
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// On a software adapter (llvmpipe, lavapipe) a convolution runs as Im2Col
// into scratch and one batched MatMul whose weight is broadcast over the
// images: the tiled GEMM that the software heuristic picks there (128×128
// blocks, 8×8 outputs per invocation) runs about twice the rate of the
// implicit-GEMM kernel, whose 4×4 per invocation suits GPUs (llvmpipe
// through GLES: 1.15 against 0.55 GFLOPS). The unfolded copy costs one
// streaming pass, small beside the product. A 1×1 window of stride 1 and
// no padding needs no copy: the images are the columns. GPUs keep the
// implicit kernel, which makes no copy, and so do grouped convolutions.

// convImplicitOnly turns the lowering off, so that tests run the
// implicit-GEMM kernel on software adapters too.
var convImplicitOnly atomic.Bool

// convGEMMMinPixels is the fewest output pixels per image that the
// lowering takes: the software GEMM's smallest tile is 32 wide.
const convGEMMMinPixels = 32

// convUnfoldBytes, when positive, caps the unfolded copy below one
// binding, so that tests take several unfolds.
var convUnfoldBytes atomic.Int64

// conv2DViaGEMM records pl as Im2Col and MatMul when the device is a
// software adapter and the shapes allow it, and reports whether it did.
// The MatMul takes part in fusion as a producer, so an epilogue (a bias,
// an activation) still joins it.
func (d *Device) conv2DViaGEMM(pl *conv2dPlan, dst, src, weight hal.View) (bool, error) {
	// The MatMul's columns per image are the output pixels: with fewer
	// than convGEMMMinPixels (a weight gradient's 3×3 "output") its tiles
	// would mostly idle, where the implicit kernel splits K instead.
	if d.hardwareGEMM() || convImplicitOnly.Load() || pl.groups != 1 || pl.k == 0 || pl.l < convGEMMMinPixels ||
		d.supports(hal.KernelMatMul, dst.DType) != nil || d.supports(hal.KernelIm2Col, dst.DType) != nil {
		return false, nil
	}
	w := pl.w
	size := int64(dst.DType.Size())
	out := hal.View{Buf: dst.Buf, DType: dst.DType, Offset: dst.Offset,
		Shape: []int{pl.n, pl.cout, pl.l}, Strides: []int{pl.cout * pl.l, pl.l, 1}}

	// The columns: the images themselves for a pointwise window, else
	// unfolded into scratch, as many images at a time as one binding
	// holds. Decided before the weight is packed, so that a fallback
	// wastes no copy.
	ss := src.Strides
	pointwise := w.KH == 1 && w.KW == 1 && w.StrideH == 1 && w.StrideW == 1 && w.PadH == 0 && w.PadW == 0 &&
		w.OutH == pl.h && w.OutW == pl.wd && ss[2] == pl.wd*ss[3]
	var scratch hal.Buffer
	images := pl.n
	if !pointwise {
		perImage := int64(pl.k) * int64(pl.l) * size
		limit := min(int64(d.limits.MaxStorageBufferBindingSize), int64(d.limits.MaxBufferSize))
		if v := convUnfoldBytes.Load(); v > 0 {
			limit = min(limit, v)
		}
		if perImage > limit {
			return false, nil
		}
		images = int(min(int64(pl.n), limit/perImage))
		var err error
		if scratch, err = d.Alloc(int64(images) * perImage); err != nil {
			return false, nil // no memory for the copy: the implicit kernel needs none
		}
		defer d.Free(scratch) // the fusion engine orders its reuse after the MatMul
	}

	// The weight [cout, C, KH, KW] as [N, cout, K], the same matrix for
	// every image: C, KH and KW must merge into one axis, else a
	// contiguous copy of the weight (small beside the images) is
	// multiplied instead: the data gradient's flipped, channel-swapped
	// weight (tensor's convTransposeByConv) is such a view.
	ws := weight.Strides
	if ws[2] != w.KW*ws[3] || ws[1] != w.KH*ws[2] {
		buf, err := d.Alloc(int64(weight.Elements()) * size)
		if err != nil {
			return false, nil
		}
		defer d.Free(buf)
		packed := hal.Contiguous(buf, weight.DType, weight.Shape...)
		if err := d.Copy(packed, weight); err != nil {
			return true, err
		}
		weight, ws = packed, packed.Strides
	}
	kernel := hal.View{Buf: weight.Buf, DType: weight.DType, Offset: weight.Offset,
		Shape: []int{pl.n, pl.cout, pl.k}, Strides: []int{0, ws[0], ws[3]}}

	if pointwise {
		cols := hal.View{Buf: src.Buf, DType: src.DType, Offset: src.Offset,
			Shape: []int{pl.n, pl.c, pl.l}, Strides: []int{ss[0], ss[1], ss[3]}}
		return true, d.MatMul(out, kernel, cols, 1, 0)
	}
	for n0 := 0; n0 < pl.n; n0 += images {
		b := min(images, pl.n-n0)
		part := src
		part.Offset += n0 * ss[0]
		part.Shape = []int{b, pl.c, pl.h, pl.wd}
		cols := hal.Contiguous(scratch, dst.DType, b, pl.k, pl.l)
		if err := d.Im2Col(cols, part, w); err != nil {
			return true, err
		}
		k, o := kernel, out
		k.Shape = []int{b, pl.cout, pl.k}
		o.Shape = []int{b, pl.cout, pl.l}
		o.Offset += n0 * pl.cout * pl.l
		if err := d.MatMul(o, k, cols, 1, 0); err != nil {
			return true, err
		}
	}
	return true, nil
}
