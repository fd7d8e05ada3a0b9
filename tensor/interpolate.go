package tensor

import (
	"slices"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/resample"
)

// InterpolateMode names an interpolation kernel by PyTorch's mode string.
type InterpolateMode string

// The modes of Interpolate, with the input rank each takes.
const (
	InterpolateNearest   InterpolateMode = "nearest"   // [N, C, L], [N, C, H, W] or [N, C, D, H, W]
	InterpolateLinear    InterpolateMode = "linear"    // [N, C, L]
	InterpolateBilinear  InterpolateMode = "bilinear"  // [N, C, H, W]
	InterpolateBicubic   InterpolateMode = "bicubic"   // [N, C, H, W]
	InterpolateTrilinear InterpolateMode = "trilinear" // [N, C, D, H, W]
)

// InterpolateOptions are torch.nn.functional.interpolate's arguments.
// Exactly one of Size and ScaleFactor is set, each with one value per
// spatial axis or one value for all of them.
type InterpolateOptions struct {
	Size        []int
	ScaleFactor []float64
	Mode        InterpolateMode
	// AlignCorners maps the corner pixels' centres onto each other
	// (linear modes only); otherwise the images' outer edges align.
	AlignCorners bool
	// RecomputeScaleFactor uses in/out for the source coordinates instead
	// of 1/ScaleFactor (PyTorch's recompute_scale_factor=True).
	RecomputeScaleFactor bool
}

// Interpolate resizes x [N, C, spatial…], as torch.nn.functional.interpolate
// in PyTorch 1.13: the output size is Size, or ⌊in·scale⌋ per axis, and
// the source coordinates follow PyTorch's formulas exactly ("nearest" is
// its legacy floor(dst·scale); with a ScaleFactor the coordinate uses
// 1/scale unless RecomputeScaleFactor; "bicubic" is Keys' kernel with
// A = −0.75, clamped at the border). The resampling is separable: each
// spatial axis is one Gather per tap (1 nearest, 2 linear, 4 cubic) and a
// weighted sum, with the taps computed on the host (O(output size) values
// uploaded per axis). Float16 computes in Float32. Bad arguments panic
// with an *Error naming the input's shape, dtype and device.
func Interpolate(x *Tensor, o InterpolateOptions) *Tensor {
	const op = "Interpolate"
	x.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(x), func() *Tensor {
		checkOp(op, x.dev, x.dtype) // float dtypes only: ErrUnsupported for the others
		axes, err := resample.Resolve(x.shape, o.Size, o.ScaleFactor, string(o.Mode), o.AlignCorners, o.RecomputeScaleFactor, x.dtype == Float64)
		if err != nil {
			misuse(op, "%v (input %v %v on %s)", err, x.shape, x.dtype, x.dev.Name())
		}
		return inFloat32(x, func(x *Tensor) *Tensor {
			out := x.alias()
			for i, a := range axes {
				next := resampleAxis(op, out, 2+i, resample.Compute(a))
				out.Release()
				out = next
			}
			return out
		})
	}, &x)
}

// resampleAxis is Σₖ weightₖ · x.IndexSelect(axis, indexₖ) with the weights
// broadcast along axis.
func resampleAxis(op string, x *Tensor, axis int, taps resample.Taps) *Tensor {
	n := len(taps.Index[0])
	wshape := make([]int, len(x.shape)-axis)
	for i := range wshape {
		wshape[i] = 1
	}
	wshape[0] = n
	var sum *Tensor
	for k := range taps.Index {
		idx := fromHost("FromInt32", x.dev, Int32, sliceBytes(taps.Index[k]), n, []int{n})
		g := x.indexSelect(op, axis, idx)
		idx.Release()
		if allOnes(taps.Weight[k]) {
			sum = g
			continue
		}
		w := hostFloats(op, x.dev, x.dtype, taps.Weight[k], wshape)
		term := binaryOp(op, hal.Mul, g, w)
		releaseAll(g, w)
		if sum == nil {
			sum = term
			continue
		}
		next := binaryOp(op, hal.Add, sum, term)
		releaseAll(sum, term)
		sum = next
	}
	return sum
}

func allOnes(w []float64) bool {
	return !slices.ContainsFunc(w, func(v float64) bool { return v != 1 })
}

// hostFloats uploads values as a Float32 or Float64 tensor of shape,
// without placement (the caller's operands are placed already).
func hostFloats(op string, dev *Device, dtype DType, values []float64, shape []int) *Tensor {
	if dtype == Float64 {
		return fromHost("FromFloat64", dev, Float64, sliceBytes(values), len(values), shape)
	}
	f := make([]float32, len(values))
	for i, v := range values {
		f[i] = float32(v)
	}
	return fromHost("FromFloat32", dev, Float32, sliceBytes(f), len(f), shape)
}

var _ = registerOps(
	Op{Name: "Interpolate", Family: FamilyNN, DTypes: floatTypes, Kernels: func(t DType) []Kernel {
		c := statType(t)
		return append(kernels(k(hal.KernelGather, c), k(hal.Mul.Kernel(), c), k(hal.Add.Kernel(), c)), statCasts(t)...)
	}},
)
