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
// spatial axis is one Resample kernel, a sparse matrix of 1 (nearest), 2
// (linear) or 4 (cubic) taps per output position computed on the host
// (O(output size) values uploaded per axis). Float16 computes in Float32.
// Bad arguments panic with an *Error naming the input's shape, dtype and
// device.
func Interpolate(x *Tensor, o InterpolateOptions) *Tensor {
	const op = "Interpolate"
	x.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(x), func() *Tensor {
		checkOp(op, x.dev, x.dtype) // float dtypes only: ErrUnsupported for the others
		axes := resolveInterpolate(op, x, x.shape, o)
		return inFloat32(x, func(x *Tensor) *Tensor {
			out := x.alias()
			for i, a := range axes {
				next := resampleAlong(op, out, 2+i, resample.Compute(a).Forward())
				out.Release()
				out = next
			}
			return out
		})
	}, &x)
}

// InterpolateBackward is the gradient of Interpolate with respect to its
// input of shape inputShape, given grad, the gradient of its output (as
// PyTorch's upsample_*_backward): the same taps transposed, applied per
// axis in gather form (each input position sums the outputs that read it),
// so no atomics and no scatter. Float16 computes in Float32.
func InterpolateBackward(grad *Tensor, inputShape []int, o InterpolateOptions) *Tensor {
	const op = "InterpolateBackward"
	grad.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(grad), func() *Tensor {
		checkOp(op, grad.dev, grad.dtype)
		axes := resolveInterpolate(op, grad, inputShape, o)
		want := slices.Clone(inputShape)
		for i, a := range axes {
			want[2+i] = a.Out
		}
		if !slices.Equal(grad.shape, want) {
			misuse(op, "grad %v %v on %s must have the output shape %v of input %v", grad.shape, grad.dtype, grad.dev.Name(), want, inputShape)
		}
		return inFloat32(grad, func(g *Tensor) *Tensor {
			out := g.alias()
			for i := len(axes) - 1; i >= 0; i-- {
				a := axes[i]
				next := resampleAlong(op, out, 2+i, resample.Compute(a).Transposed(a.In))
				out.Release()
				out = next
			}
			return out
		})
	}, &grad)
}

// resolveInterpolate is resample.Resolve for an input of shape, its
// failure a misuse of op naming t.
func resolveInterpolate(op string, t *Tensor, shape []int, o InterpolateOptions) []resample.Axis {
	axes, err := resample.Resolve(shape, o.Size, o.ScaleFactor, string(o.Mode), o.AlignCorners, o.RecomputeScaleFactor, t.dtype == Float64)
	if err != nil {
		misuse(op, "%v (input %v %v on %s)", err, shape, t.dtype, t.dev.Name())
	}
	return axes
}

// resampleAlong applies taps along axis of x with the Resample kernel: one
// call, or, for a table whose rows exceed hal.MaxResampleRow (the gradient
// of an upsampling by thousands), one call per part and their sum.
func resampleAlong(op string, x *Tensor, axis int, taps hal.ResampleTaps) *Tensor {
	shape := slices.Clone(x.shape)
	shape[axis] = taps.Rows()
	var sum *Tensor
	for _, part := range resample.Split(taps, hal.MaxResampleRow) {
		t := compute(op, x.dev, x.dtype, shape, []*Tensor{x}, func(dst hal.View) error {
			return x.dev.hal.Resample(dst, x.view(), axis, part)
		})
		if sum == nil {
			sum = t
			continue
		}
		next := binaryOp(op, hal.Add, sum, t)
		releaseAll(sum, t)
		sum = next
	}
	return sum
}

func interpolateKernels(t DType) []Kernel {
	c := statType(t)
	return append(kernels(k(hal.KernelResample, c), k(hal.Add.Kernel(), c)), statCasts(t)...)
}

var _ = registerOps(
	Op{Name: "Interpolate", Family: FamilyNN, DTypes: floatTypes, Kernels: interpolateKernels},
	Op{Name: "InterpolateBackward", Family: FamilyNN, DTypes: floatTypes, Kernels: interpolateKernels},
)
