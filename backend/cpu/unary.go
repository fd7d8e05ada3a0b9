package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// Unary computes dst = op(src, args) elementwise. float16 is computed in
// float32; float32 transcendentals are evaluated in float64 and rounded
// once, so they are nearly always correctly rounded (Erf, a rational fit
// for float32, is within 2 ulp).
func (d *Device) Unary(op hal.UnaryOp, dst, src hal.View, args hal.Args) error {
	name := "unary " + op.String()
	o, err := d.operands(name, "dst src", dst, src)
	if err != nil {
		return err
	}
	out, in := o[0], o[1]
	if !d.caps.Supports(op.Kernel(), in.DType) {
		return unsupportedDType(name, in.DType)
	}
	if err := needDType(name, "dst", out, in.DType); err != nil {
		return err
	}
	if err := needShape(name, "src", in, out.Shape); err != nil {
		return err
	}
	if err := needContiguous(name, "dst", out); err != nil {
		return err
	}
	if err := needInPlace(name, out, in); err != nil {
		return err
	}
	d.dispatch()
	ins := []operand{in}
	grain := mathGrain
	switch op {
	case hal.Neg, hal.Abs, hal.Sign, hal.Square, hal.ReLU, hal.Clamp, hal.LeakyReLU, hal.Reciprocal:
		grain = elementGrain
	}
	switch in.DType {
	case hal.Float32, hal.Float16:
		if op == hal.ReLU {
			elementwise(out, ins, grain, func(out, x, _, _ []float32) { reluF32(out, x) })
			return nil
		}
		elementwise(out, ins, grain, unaryFloat[float32](op, args))
	case hal.Float64:
		elementwise(out, ins, grain, unaryFloat[float64](op, args))
	case hal.Int32:
		elementwise(out, ins, grain, unaryInt[int32](op, args, toInt32))
	case hal.Int64:
		elementwise(out, ins, grain, unaryInt[int64](op, args, toInt64))
	}
	return nil
}

// unaryFloat returns the kernel of op for float32 or float64. Cheap ops
// are written out as loops in T; the rest map a float64 function.
func unaryFloat[T float32 | float64](op hal.UnaryOp, args hal.Args) kernel[T, T] {
	switch op {
	case hal.Neg:
		return func(out, x, _, _ []T) {
			for i, v := range x[:len(out)] {
				out[i] = -v
			}
		}
	case hal.Abs:
		return mapT(func(v T) T { return T(math.Abs(float64(v))) })
	case hal.Sign:
		return mapT(func(v T) T {
			switch {
			case v > 0:
				return 1
			case v < 0:
				return -1
			}
			return v // ±0 and NaN stay
		})
	case hal.Reciprocal:
		return mapT(func(v T) T { return 1 / v })
	case hal.Square:
		return func(out, x, _, _ []T) {
			for i, v := range x[:len(out)] {
				out[i] = v * v
			}
		}
	case hal.ReLU:
		// The builtin compiles without a data-dependent branch, keeps NaN
		// and maps −0 to +0.
		return func(out, x, _, _ []T) {
			for i, v := range x[:len(out)] {
				out[i] = max(v, 0)
			}
		}
	case hal.Clamp:
		// A loop of its own, not mapT: the call per element through
		// mapT's function value made MobileNet's ReLU6 (Clip) about
		// twice as slow (BenchmarkUnaryFastPaths).
		lo, hi := T(args.Alpha), T(args.Beta)
		return func(out, x, _, _ []T) {
			// The builtins, not comparisons: they compile without a
			// data-dependent branch, which ReLU6's inputs (half below
			// 0) would mispredict.
			for i, v := range x[:len(out)] {
				out[i] = min(max(v, lo), hi)
			}
		}
	case hal.LeakyReLU:
		return mapF64[T](func(v float64) float64 {
			if v >= 0 {
				return v
			}
			return args.Alpha * v
		})
	case hal.Sqrt:
		return mapF64[T](math.Sqrt)
	case hal.Rsqrt:
		return mapF64[T](func(v float64) float64 { return 1 / math.Sqrt(v) })
	case hal.Exp:
		return mapF64[T](math.Exp)
	case hal.Expm1:
		return mapF64[T](math.Expm1)
	case hal.Log:
		return mapF64[T](math.Log)
	case hal.Log1p:
		return mapF64[T](math.Log1p)
	case hal.Sin:
		return mapF64[T](math.Sin)
	case hal.Cos:
		return mapF64[T](math.Cos)
	case hal.Tan:
		return mapF64[T](math.Tan)
	case hal.Tanh:
		return mapF64[T](math.Tanh)
	case hal.Erf:
		if isFloat32[T]() {
			// A float32 result needs only erfFloat32's rational fit
			// (within 2 ulp of float32), about 3× as fast as math.Erf
			// on a GELU's inputs (BenchmarkUnaryFastPaths).
			return func(out, x, _, _ []T) {
				for i, v := range x[:len(out)] {
					out[i] = T(erfFloat32(float64(v)))
				}
			}
		}
		return mapF64[T](math.Erf)
	case hal.Sigmoid:
		return mapF64[T](sigmoid)
	case hal.ELU:
		return mapF64[T](func(v float64) float64 {
			if v > 0 {
				return v
			}
			return args.Alpha * math.Expm1(v)
		})
	case hal.GELU:
		// x/2·(1+erf(x/√2)) written with erfc, which keeps full relative
		// precision where 1+erf cancels (x ≪ 0).
		return mapF64[T](func(v float64) float64 { return v / 2 * math.Erfc(-v/math.Sqrt2) })
	case hal.GELUTanh:
		// 1+tanh(u) = 2·sigmoid(2u), again to avoid the cancellation.
		c := math.Sqrt(2 / math.Pi)
		return mapF64[T](func(v float64) float64 { return v * sigmoid(2*c*(v+0.044715*v*v*v)) })
	case hal.SiLU:
		return mapF64[T](func(v float64) float64 { return v * sigmoid(v) })
	case hal.Softplus:
		// ln(1+e^z)/β with z = βx, as max(z, 0) + ln(1+e^−|z|), which
		// cannot overflow for any threshold.
		beta, threshold := args.Alpha, args.Beta
		return mapF64[T](func(v float64) float64 {
			z := beta * v
			if z > threshold {
				return v
			}
			return (max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))) / beta
		})
	}
	panic("cpu: unknown unary op " + op.String())
}

// unaryInt returns the kernel of op for int32 or int64, wrapping on
// overflow as Go (and two's-complement hardware) does. Clamp's bounds
// truncate toward zero and saturate (conv).
func unaryInt[T int32 | int64](op hal.UnaryOp, args hal.Args, conv func(float64) T) kernel[T, T] {
	switch op {
	case hal.Neg:
		return mapT(func(v T) T { return -v })
	case hal.Abs:
		return mapT(func(v T) T { return max(v, -v) })
	case hal.Sign:
		return mapT(func(v T) T { return min(max(v, -1), 1) })
	case hal.Square:
		return mapT(func(v T) T { return v * v })
	case hal.ReLU:
		return mapT(func(v T) T { return max(v, 0) })
	case hal.Clamp:
		lo, hi := conv(math.Trunc(args.Alpha)), conv(math.Trunc(args.Beta))
		return mapT(func(v T) T { return min(max(v, lo), hi) })
	}
	panic("cpu: unary " + op.String() + " on " + dtypeOf[T]().String())
}

// mapT lifts f to a kernel. It costs a call per element, which the hot
// ops above avoid by writing their loops out.
func mapT[T storage](f func(T) T) kernel[T, T] {
	return func(out, x, _, _ []T) {
		for i, v := range x[:len(out)] {
			out[i] = f(v)
		}
	}
}

// mapF64 lifts a float64 function to a kernel in T, rounding once.
func mapF64[T float32 | float64](f func(float64) float64) kernel[T, T] {
	return func(out, x, _, _ []T) {
		for i, v := range x[:len(out)] {
			out[i] = T(f(float64(v)))
		}
	}
}

// isFloat32 says whether T is float32 (kernels that have a float32-only
// fast path).
func isFloat32[T float32 | float64]() bool {
	var zero T
	_, ok := any(zero).(float32)
	return ok
}

// erfFloat32 is erf(x) to float32's precision: x·P(x²)/Q(x²) on [−4, 4]
// (degrees 6 and 4 in x², the minimax fit Eigen's fast erf uses), ±1
// beyond, where erf rounds to ±1 in float32. Evaluated in float64, its
// float32 rounding is within 2 ulp of the correctly rounded erf over the
// whole range (checked densely by TestErfFloat32).
func erfFloat32(x float64) float64 {
	// Comparisons (rarely taken, so well predicted) rather than the min
	// and max builtins, with which this was no faster than math.Erf; NaN
	// fails them all and comes out NaN.
	if x > 4 {
		x = 4
	} else if x < -4 {
		x = -4
	}
	x2 := x * x
	p := -2.72614225801306e-10
	p = p*x2 + 2.77068142495902e-08
	p = p*x2 - 2.10102402082508e-06
	p = p*x2 - 5.69250639462346e-05
	p = p*x2 - 7.34990630326855e-04
	p = p*x2 - 2.95459980854025e-03
	p = p*x2 - 1.60960333262415e-02
	q := -1.45660718464996e-05
	q = q*x2 - 2.13374055278905e-04
	q = q*x2 - 1.68282697438203e-03
	q = q*x2 - 7.37332916720468e-03
	q = q*x2 - 1.42647390514189e-02
	r := x * p / q
	if r > 1 { // the fit passes 1 by 5e-8 at ±4
		r = 1
	} else if r < -1 {
		r = -1
	}
	return r
}

// sigmoid is 1/(1+e^−x), always with a non-positive exponent: e^−x for
// x ≥ 0 and e^x/(1+e^x) otherwise. The exponential then never overflows,
// so no Inf/Inf → NaN for large |x|, and for very negative x the tiny
// result keeps full relative precision.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
