package hal

// The kernels come in two tiers.
//
// The required tier is every kernel of Kernels that is not optional:
// Fill, Random, Copy, the unary kernels other than the activations below,
// Binary, Where, Reduce, MatMul, Gather, ScatterAdd, Im2Col, Col2Im,
// Pool2D and GridSample. Package tensor builds every operation from them:
// a backend declares each of them for Float32, which every device runs,
// and for the other dtypes it holds as far as the kernel table's DTypes
// allow (kerneltable.go); an operation whose kernels a device lacks for a
// dtype is unsupported there (tensor.Supports says so beforehand).
//
// The optional tier is fused kernels, marked Optional in the kernel table:
// each computes what package tensor can also compose from required
// kernels, and a backend declares one only where it runs it faster than
// the composition. Where a device does not
// declare one for a dtype, tensor runs the composition instead, so that
// omitting the tier costs speed, never an operation:
//
//   - unary.sigmoid, unary.silu, unary.gelu_tanh: from exp, add and a
//     division, as 1/(1+e⁻ˣ) and its multiples (GELUTanh is x·σ(2z));
//   - unary.gelu: x/2·(1 + erf(x/√2)) from erf;
//   - unary.elu: eˣ − 1 as 2t/(1 − t) with t = tanh(x/2), which keeps its
//     relative accuracy near 0, selected by where;
//   - unary.leaky_relu: where(x ≥ 0, x, alpha·x);
//   - unary.softplus: max(z, 0) + ln(1 + e^−|z|) with z = beta·x, from
//     exp and log1p, selected by where past the threshold;
//   - softmax: y = x − max(x), then y − logsumexp(y) and an exp;
//   - layer_norm: the row mean, a subtraction, the mean of the squares,
//     an addition of eps, rsqrt and a multiplication;
//   - conv2d: im2col and a matmul;
//   - step.*: the update's formula (see Optimizer) as elementwise kernels,
//     written back into the parameter and state with Copy;
//   - linalg.*: none. They are optional because a GPU need not run them
//     (small sequential factorizations), not because tensor composes
//     them: a device without them runs no linalg op, and tensor routes
//     the ops to the CPU backend under the placement policies that move
//     operands (see LinalgOp).
//
// Except for Conv2D's, the compositions of Float16 compute in Float32 and
// round once, as the fused kernels do. The conformance suite (package haltest) tests an optional
// kernel where a device declares it and expects ErrUnsupported where it
// does not, like any other kernel; its RequiredOnly hides a device's
// optional tier, which is how the compositions are tested against the
// fused kernels.

// Optional reports whether kernel (a key of Capabilities) is in the
// optional tier: a fused kernel that a backend may leave undeclared. The
// kernel table's entries say it (KernelInfo.Optional).
func Optional(kernel string) bool {
	k, _ := LookupKernel(kernel)
	return k.Optional
}
