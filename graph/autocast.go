package graph

import (
	"github.com/webtensor/webtensor/tensor"
)

// Autocast makes a scope run its members' computations in mixed
// precision, as torch.autocast: the operations that gain from float16 and
// keep its accuracy (matrix products and convolutions) cast their
// float32 operands to float16 where the device runs that operation in
// float16 (a WebGPU adapter with shader-f16, such as lavapipe), and stay
// in float32 elsewhere (the CPU backend, llvmpipe); the operations that
// need float32's range or precision (reductions, norms, softmax, exp and
// log, so the losses built from them) cast float16 operands up to
// float32. Operations on two floating operands of different widths
// compute in the wider, as PyTorch's type promotion does: a float16
// product plus a float32 bias is float32. Everything else runs in the
// dtype it is given.
//
//	s := graph.NewScope(graph.Autocast)
//	defer s.Close()
//	logits := model.Forward(s.Use(graph.Constant(batch))) // float16 where the device runs it
//	loss := nn.CrossEntropy(logits, labels, 0)             // float32
//
// Which operations cast:
//
//   - to float16 (only float32 operands, only where the device declares
//     the operation and Cast in float16): MatMul (and so MatVec, Outer,
//     the attention products), Gemm (Linear), Conv2d, ConvTranspose2d;
//   - to float32 (float16 operands): Softmax, LogSoftmax, LogSumExp, Sum
//     and Prod (so Mean, Var, Std and the losses' reductions), LayerNorm,
//     BatchNorm, Exp, Expm1, Log, Log1p, Pow, PowScalar, Reciprocal, Rsqrt,
//     Tan, Softplus, Cumsum, Cumprod, LogCumSumExp, and the linear
//     algebra (Solve, Inv, Cholesky, QR, SVD, SVDVals, Eigh, EigvalsH),
//     which has no float16 kernels;
//   - to the wider of their floating operands: the elementwise binary
//     operations, Where, Concat and Stack.
//
// The casts are recorded operations, so gradients flow back through them
// and arrive at float32 parameters (master weights) in float32; the
// backward pass runs each operation's gradient in the dtype its forward
// ran in, as PyTorch's. Float64 operands are never cast (PyTorch's
// autocast leaves them alone too). As PyTorch's cast cache, the float16
// copy of a parameter (a leaf that requires a gradient) is made once per
// scope and reused by every product that reads it until Close (a
// recurrent layer's weights, read at every time step; tied embeddings):
// one cast and one gradient flowing back through it.
//
// Autocast combines with NoGrad (NewScope(NoGrad, Autocast)) for mixed-
// precision inference. Like every scope mode it follows the data: an
// operation runs in mixed precision when one of its operands is a member
// of an autocast scope.
const Autocast ScopeOption = 2

// IsAutocast reports whether s was made with the Autocast option.
func (s *Scope) IsAutocast() bool { return s.autocast }

// inAutocast reports whether any of xs belongs to an autocast scope.
func inAutocast(xs ...*Value) bool {
	for _, x := range xs {
		if x != nil {
			if s := x.scope.Load(); s != nil && s.autocast {
				return true
			}
		}
	}
	return false
}

// autocastFloat32Ops are the operations that run in float32 under
// autocast: PyTorch's autocast_to_fp32 list, as far as this package has
// them.
var autocastFloat32Ops = map[string]bool{
	"Softmax": true, "LogSoftmax": true, "LogSumExp": true, "Sum": true, "Prod": true,
	"LayerNorm": true, "BatchNorm": true, "Exp": true, "Expm1": true, "Log": true,
	"Log1p": true, "Pow": true, "PowScalar": true, "Reciprocal": true, "Rsqrt": true,
	"Tan": true, "Softplus": true, "Cumsum": true, "Cumprod": true, "LogCumSumExp": true,
	// Linear algebra has no float16 kernels: a float16 operand is cast up.
	"Solve": true, "Inv": true, "Cholesky": true, "QR": true, "SVD": true, "SVDVals": true,
	"Eigh": true, "EigvalsH": true,
}

// autocast returns the operands op computes with under autocast and a
// function releasing the casts it made; xs themselves when no operand is
// in an autocast scope or nothing needs a cast.
func autocast(op string, xs ...*Value) ([]*Value, func()) {
	if !inAutocast(xs...) {
		return xs, func() {}
	}
	switch op {
	case "MatMul", "Gemm", "Conv2d", "ConvTranspose2d":
		var dev *tensor.Device
		for _, x := range xs {
			if x != nil {
				dev = x.t.Device()
				break
			}
		}
		if dev == nil || !tensor.Supports(dev, op, tensor.Float16) || !tensor.Supports(dev, "Cast", tensor.Float16) {
			return xs, func() {}
		}
		return castOperands(xs, func(d tensor.DType) bool { return d == tensor.Float32 }, tensor.Float16)
	}
	if autocastFloat32Ops[op] {
		return castOperands(xs, func(d tensor.DType) bool { return d == tensor.Float16 }, tensor.Float32)
	}
	// Promotion: the widest floating dtype among the operands.
	widest := tensor.DType(0)
	found := false
	for _, x := range xs {
		if x != nil && x.t.DType().IsFloat() {
			d := x.t.DType()
			if !found || d.Size() > widest.Size() {
				widest, found = d, true
			}
		}
	}
	if !found {
		return xs, func() {}
	}
	return castOperands(xs, func(d tensor.DType) bool { return d.IsFloat() && d != widest }, widest)
}

// castKey identifies a cached cast: the parameter, its tensor (which
// SetTensor may replace) and the dtype.
type castKey struct {
	x     *Value
	t     *tensor.Tensor
	dtype tensor.DType
}

// autocastScope returns the first autocast scope among xs' scopes.
func autocastScope(xs []*Value) *Scope {
	for _, x := range xs {
		if x != nil {
			if s := x.scope.Load(); s != nil && s.autocast {
				return s
			}
		}
	}
	return nil
}

// cachedCast returns x cast to dtype, made once per scope: the cast is a
// member of s, released by Close.
func (s *Scope) cachedCast(x *Value, dtype tensor.DType) *Value {
	k := castKey{x, x.t, dtype}
	s.mu.Lock()
	c := s.casts[k]
	s.mu.Unlock()
	// A backward pass that went through the cast freed its node: the
	// next product casts afresh (as it would without a cache).
	if c != nil && !c.released.Load() && (c.v == nil || c.v.node == nil || !c.v.node.isFreed()) {
		return c
	}
	c = x.Cast(dtype)
	if !s.add(c) {
		return c // closed meanwhile: the caller's op owns nothing more
	}
	s.mu.Lock()
	if s.casts == nil {
		s.casts = map[castKey]*Value{}
	}
	s.casts[k] = c
	s.mu.Unlock()
	return c
}

// castOperands casts the operands whose dtype matches to dtype. A
// parameter's cast to float16 comes from the autocast scope's cache.
func castOperands(xs []*Value, match func(tensor.DType) bool, dtype tensor.DType) ([]*Value, func()) {
	var casts []*Value
	out, copied := xs, false
	for i, x := range xs {
		if x == nil || !match(x.t.DType()) {
			continue
		}
		if !copied {
			out, copied = append([]*Value(nil), xs...), true
		}
		if dtype == tensor.Float16 && x.v != nil && x.v.node == nil && x.scope.Load() == nil {
			if s := autocastScope(xs); s != nil {
				out[i] = s.cachedCast(x, dtype)
				continue
			}
		}
		c := x.Cast(dtype)
		casts = append(casts, c)
		out[i] = c
	}
	return out, func() {
		for _, c := range casts {
			c.Release()
		}
	}
}
