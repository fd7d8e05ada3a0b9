package tensor

import "github.com/webtensor/webtensor/hal"

// ResampleAlong applies taps, a sparse matrix of (input position, weight)
// entries per output position, along axis of x: output position j on that
// axis is Σ Weight[e]·x[…, Index[e], …] over row j's entries, and the
// axis's size becomes taps.Rows(). It is the Resample kernel that
// Interpolate runs, for callers whose source coordinates differ from
// PyTorch's (ONNX Resize's asymmetric linear, or its rounding modes for
// nearest), so they compute the taps on the host and still run one
// kernel per axis rather than gathers and blends. Float16 computes in
// Float32. A malformed table, an index outside the axis or a bad axis
// panics with an *Error naming x's shape, dtype and device.
func ResampleAlong(x *Tensor, axis int, taps hal.ResampleTaps) *Tensor {
	const op = "ResampleAlong"
	x.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(x), func() *Tensor {
		checkOp(op, x.dev, x.dtype)
		if axis < 0 || axis >= len(x.shape) {
			misuse(op, "axis %d is out of range for input %v %v on %s", axis, x.shape, x.dtype, x.dev.Name())
		}
		if err := taps.Check(op, x.shape[axis]); err != nil {
			misuse(op, "%v (input %v %v on %s)", err, x.shape, x.dtype, x.dev.Name())
		}
		return inFloat32(x, func(x *Tensor) *Tensor { return resampleAlong(op, x, axis, taps) })
	}, &x)
}

var _ = registerOps(Op{Name: "ResampleAlong", Family: FamilyNN, DTypes: floatTypes, Kernels: interpolateKernels})
