package tensor

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// publicBinary is the entry of the public binary ops: misuse checks, then the
// op table's capability check, then the kernel.
func publicBinary(op string, kernel hal.BinaryOp, a, b *Tensor) *Tensor {
	return routed(op, familyElementwise, elementwiseSize(a, b), func() *Tensor {
		dev := sameDevice(op, a, b)
		sameDType(op, a, b)
		broadcastShapes(op, a.shape, b.shape)
		checkOp(op, dev, a.dtype)
		return binaryOp(op, kernel, a, b)
	}, &a, &b)
}

// binaryOp runs an elementwise kernel of two inputs under NumPy
// broadcasting. Both operands must share a dtype; Int32 Div promotes both
// to Float32 (true division, as torch), comparisons give an Int32 mask.
func binaryOp(op string, kernel hal.BinaryOp, a, b *Tensor) *Tensor {
	dev := sameDevice(op, a, b)
	sameDType(op, a, b)
	shape := broadcastShapes(op, a.shape, b.shape)
	if kernel == hal.Div && a.dtype.IsInteger() {
		fa, fb := a.Cast(Float32), b.Cast(Float32)
		defer releaseAll(fa, fb)
		return binaryOp(op, kernel, fa, fb)
	}
	dev.requireKernel(op, a.dtype, kernel.Kernel(), a.dtype)
	result := a.dtype
	if kernel.IsComparison() {
		result = Int32
	}
	return compute(op, dev, result, shape, []*Tensor{a, b}, func(dst hal.View) error {
		return dev.hal.Binary(kernel, dst, a.expanded(shape), b.expanded(shape))
	})
}

// binaryScalar runs a binary kernel against a scalar of a's dtype,
// broadcast over a. Int32 Div divides in Float32, so the scalar keeps its
// fraction there.
func binaryScalar(op string, kernel hal.BinaryOp, a *Tensor, s float64) *Tensor {
	a.checkLive(op)
	x := a
	if kernel == hal.Div && a.dtype.IsInteger() {
		x = a.Cast(Float32)
		defer x.Release()
	}
	x.dev.requireKernel(op, a.dtype, kernel.Kernel(), x.dtype)
	sc := full(op, x.dev, x.dtype, s, nil)
	defer sc.Release()
	return binaryOp(op, kernel, x, sc)
}

// publicScalar is the entry of the public scalar ops.
func publicScalar(op string, kernel hal.BinaryOp, a *Tensor, s float64) *Tensor {
	a.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(a), func() *Tensor {
		checkOp(op, a.dev, a.dtype)
		return binaryScalar(op, kernel, a, s)
	}, &a)
}

// intPromoted lists the unary functions whose Int32 form computes in
// Float32, as torch does for sqrt, exp and friends, and intUnary those
// that keep Int32: hal's op table says which (the other unary ops refuse
// Int32).
var intPromoted, intUnary = unaryInt32Rules()

func unaryInt32Rules() (promoted, native map[hal.UnaryOp]bool) {
	promoted, native = make(map[hal.UnaryOp]bool), make(map[hal.UnaryOp]bool)
	for _, op := range hal.UnaryOps {
		promoted[op] = op.Info().Int32 == hal.Int32Promotes
		native[op] = op.RunsInt32()
	}
	return promoted, native
}

// unary runs an elementwise kernel of one input.
func unary(op string, kernel hal.UnaryOp, x *Tensor, args hal.Args) *Tensor {
	x.checkLive(op)
	if x.dtype.IsInteger() && intPromoted[kernel] {
		f := x.Cast(Float32)
		defer f.Release()
		return unary(op, kernel, f, args)
	}
	if !x.dev.caps().Supports(kernel.Kernel(), x.dtype) {
		return composedUnary(op, kernel, x, args) // see composites.go
	}
	return compute(op, x.dev, x.dtype, x.shape, []*Tensor{x}, func(dst hal.View) error {
		return x.dev.hal.Unary(kernel, dst, x.view(), args)
	})
}

// publicUnary is the entry of the public unary ops.
func publicUnary(op string, kernel hal.UnaryOp, x *Tensor, args hal.Args) *Tensor {
	x.checkLive(op)
	return routed(op, familyElementwise, elementwiseSize(x), func() *Tensor {
		checkOp(op, x.dev, x.dtype)
		return unary(op, kernel, x, args)
	}, &x)
}

func (t *Tensor) unary(op string, kernel hal.UnaryOp) *Tensor {
	return publicUnary(op, kernel, t, hal.Args{})
}

// LeakyReLU returns x ≥ 0 ? x : alpha·x elementwise.
func LeakyReLU(x *Tensor, alpha float64) *Tensor {
	return publicUnary("LeakyReLU", hal.LeakyReLU, x, hal.Args{Alpha: alpha})
}

// ELU returns x > 0 ? x : alpha·(eˣ−1) elementwise.
func ELU(x *Tensor, alpha float64) *Tensor {
	return publicUnary("ELU", hal.ELU, x, hal.Args{Alpha: alpha})
}

// Softplus returns ln(1+e^(beta·x))/beta elementwise, or x where
// beta·x > threshold, as torch.nn.functional.softplus (beta 1, threshold
// 20 by default there).
func Softplus(x *Tensor, beta, threshold float64) *Tensor {
	return publicUnary("Softplus", hal.Softplus, x, hal.Args{Alpha: beta, Beta: threshold})
}

// Clamp returns min(max(x, lo), hi) elementwise; pass math.Inf(-1) or
// math.Inf(1) to leave a side open. NaN stays NaN. On Int32 tensors the
// bounds round inwards to integers, so Clamp(x, 0.5, 2.5) keeps 1 … 2.
func Clamp(x *Tensor, lo, hi float64) *Tensor {
	const op = "Clamp"
	x.checkLive(op)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		misuse(op, "NaN bound (lo %v, hi %v)", lo, hi)
	}
	switch x.dtype {
	case Int32:
		lo = math.Max(math.Ceil(lo), math.MinInt32)
		hi = math.Min(math.Floor(hi), math.MaxInt32)
	case Int64:
		lo = math.Max(math.Ceil(lo), math.MinInt64)
		hi = math.Min(math.Floor(hi), math.MaxInt64)
	}
	return publicUnary(op, hal.Clamp, x, hal.Args{Alpha: lo, Beta: hi})
}

// Where returns cond ≠ 0 ? a : b elementwise, broadcasting all three as
// NumPy. cond is an Int32 mask (as the comparisons produce); a and b share
// a dtype, which the result has.
func Where(cond, a, b *Tensor) *Tensor {
	const op = "Where"
	return routed(op, familyElementwise, elementwiseSize(cond, a, b), func() *Tensor {
		dev := sameDevice(op, cond, a, b)
		if cond.dtype != Int32 {
			misuse(op, "condition must be int32 (a mask), got %v", cond.dtype)
		}
		sameDType(op, a, b)
		shape := broadcastShapes(op, cond.shape, a.shape, b.shape)
		checkOp(op, dev, a.dtype)
		dev.requireKernel(op, a.dtype, hal.KernelWhere, a.dtype)
		return compute(op, dev, a.dtype, shape, []*Tensor{cond, a, b}, func(dst hal.View) error {
			return dev.hal.Where(dst, cond.expanded(shape), a.expanded(shape), b.expanded(shape))
		})
	}, &cond, &a, &b)
}

// Cast returns t converted to dtype: floats to Int32 truncate toward zero
// and saturate, NaN becomes 0. Casting to t's own dtype returns a new
// reference to t's data (release it as any tensor), as torch's .to does.
func (t *Tensor) Cast(dtype DType) *Tensor {
	const op = "Cast"
	t.checkLive(op)
	if !dtype.Valid() {
		misuse(op, "invalid dtype %v", dtype)
	}
	if dtype == t.dtype {
		return t.alias()
	}
	checkOp(op, t.dev, t.dtype)
	t.dev.requireKernel(op, dtype, hal.KernelCopy, dtype)
	return compute(op, t.dev, dtype, t.shape, []*Tensor{t}, func(dst hal.View) error {
		return t.dev.hal.Copy(dst, t.view())
	})
}

// Contiguous returns t densely packed in row-major order: t itself (a new
// reference) when it already is, else a copy made by one strided-copy
// kernel.
func (t *Tensor) Contiguous() *Tensor {
	const op = "Contiguous"
	t.checkLive(op)
	checkOp(op, t.dev, t.dtype)
	if t.IsContiguous() {
		return t.alias()
	}
	return t.copy(op)
}

// copy returns a contiguous copy of t that owns its buffer.
func (t *Tensor) copy(op string) *Tensor {
	t.dev.requireKernel(op, t.dtype, hal.KernelCopy, t.dtype)
	return compute(op, t.dev, t.dtype, slices.Clone(t.shape), []*Tensor{t}, func(dst hal.View) error {
		return t.dev.hal.Copy(dst, t.view())
	})
}

var _ = registerOps(elementwiseOps()...)

// elementwiseOps is the op listing's part for this file: the elementwise
// ops come from hal's op table, each binary one with its Scalar form.
func elementwiseOps() []Op {
	var ops []Op
	for _, kernel := range hal.BinaryOps {
		info := kernel.Info()
		dtypes := allTypes
		if info.Int32 == hal.Int32Refused {
			dtypes = floatTypes
		}
		ops = append(ops, Op{Name: info.Name, Family: FamilyBinary, DTypes: dtypes, Kernels: binaryKernels(kernel, false)})
		ops = append(ops, Op{Name: info.Name + "Scalar", Family: FamilyScalar, DTypes: dtypes, Kernels: binaryKernels(kernel, true)})
	}
	for _, kernel := range hal.UnaryOps {
		info := kernel.Info()
		dtypes := floatTypes
		if info.Int32 != hal.Int32Refused {
			dtypes = allTypes
		}
		ops = append(ops, Op{Name: info.Name, Family: FamilyUnary, DTypes: dtypes, Kernels: func(t DType) []Kernel {
			if t.IsInteger() && intPromoted[kernel] {
				return kernels(k(hal.KernelCopy, Float32), k(kernel.Kernel(), Float32))
			}
			return kernels(k(kernel.Kernel(), t))
		}})
	}
	return append(ops,
		Op{Name: "Where", Family: FamilyUnary, DTypes: allTypes, Kernels: func(t DType) []Kernel {
			return kernels(k(hal.KernelWhere, t))
		}},
		Op{Name: "Cast", Family: FamilyUnary, DTypes: allTypes, Kernels: none},
		Op{Name: "Contiguous", Family: FamilyShape, DTypes: allTypes, Kernels: none},
	)
}

// binaryKernels is what a binary op (or its scalar form, which fills a
// scalar first) runs: Int32 Div casts both sides to Float32.
func binaryKernels(kernel hal.BinaryOp, withScalar bool) func(DType) []Kernel {
	return func(t DType) []Kernel {
		ct := t
		var ks []Kernel
		if kernel == hal.Div && t.IsInteger() {
			ct = Float32
			ks = append(ks, k(hal.KernelCopy, Float32))
		}
		if withScalar {
			ks = append(ks, k(hal.KernelFill, ct))
		}
		return append(ks, k(kernel.Kernel(), ct))
	}
}
