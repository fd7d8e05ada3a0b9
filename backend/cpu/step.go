package cpu

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/webtensor/webtensor/hal"
)

// stepGrain is how many elements a worker must get before an update is
// split across goroutines: each element costs a square root and a
// division on top of a few multiply-adds.
const stepGrain = 1 << 13

// Step is the fused optimizer update. Its float32 arithmetic rounds
// where torch.optim's single-tensor code (PyTorch 1.13) rounds on the CPU,
// one tensor op at a time:
//   - Python computes the scalars (1 − β, lr/bc₁, √bc₂, 1 − lr·wd) in
//     float64 and the kernel rounds each to float32 once, as ATen does
//     when it takes a Python number as an op's scalar;
//   - add(x, alpha) is a fused multiply-add, as ATen's vectorized kernel
//     computes it (vec::fmadd(other, alpha, self)), and so is addcmul
//     (self + value·t1·t2, whose last multiply-add GCC contracts);
//   - addcdiv rounds value·t1, then /t2, then + self; mul_, sqrt and
//     add_(eps) round once each.
//
// Checked against PyTorch 1.13.0 (Debian build, AVX2 kernels) on 1003
// random elements of every option combination the tensor tests use: every
// param and state element is bit-identical. Residual differences: a
// PyTorch built for another vector width or compiler may contract
// differently (at most an ulp per operation), and a float32 fused
// multiply-add here is computed in float64 and rounded twice, which
// differs from one rounding in rare ties. float64 follows the same
// formulas; float16 computes them in float32.
func (d *Device) Step(op hal.Optimizer, param, grad hal.View, state []hal.View, scale hal.View, a hal.StepArgs) error {
	name := "step " + op.String()
	want := op.States(a)
	if want < 0 {
		return errorf(name, hal.ErrInvalid, "unknown optimizer")
	}
	names := []string{"param", "grad"}
	views := []hal.View{param, grad}
	for i, s := range state {
		names = append(names, fmt.Sprintf("state[%d]", i))
		views = append(views, s)
	}
	names = append(names, "scale?")
	views = append(views, scale)
	o, err := d.operands(name, strings.Join(names, " "), views...)
	if err != nil {
		return err
	}
	p, g, st, sc := o[0], o[1], o[2:len(o)-1], o[len(o)-1]
	if !d.caps.Supports(op.Kernel(), p.DType) {
		return unsupportedDType(name, p.DType)
	}
	if len(st) != want {
		return errorf(name, hal.ErrInvalid, "got %d state views, want %d for %+v", len(st), want, a)
	}
	// Every operand but scale: same dtype and shape, contiguous.
	for i := 1; i < len(o)-1; i++ {
		if err := needDType(name, names[i], o[i], p.DType); err != nil {
			return err
		}
		if err := needShape(name, names[i], o[i], p.Shape); err != nil {
			return err
		}
	}
	for i := range len(o) - 1 {
		if err := needContiguous(name, names[i], o[i]); err != nil {
			return err
		}
	}
	if sc.Buf != nil {
		if err := needDType(name, "scale", sc, p.DType); err != nil {
			return err
		}
		if sc.Elements() != 1 {
			return errorf(name, hal.ErrInvalid, "scale %s is not a single element", desc(sc.View))
		}
	}
	// param and the state are written, so they may share a buffer with
	// nothing; grad and scale are only read and may share one.
	for i := range o {
		for j := range i {
			if o[i].Buf == nil || o[i].Buf != o[j].Buf {
				continue
			}
			if written := func(k int) bool { return k == 0 || (k >= 2 && k < len(o)-1) }; written(i) || written(j) {
				return errorf(name, hal.ErrInvalid, "%s and %s share a buffer", names[j], strings.TrimSuffix(names[i], "?"))
			}
		}
	}
	d.dispatch()
	switch p.DType {
	case hal.Float64:
		step[float64](op, p, g, st, sc, a)
	case hal.Float32:
		step[float32](op, p, g, st, sc, a)
	case hal.Float16:
		stepHalf(op, p, g, st, sc, a)
	}
	return nil
}

// stepHalf runs the float32 update on float32 copies of float16 operands
// and rounds param and state back once: more accurate than PyTorch's
// float16 ops, which round after each one.
func stepHalf(op hal.Optimizer, p, g operand, st []operand, sc operand, a hal.StepArgs) {
	widen := func(o operand) operand {
		n := o.Elements()
		w := make([]uint64, (n+1)/2)
		convert(asType[float32](w)[:n], asType[half](o.words)[o.Offset:o.Offset+n])
		v := o.View
		v.DType, v.Offset = hal.Float32, 0
		return operand{View: v, words: w}
	}
	narrow := func(dst, src operand) {
		n := dst.Elements()
		convert(asType[half](dst.words)[dst.Offset:dst.Offset+n], asType[float32](src.words)[:n])
	}
	wp, wg := widen(p), widen(g)
	ws := make([]operand, len(st))
	for i, o := range st {
		ws[i] = widen(o)
	}
	var wsc operand
	if sc.Buf != nil {
		wsc = widen(sc)
	}
	step[float32](op, wp, wg, ws, wsc, a)
	narrow(p, wp)
	for i, o := range st {
		narrow(o, ws[i])
	}
}

// slice returns the contiguous o's elements as T.
func slice[T float32 | float64](o operand) []T {
	return asType[T](o.words)[o.Offset : o.Offset+o.Elements()]
}

// fma is x·y + z rounded once (to float64, then to T: exact for float64,
// rounded twice for float32). For float32 operands the float64 product is
// exact, so a plain multiply and add equal math.FMA bit for bit; they
// avoid its call, whose fallback path (taken without GOAMD64=v3) makes the
// compiler spill the loop's registers around every use: SGD's update ran
// at a quarter of memory speed.
func fma[T float32 | float64](x, y, z T) T {
	if unsafe.Sizeof(x) == 4 { // a constant in each instantiation, unlike a type switch on T
		return T(float64(x)*float64(y) + float64(z))
	}
	return T(math.FMA(float64(x), float64(y), float64(z)))
}

// sgdMomentumF32, where the CPU has a vector unit for it, runs the common
// SGD update (momentum, after the first step, no dampening, Nesterov,
// scale or weight decay) on a prefix of the elements and returns its
// length; the scalar loop does the rest. Its arithmetic is torch's: a
// float32 multiply, add and fused multiply-add, each rounded once (the
// scalar loop's float64 fma rounds twice, which differs in rare ties).
var sgdMomentumF32 func(p, g, s []float32, mom, negLR float32) int

// as32 is a float32 slice's own type; T must be float32.
func as32[T float32 | float64](x []T) []float32 {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), len(x))
}

// adamConsts are Adam's float32 scalars as the vector kernels read them,
// each rounded once from the float64 that Python would compute.
type adamConsts struct {
	scale, wd, shrink, b1, c1, b2, c2, negStep, bc2, eps float32
}

// adamF32 flags: the gradient is scaled, coupled weight decay is added
// to it, the parameter is shrunk (AdamW's decoupled decay).
const (
	adamScaled = 1 << iota
	adamCoupled
	adamDecoupled
)

// adamF32, where the CPU has a vector unit for it, runs Adam's float32
// update on a prefix of the elements and returns its length; the scalar
// loop does the rest. Its fused multiply-adds round once, as torch's do;
// the scalar loop's round twice (through float64), which differs in rare
// ties by an ulp.
var adamF32 func(p, g, m, v []float32, k adamConsts, flags int) int

// rmsConsts are RMSProp's and Adagrad's float32 scalars as the vector
// kernels read them (Adagrad reads scale, wd, negLR and eps).
type rmsConsts struct {
	scale, wd, alpha, c, mom, negLR, eps float32
}

// rmsF32 flags: the gradient is scaled, coupled weight decay is added to
// it; RMSProp centers, keeps a momentum buffer.
const (
	rmsScaled = 1 << iota
	rmsCoupled
	rmsCentered
	rmsMomentum
)

// rmsF32 is adamF32 for RMSProp or (adagrad) Adagrad: v is the square
// average or the sum of squares, buf the momentum buffer, avg the
// centered gradient average, nil where flags do not use them.
var rmsF32 func(adagrad bool, p, g, v, buf, avg []float32, k rmsConsts, flags int) int

func sqrt[T float32 | float64](x T) T { return T(math.Sqrt(float64(x))) }

// rmsFlags are the rmsF32 flags every update shares.
func rmsFlags(scaled, decay bool) int {
	flags := 0
	if scaled {
		flags |= rmsScaled
	}
	if decay {
		flags |= rmsCoupled
	}
	return flags
}

// step runs the update. The explicit T(…) conversions round each product
// where PyTorch rounds it and keep the compiler from fusing it into the
// following addition.
func step[T float32 | float64](op hal.Optimizer, po, gO operand, so []operand, sc operand, a hal.StepArgs) {
	p, g := slice[T](po), slice[T](gO)
	var s [3][]T
	for i, o := range so {
		s[i] = slice[T](o)
	}
	scale, scaled := T(1), sc.Buf != nil
	if scaled {
		scale = slice[T](sc)[0]
	}
	wd, decay := T(a.WeightDecay), a.WeightDecay != 0
	negLR, eps := T(-a.LR), T(a.Eps)
	mom, hasMom := T(a.Momentum), a.Momentum != 0
	parallelFor(len(p), stepGrain, func(lo, hi int) {
		// grad returns element i's gradient after scaling and (coupled)
		// weight decay: grad.mul_(scale), then grad.add(param, alpha=wd).
		grad := func(i int) T {
			gi := g[i]
			if scaled {
				gi = T(gi * scale)
			}
			if decay {
				gi = fma(p[i], wd, gi)
			}
			return gi
		}
		switch op {
		case hal.SGD:
			damp := T(1 - a.Dampening)
			start := lo
			if unsafe.Sizeof(damp) == 4 && sgdMomentumF32 != nil && hasMom && !a.FirstStep &&
				a.Dampening == 0 && !a.Nesterov && !scaled && !decay {
				start += sgdMomentumF32(as32(p[lo:hi]), as32(g[lo:hi]), as32(s[0][lo:hi]), float32(mom), float32(negLR))
			}
			for i := start; i < hi; i++ {
				gi := grad(i)
				if hasMom {
					b := gi
					if !a.FirstStep {
						b = fma(gi, damp, T(s[0][i]*mom))
					}
					s[0][i] = b
					if a.Nesterov {
						gi = fma(b, mom, gi)
					} else {
						gi = b
					}
				}
				p[i] = fma(gi, negLR, p[i])
			}
		case hal.Adam:
			b1, c1 := T(a.Beta1), T(1-a.Beta1)
			b2, c2 := T(a.Beta2), T(1-a.Beta2)
			shrink := T(1 - a.LR*a.WeightDecay)
			negStep := T(-(a.LR / a.BiasCorrection1))
			bc2 := T(math.Sqrt(a.BiasCorrection2))
			start := lo
			if unsafe.Sizeof(b1) == 4 && adamF32 != nil {
				k := adamConsts{
					scale: float32(scale), wd: float32(wd), shrink: float32(shrink),
					b1: float32(b1), c1: float32(c1), b2: float32(b2), c2: float32(c2),
					negStep: float32(negStep), bc2: float32(bc2), eps: float32(eps),
				}
				flags := 0
				if scaled {
					flags |= adamScaled
				}
				if decay && a.Decoupled {
					flags |= adamDecoupled
				} else if decay {
					flags |= adamCoupled
				}
				start += adamF32(as32(p[lo:hi]), as32(g[lo:hi]), as32(s[0][lo:hi]), as32(s[1][lo:hi]), k, flags)
			}
			for i := start; i < hi; i++ {
				var gi T
				if a.Decoupled {
					gi = g[i]
					if scaled {
						gi = T(gi * scale)
					}
					if decay {
						p[i] = T(p[i] * shrink)
					}
				} else {
					gi = grad(i)
				}
				m := fma(gi, c1, T(s[0][i]*b1))
				v := fma(T(c2*gi), gi, T(s[1][i]*b2))
				s[0][i], s[1][i] = m, v
				denom := T(sqrt(v)/bc2) + eps
				p[i] += T(T(negStep*m) / denom)
			}
		case hal.RMSProp:
			alpha, c := T(a.Alpha), T(1-a.Alpha)
			start := lo
			if unsafe.Sizeof(alpha) == 4 && rmsF32 != nil {
				k := rmsConsts{
					scale: float32(scale), wd: float32(wd), alpha: float32(alpha), c: float32(c),
					mom: float32(mom), negLR: float32(negLR), eps: float32(eps),
				}
				flags := rmsFlags(scaled, decay)
				var buf, avg []float32
				if hasMom {
					flags |= rmsMomentum
					buf = as32(s[1][lo:hi])
				}
				if a.Centered {
					flags |= rmsCentered
					avg = as32(s[len(so)-1][lo:hi])
				}
				start += rmsF32(false, as32(p[lo:hi]), as32(g[lo:hi]), as32(s[0][lo:hi]), buf, avg, k, flags)
			}
			for i := start; i < hi; i++ {
				gi := grad(i)
				v := fma(T(c*gi), gi, T(s[0][i]*alpha))
				s[0][i] = v
				var avg T
				if a.Centered {
					k := len(so) - 1
					ga := fma(gi, c, T(s[k][i]*alpha))
					s[k][i] = ga
					avg = sqrt(fma(-ga, ga, v))
				} else {
					avg = sqrt(v)
				}
				avg += eps
				if hasMom {
					b := T(s[1][i]*mom) + T(gi/avg)
					s[1][i] = b
					p[i] = fma(b, negLR, p[i])
				} else {
					p[i] += T(T(negLR*gi) / avg)
				}
			}
		case hal.Adagrad:
			start := lo
			if unsafe.Sizeof(eps) == 4 && rmsF32 != nil {
				k := rmsConsts{scale: float32(scale), wd: float32(wd), negLR: float32(negLR), eps: float32(eps)}
				start += rmsF32(true, as32(p[lo:hi]), as32(g[lo:hi]), as32(s[0][lo:hi]), nil, nil, k, rmsFlags(scaled, decay))
			}
			for i := start; i < hi; i++ {
				gi := grad(i)
				sum := fma(gi, gi, s[0][i])
				s[0][i] = sum
				p[i] += T(T(negLR*gi) / (sqrt(sum) + eps))
			}
		}
	})
}
