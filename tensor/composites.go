package tensor

import (
	"math"
	"runtime"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// The compositions of hal's optional tier (see hal.Optional): an op whose
// device does not declare the fused kernel for its dtype runs the same
// function built from required kernels here. The op entries choose: the
// fused kernel where the device declares it, the composition otherwise.
//
// The compositions keep the fused kernels' edge values (NaN stays NaN,
// ±Inf gives the limit) and, where a naive formula would cancel or
// overflow, use the rearrangement the kernels use: Softplus as
// max(z, 0) + ln(1 + e^−|z|), ELU's eˣ − 1 by the Expm1 kernel, the
// sigmoids as 1/(1 + e⁻ˣ), whose e⁻ˣ may overflow to give the right
// limit. GELU's 1 + erf(x/√2) still cancels for x ≪ 0,
// which costs relative accuracy only where the result is below the
// transcendental tolerance's absolute floor. Float16 composes in Float32
// and rounds once, as the kernels compute.

// unaryComposition is one optional unary kernel composed: what it issues
// (kernel keys, at the compute dtype) and how.
type unaryComposition struct {
	uses []string
	run  func(op string, x *Tensor, args hal.Args) *Tensor
}

// unaryCompositions and compositionUses are set by init: the
// compositions call the ops whose capability checks read them.
var (
	unaryCompositions map[hal.UnaryOp]unaryComposition
	compositionUses   map[string][]string
)

func init() {
	unaryCompositions = map[hal.UnaryOp]unaryComposition{
		hal.Sigmoid: {
			uses: []string{hal.Neg.Kernel(), hal.Exp.Kernel(), hal.KernelFill, hal.Add.Kernel(), hal.Reciprocal.Kernel()},
			run: func(op string, x *Tensor, _ hal.Args) *Tensor {
				d := onePlusExpNeg(op, x)
				defer d.Release()
				return unary(op, hal.Reciprocal, d, hal.Args{})
			},
		},
		hal.SiLU: {
			uses: []string{hal.Neg.Kernel(), hal.Exp.Kernel(), hal.KernelFill, hal.Add.Kernel(), hal.Div.Kernel()},
			run: func(op string, x *Tensor, _ hal.Args) *Tensor {
				d := onePlusExpNeg(op, x)
				defer d.Release()
				return binaryOp(op, hal.Div, x, d)
			},
		},
		hal.GELUTanh: {
			// x·σ(2z) = x/(1 + e^−2z), z = √(2/π)·(x + 0.044715x³).
			uses: []string{hal.Square.Kernel(), hal.Mul.Kernel(), hal.KernelFill, hal.Add.Kernel(), hal.Exp.Kernel(), hal.Div.Kernel()},
			run: func(op string, x *Tensor, _ hal.Args) *Tensor {
				var c chain
				defer c.release()
				cube := c.add(binaryOp(op, hal.Mul, c.add(unary(op, hal.Square, x, hal.Args{})), x))
				inner := c.add(binaryOp(op, hal.Add, x, c.add(binaryScalar(op, hal.Mul, cube, 0.044715))))
				minus2z := c.add(binaryScalar(op, hal.Mul, inner, -2*math.Sqrt(2/math.Pi)))
				d := c.add(binaryScalar(op, hal.Add, c.add(unary(op, hal.Exp, minus2z, hal.Args{})), 1))
				return binaryOp(op, hal.Div, x, d)
			},
		},
		hal.GELU: {
			// x/2·(1 + erf(x/√2)).
			uses: []string{hal.KernelFill, hal.Mul.Kernel(), hal.Erf.Kernel(), hal.Add.Kernel()},
			run: func(op string, x *Tensor, _ hal.Args) *Tensor {
				var c chain
				defer c.release()
				erf := c.add(unary(op, hal.Erf, c.add(binaryScalar(op, hal.Mul, x, 1/math.Sqrt2)), hal.Args{}))
				cdf2 := c.add(binaryScalar(op, hal.Add, erf, 1))
				return binaryOp(op, hal.Mul, c.add(binaryScalar(op, hal.Mul, x, 0.5)), cdf2)
			},
		},
		hal.ELU: {
			// x > 0 ? x : alpha·(eˣ − 1), through the Expm1 kernel: no
			// cancellation near 0, and −alpha at −Inf.
			uses: []string{hal.KernelFill, hal.Expm1.Kernel(), hal.Mul.Kernel(), hal.Gt.Kernel(), hal.KernelWhere},
			run: func(op string, x *Tensor, args hal.Args) *Tensor {
				var c chain
				defer c.release()
				neg := c.add(binaryScalar(op, hal.Mul, c.add(unary(op, hal.Expm1, x, hal.Args{})), args.Alpha))
				return where(op, c.add(binaryScalar(op, hal.Gt, x, 0)), x, neg)
			},
		},
		hal.LeakyReLU: {
			uses: []string{hal.KernelFill, hal.Ge.Kernel(), hal.Mul.Kernel(), hal.KernelWhere},
			run: func(op string, x *Tensor, args hal.Args) *Tensor {
				var c chain
				defer c.release()
				return where(op, c.add(binaryScalar(op, hal.Ge, x, 0)), x, c.add(binaryScalar(op, hal.Mul, x, args.Alpha)))
			},
		},
		hal.Softplus: {
			// z = beta·x > threshold ? x : (max(z, 0) + ln(1 + e^−|z|))/beta.
			uses: []string{hal.KernelFill, hal.Mul.Kernel(), hal.Abs.Kernel(), hal.Neg.Kernel(), hal.Exp.Kernel(), hal.Log1p.Kernel(),
				hal.Maximum.Kernel(), hal.Add.Kernel(), hal.Div.Kernel(), hal.Gt.Kernel(), hal.KernelWhere},
			run: func(op string, x *Tensor, args hal.Args) *Tensor {
				beta, threshold := args.Alpha, args.Beta
				var c chain
				defer c.release()
				z := c.add(binaryScalar(op, hal.Mul, x, beta))
				negAbs := c.add(unary(op, hal.Neg, c.add(unary(op, hal.Abs, z, hal.Args{})), hal.Args{}))
				tail := c.add(unary(op, hal.Log1p, c.add(unary(op, hal.Exp, negAbs, hal.Args{})), hal.Args{}))
				sum := c.add(binaryOp(op, hal.Add, c.add(binaryScalar(op, hal.Maximum, z, 0)), tail))
				soft := c.add(binaryScalar(op, hal.Div, sum, beta))
				return where(op, c.add(binaryScalar(op, hal.Gt, z, threshold)), x, soft)
			},
		},
	}
	compositionUses = map[string][]string{
		hal.KernelSoftmax: {hal.Max.Kernel(), hal.LogSumExp.Kernel(), hal.Sub.Kernel(), hal.Exp.Kernel()},
		hal.KernelLayerNorm: {hal.Sum.Kernel(), hal.Div.Kernel(), hal.Sub.Kernel(), hal.Square.Kernel(), hal.Add.Kernel(),
			hal.Rsqrt.Kernel(), hal.Mul.Kernel()},
	}
	for op, c := range unaryCompositions {
		compositionUses[op.Kernel()] = c.uses
	}
	for _, o := range hal.Optimizers {
		compositionUses[o.Kernel()] = stepUses
	}
}

// onePlusExpNeg is 1 + e⁻ˣ, the sigmoids' denominator.
func onePlusExpNeg(op string, x *Tensor) *Tensor {
	var c chain
	defer c.release()
	e := c.add(unary(op, hal.Exp, c.add(unary(op, hal.Neg, x, hal.Args{})), hal.Args{}))
	return binaryScalar(op, hal.Add, e, 1)
}

// composedUnary runs kernel's composition on x, for a device that does
// not declare kernel for x's dtype; a kernel without one is unsupported.
func composedUnary(op string, kernel hal.UnaryOp, x *Tensor, args hal.Args) *Tensor {
	c, ok := unaryCompositions[kernel]
	if !ok {
		panic(unsupported(op, x.dtype, x.dev, kernel.Kernel(), x.dtype))
	}
	return widened(x, func(x *Tensor) *Tensor { return c.run(op, x, args) })
}

// composeType is the dtype a composition computes in for operands of t.
func composeType(t DType) DType {
	if t == Float16 {
		return Float32
	}
	return t
}

// widened runs f on x in its compose type and rounds the result back.
func widened(x *Tensor, f func(*Tensor) *Tensor) *Tensor {
	if composeType(x.dtype) == x.dtype {
		return f(x)
	}
	wide := x.Cast(composeType(x.dtype))
	defer wide.Release()
	y := f(wide)
	defer y.Release()
	return y.Cast(x.dtype)
}

// where is Where's kernel for operands of one shape, for compositions.
func where(op string, cond, a, b *Tensor) *Tensor {
	dev := a.dev
	dev.requireKernel(op, a.dtype, hal.KernelWhere, a.dtype)
	return compute(op, dev, a.dtype, slices.Clone(a.shape), []*Tensor{cond, a, b}, func(dst hal.View) error {
		return dev.hal.Where(dst, cond.view(), a.view(), b.view())
	})
}

// chain holds a composition's intermediate tensors until it is done.
type chain []*Tensor

func (c *chain) add(t *Tensor) *Tensor {
	*c = append(*c, t)
	return t
}

func (c *chain) release() { releaseAll(*c...) }

// stepUses is what a composed update issues, at the compose type.
var stepUses = []string{hal.KernelFill, hal.Mul.Kernel(), hal.Add.Kernel(), hal.Sub.Kernel(), hal.Div.Kernel(),
	hal.Square.Kernel(), hal.Sqrt.Kernel()}

// composedStep runs update o as elementwise ops, in the order of the
// formula hal.Optimizer gives (each rounding where the reference
// haltest.StepReference rounds), and copies the new param and state into
// place. The caller has checked the operands as for the fused kernel;
// grad is contiguous. The error is the first failure, already recorded
// on the device.
func composedStep(op string, o Optimizer, param, grad *Tensor, state []*Tensor, scale *Tensor, a StepArgs) error {
	ct := composeType(param.dtype)
	var c chain
	defer c.release()
	in := func(t *Tensor) *Tensor {
		if t.dtype == ct {
			return c.add(t.alias())
		}
		return c.add(t.Cast(ct))
	}
	mul := func(x, y *Tensor) *Tensor { return c.add(binaryOp(op, hal.Mul, x, y)) }
	add := func(x, y *Tensor) *Tensor { return c.add(binaryOp(op, hal.Add, x, y)) }
	div := func(x, y *Tensor) *Tensor { return c.add(binaryOp(op, hal.Div, x, y)) }
	scaled := func(x *Tensor, s float64) *Tensor { return c.add(binaryScalar(op, hal.Mul, x, s)) }
	plus := func(x *Tensor, s float64) *Tensor { return c.add(binaryScalar(op, hal.Add, x, s)) }
	sqrt := func(x *Tensor) *Tensor { return c.add(unary(op, hal.Sqrt, x, hal.Args{})) }

	p, g := in(param), in(grad)
	s := make([]*Tensor, len(state))
	for i, t := range state {
		s[i] = in(t)
	}
	if scale != nil {
		g = mul(g, c.add(in(scale).Reshape()))
	}
	coupled := func(g *Tensor) *Tensor {
		if a.WeightDecay != 0 {
			return add(scaled(p, a.WeightDecay), g)
		}
		return g
	}
	var next []*Tensor // the new param, then the new state
	switch o {
	case SGD:
		g = coupled(g)
		if a.Momentum != 0 {
			b := g
			if !a.FirstStep {
				b = add(scaled(g, 1-a.Dampening), scaled(s[0], a.Momentum))
			}
			s[0] = b
			if a.Nesterov {
				g = add(scaled(b, a.Momentum), g)
			} else {
				g = b
			}
		}
		next = append([]*Tensor{add(scaled(g, -a.LR), p)}, s...)
	case Adam:
		if a.Decoupled {
			if a.WeightDecay != 0 {
				p = scaled(p, 1-a.LR*a.WeightDecay)
			}
		} else {
			g = coupled(g)
		}
		m := add(scaled(g, 1-a.Beta1), scaled(s[0], a.Beta1))
		v := add(scaled(s[1], a.Beta2), mul(scaled(g, 1-a.Beta2), g))
		denom := plus(c.add(binaryScalar(op, hal.Div, sqrt(v), math.Sqrt(a.BiasCorrection2))), a.Eps)
		next = []*Tensor{add(p, div(scaled(m, -(a.LR/a.BiasCorrection1)), denom)), m, v}
	case RMSProp:
		g = coupled(g)
		v := add(scaled(s[0], a.Alpha), mul(scaled(g, 1-a.Alpha), g))
		s[0] = v
		var avg *Tensor
		if a.Centered {
			k := len(s) - 1
			ga := add(scaled(g, 1-a.Alpha), scaled(s[k], a.Alpha))
			s[k] = ga
			avg = sqrt(c.add(binaryOp(op, hal.Sub, v, c.add(unary(op, hal.Square, ga, hal.Args{})))))
		} else {
			avg = sqrt(v)
		}
		avg = plus(avg, a.Eps)
		if a.Momentum != 0 {
			b := add(scaled(s[1], a.Momentum), div(g, avg))
			s[1] = b
			p = add(scaled(b, -a.LR), p)
		} else {
			p = add(p, div(scaled(g, -a.LR), avg))
		}
		next = append([]*Tensor{p}, s...)
	case Adagrad:
		g = coupled(g)
		sum := add(s[0], c.add(unary(op, hal.Square, g, hal.Args{})))
		next = []*Tensor{add(p, div(scaled(g, -a.LR), plus(sqrt(sum), a.Eps))), sum}
	}

	dev := param.dev
	for i, dst := range append([]*Tensor{param}, state...) {
		src := next[i]
		if src.err != nil {
			return src.err
		}
		err := dev.hal.Copy(dst.view(), src.view())
		runtime.KeepAlive(src)
		if err != nil {
			return dev.fail(op, err)
		}
	}
	return nil
}

// compositionKernels is what the composition of fused kernel k issues
// (nil when k has none), so that the op table counts a device without k
// as running the op when it runs these.
func compositionKernels(k Kernel) []Kernel {
	uses, ok := compositionUses[k.Name]
	if !ok {
		return nil
	}
	ct := composeType(k.DType)
	var out []Kernel
	if ct != k.DType {
		out = append(out, Kernel{hal.KernelCopy, k.DType}, Kernel{hal.KernelCopy, ct})
	}
	for _, u := range uses {
		out = append(out, Kernel{u, ct})
	}
	return out
}

// composable reports whether caps runs the composition of the fused
// kernel k.
func composable(caps hal.Capabilities, k Kernel) bool {
	uses := compositionKernels(k)
	if uses == nil {
		return false
	}
	for _, u := range uses {
		if !caps.Supports(u.Name, u.DType) {
			return false
		}
	}
	return true
}
