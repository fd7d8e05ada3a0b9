package tensor

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// Zero-size operands through every op of Ops(), on the CPU and WebGPU:
// each gives PyTorch's empty (or, for reductions over nothing, filled)
// result, or panics with the documented misuse — never another panic or
// a hang. TestZeroSizeCoversOps fails when an op joins the table without
// a case here.

// zcase runs one op; shapes are the result shapes PyTorch gives, fill
// (when not nil) the value every element has, and misuse (when set) a
// piece of the documented *Error message instead.
type zcase struct {
	run    func(dev *Device) []*Tensor
	shapes [][]int
	fill   *float64
	misuse string
}

func zf(v float64) *float64 { return &v }

func zsh(shapes ...[]int) [][]int { return shapes }

// zeroCases lists, per op name of Ops(), its zero-size cases.
func zeroCases() map[string][]zcase {
	one := func(f func(dev *Device) *Tensor) func(dev *Device) []*Tensor {
		return func(dev *Device) []*Tensor { return []*Tensor{f(dev)} }
	}
	x0 := func(dev *Device) *Tensor { return Zeros(dev, 0, 3) }  // [0 3]
	x20 := func(dev *Device) *Tensor { return Zeros(dev, 2, 0) } // [2 0]
	i0 := func(dev *Device, shape ...int) *Tensor { return FromInt32(dev, nil, shape...) }
	img0 := func(dev *Device) *Tensor { return Zeros(dev, 0, 1, 4, 4) }
	g := NewGenerator(1)
	cases := map[string][]zcase{
		"FromFloat32": {{run: one(func(d *Device) *Tensor { return FromFloat32(d, nil, 0, 3) }), shapes: zsh([]int{0, 3})}},
		"FromFloat64": {{run: one(func(d *Device) *Tensor { return FromFloat64(d, nil, 3, 0) }), shapes: zsh([]int{3, 0})}},
		"FromInt32":   {{run: one(func(d *Device) *Tensor { return i0(d, 0) }), shapes: zsh([]int{0})}},
		"Zeros":       {{run: one(x0), shapes: zsh([]int{0, 3})}},
		"Ones":        {{run: one(func(d *Device) *Tensor { return Ones(d, 2, 0, 2) }), shapes: zsh([]int{2, 0, 2})}},
		"Full":        {{run: one(func(d *Device) *Tensor { return Full(d, Int32, 7, 0) }), shapes: zsh([]int{0})}},
		"ZerosLike":   {{run: one(func(d *Device) *Tensor { return ZerosLike(x0(d)) }), shapes: zsh([]int{0, 3})}},
		"OnesLike":    {{run: one(func(d *Device) *Tensor { return OnesLike(x20(d)) }), shapes: zsh([]int{2, 0})}},
		"FullLike":    {{run: one(func(d *Device) *Tensor { return FullLike(x0(d), 2) }), shapes: zsh([]int{0, 3})}},
		"Arange":      {{run: one(func(d *Device) *Tensor { return Arange(d, Float32, 5, 5, 1) }), shapes: zsh([]int{0})}},
		"Linspace":    {{run: one(func(d *Device) *Tensor { return Linspace(d, 0, 1, 0) }), shapes: zsh([]int{0})}},
		"Eye":         {{run: one(func(d *Device) *Tensor { return Eye(d, 0, 3) }), shapes: zsh([]int{0, 3})}},
		"Rand":        {{run: one(func(d *Device) *Tensor { return g.Rand(d, 0, 3) }), shapes: zsh([]int{0, 3})}},
		"Randn":       {{run: one(func(d *Device) *Tensor { return g.Randn(d, 3, 0) }), shapes: zsh([]int{3, 0})}},
		"Bernoulli":   {{run: one(func(d *Device) *Tensor { return g.Bernoulli(d, 0.5, 0) }), shapes: zsh([]int{0})}},

		"Where": {{run: one(func(d *Device) *Tensor { return Where(i0(d, 0, 1), x0(d), Ones(d, 3)) }), shapes: zsh([]int{0, 3})}},
		"Cast":  {{run: one(func(d *Device) *Tensor { return x0(d).Cast(Int32) }), shapes: zsh([]int{0, 3})}},

		// Reductions over nothing: 0, 1, NaN and −Inf as torch; max, min
		// and arg of nothing are misuse. Over a non-empty axis of an
		// empty tensor they are empty.
		"Sum": {
			{run: one(func(d *Device) *Tensor { return x0(d).Sum([]int{0}, false) }), shapes: zsh([]int{3}), fill: zf(0)},
			{run: one(func(d *Device) *Tensor { return x0(d).Sum(nil, false) }), shapes: zsh([]int{}), fill: zf(0)},
		},
		"Prod":      {{run: one(func(d *Device) *Tensor { return x0(d).Prod([]int{0}, true) }), shapes: zsh([]int{1, 3}), fill: zf(1)}},
		"Mean":      {{run: one(func(d *Device) *Tensor { return x0(d).Mean([]int{0}, false) }), shapes: zsh([]int{3}), fill: zf(math.NaN())}},
		"Var":       {{run: one(func(d *Device) *Tensor { return x0(d).Var([]int{0}, 1, false) }), shapes: zsh([]int{3}), fill: zf(math.NaN())}},
		"Std":       {{run: one(func(d *Device) *Tensor { return x0(d).Std([]int{1}, 1, false) }), shapes: zsh([]int{0})}},
		"LogSumExp": {{run: one(func(d *Device) *Tensor { return x0(d).LogSumExp([]int{0}, false) }), shapes: zsh([]int{3}), fill: zf(math.Inf(-1))}},
		"Max": {
			{run: one(func(d *Device) *Tensor { return x0(d).Max([]int{0}, false) }), misuse: "no identity"},
			{run: one(func(d *Device) *Tensor { return x0(d).Max([]int{1}, false) }), shapes: zsh([]int{0})},
		},
		"Min": {
			{run: one(func(d *Device) *Tensor { return x0(d).Min(nil, false) }), misuse: "no identity"},
			{run: one(func(d *Device) *Tensor { return x0(d).Min([]int{1}, true) }), shapes: zsh([]int{0, 1})},
		},
		"ArgMax": {
			{run: one(func(d *Device) *Tensor { return x0(d).ArgMax(nil, false) }), misuse: "no identity"},
			{run: one(func(d *Device) *Tensor { return x0(d).ArgMax([]int{1}, false) }), shapes: zsh([]int{0})},
		},
		"ArgMin": {{run: one(func(d *Device) *Tensor { return x20(d).ArgMin([]int{0}, false) }), shapes: zsh([]int{0})}},

		// Linear algebra: an empty row or column axis gives an empty
		// result; an empty contraction gives zeros (plus C).
		"MatMul": {
			{run: one(func(d *Device) *Tensor { return MatMul(x0(d), Ones(d, 3, 4)) }), shapes: zsh([]int{0, 4})},
			{run: one(func(d *Device) *Tensor { return MatMul(x20(d), Ones(d, 0, 4)) }), shapes: zsh([]int{2, 4}), fill: zf(0)},
			{run: one(func(d *Device) *Tensor { return MatMul(Zeros(d, 0), Zeros(d, 0)) }), shapes: zsh([]int{}), fill: zf(0)},
		},
		"Gemm": {{run: one(func(d *Device) *Tensor {
			return Gemm(2, x20(d), false, Ones(d, 4, 0), true, 1, Full(d, Float32, 3, 2, 4))
		}), shapes: zsh([]int{2, 4}), fill: zf(3)}},
		"MatVec":    {{run: one(func(d *Device) *Tensor { return MatVec(x20(d), Zeros(d, 0)) }), shapes: zsh([]int{2}), fill: zf(0)}},
		"Outer":     {{run: one(func(d *Device) *Tensor { return Outer(Zeros(d, 0), Ones(d, 3)) }), shapes: zsh([]int{0, 3})}},
		"T":         {{run: one(func(d *Device) *Tensor { return x0(d).T() }), shapes: zsh([]int{3, 0})}},
		"Transpose": {{run: one(func(d *Device) *Tensor { return x0(d).Transpose(0, 1) }), shapes: zsh([]int{3, 0})}},
		"Permute":   {{run: one(func(d *Device) *Tensor { return Zeros(d, 2, 0, 3).Permute(2, 0, 1) }), shapes: zsh([]int{3, 2, 0})}},

		"Contiguous": {{run: one(func(d *Device) *Tensor { return Zeros(d, 3, 0).T().Contiguous() }), shapes: zsh([]int{0, 3})}},
		"Concat": {
			{run: one(func(d *Device) *Tensor { return Concat(0, x0(d), Ones(d, 2, 3)) }), shapes: zsh([]int{2, 3}), fill: zf(1)},
			{run: one(func(d *Device) *Tensor { return Concat(1, x20(d), x20(d)) }), shapes: zsh([]int{2, 0})},
		},
		"Stack":        {{run: one(func(d *Device) *Tensor { return Stack(1, x0(d), x0(d)) }), shapes: zsh([]int{0, 2, 3})}},
		"Pad":          {{run: one(func(d *Device) *Tensor { return x20(d).Pad([]int{1, 2}, PadConstant, 5) }), shapes: zsh([]int{2, 3}), fill: zf(5)}},
		"Pad(reflect)": {{run: one(func(d *Device) *Tensor { return x0(d).Pad([]int{1, 1}, PadReflect, 0) }), shapes: zsh([]int{0, 5})}},
		"Reshape":      {{run: one(func(d *Device) *Tensor { return x0(d).Reshape(3, -1, 1) }), shapes: zsh([]int{3, 0, 1})}},
		"Flatten":      {{run: one(func(d *Device) *Tensor { return x0(d).Flatten(0, -1) }), shapes: zsh([]int{0})}},
		"Squeeze":      {{run: one(func(d *Device) *Tensor { return Zeros(d, 1, 0).Squeeze() }), shapes: zsh([]int{0})}},
		"Unsqueeze":    {{run: one(func(d *Device) *Tensor { return x0(d).Unsqueeze(1) }), shapes: zsh([]int{0, 1, 3})}},
		"Expand":       {{run: one(func(d *Device) *Tensor { return Ones(d, 1, 3).Expand(0, -1) }), shapes: zsh([]int{0, 3})}},
		"BroadcastTo":  {{run: one(func(d *Device) *Tensor { return Ones(d, 3).BroadcastTo(2, 0, 3) }), shapes: zsh([]int{2, 0, 3})}},
		"Slice": {
			{run: one(func(d *Device) *Tensor { return x0(d).Slice(1, 0, 2, 1) }), shapes: zsh([]int{0, 2})},
			{run: one(func(d *Device) *Tensor { return Ones(d, 4).Slice(0, 3, 1, 1) }), shapes: zsh([]int{0})},
		},
		"Split": {{run: func(d *Device) []*Tensor { return x0(d).Split(0, 2) }, shapes: zsh([]int{0, 3})}},
		"Chunk": {{run: func(d *Device) []*Tensor { return x20(d).Chunk(1, 3) }, shapes: zsh([]int{2, 0})}},

		"Gather":      {{run: one(func(d *Device) *Tensor { return Ones(d, 2, 3).Gather(1, i0(d, 2, 0)) }), shapes: zsh([]int{2, 0})}},
		"IndexSelect": {{run: one(func(d *Device) *Tensor { return Ones(d, 2, 3).IndexSelect(0, i0(d, 0)) }), shapes: zsh([]int{0, 3})}},
		"ScatterAdd": {{run: one(func(d *Device) *Tensor {
			return Ones(d, 2, 3).ScatterAdd(0, i0(d, 0, 3), x0(d))
		}), shapes: zsh([]int{2, 3}), fill: zf(1)}},
		"OneHot": {{run: one(func(d *Device) *Tensor { return OneHot(i0(d, 0), 4) }), shapes: zsh([]int{0, 4})}},

		"Softmax":    {{run: one(func(d *Device) *Tensor { return Softmax(x20(d), 1) }), shapes: zsh([]int{2, 0})}},
		"LogSoftmax": {{run: one(func(d *Device) *Tensor { return LogSoftmax(x0(d), 1) }), shapes: zsh([]int{0, 3})}},
		"Conv2d": {{run: one(func(d *Device) *Tensor {
			return Conv2d(Zeros(d, 0, 1, 5, 5), Ones(d, 2, 1, 3, 3), Ones(d, 2), ConvOptions{})
		}), shapes: zsh([]int{0, 2, 3, 3})}},
		"Conv3d": {
			{run: one(func(d *Device) *Tensor {
				return Conv3d(Zeros(d, 0, 1, 3, 5, 5), Ones(d, 2, 1, 2, 3, 3), Ones(d, 2), Conv3dOptions{})
			}), shapes: zsh([]int{0, 2, 2, 3, 3})},
			// An empty height padded by 1: the output is the bias alone.
			{run: one(func(d *Device) *Tensor {
				return Conv3d(Zeros(d, 1, 2, 3, 0, 2), Ones(d, 2, 2, 1, 1, 1), Ones(d, 2), Conv3dOptions{Padding: [3]int{0, 1, 0}})
			}), shapes: zsh([]int{1, 2, 3, 2, 2}), fill: zf(1)},
		},
		"ConvTranspose2d": {{run: one(func(d *Device) *Tensor {
			return ConvTranspose2d(Zeros(d, 0, 1, 3, 3), Ones(d, 1, 2, 3, 3), nil, ConvTransposeOptions{})
		}), shapes: zsh([]int{0, 2, 5, 5})}},
		"MaxPool2d": {{run: func(d *Device) []*Tensor {
			v, i := MaxPool2d(img0(d), PoolOptions{Kernel: [2]int{2, 2}})
			return []*Tensor{v, i}
		}, shapes: zsh([]int{0, 1, 2, 2}, []int{0, 1, 2, 2})}},
		"AvgPool2d":         {{run: one(func(d *Device) *Tensor { return AvgPool2d(img0(d), PoolOptions{Kernel: [2]int{2, 2}}, true) }), shapes: zsh([]int{0, 1, 2, 2})}},
		"AdaptiveAvgPool2d": {{run: one(func(d *Device) *Tensor { return AdaptiveAvgPool2d(img0(d), 1, 1) }), shapes: zsh([]int{0, 1, 1, 1})}},
		"BatchNorm": {
			{run: one(func(d *Device) *Tensor { return BatchNorm(x0(d), Zeros(d, 3), Ones(d, 3), nil, nil, false, 0.1, 1e-5) }), shapes: zsh([]int{0, 3})},
			// Training on an empty batch: an empty result, and the running
			// statistics stay as they were (torch returns early as well).
			{run: one(func(d *Device) *Tensor { return BatchNorm(x0(d), nil, nil, nil, nil, true, 0.1, 1e-5) }), shapes: zsh([]int{0, 3})},
			{run: one(func(d *Device) *Tensor {
				rm := Full(d, Float32, 2, 3)
				BatchNorm(x0(d), rm, Ones(d, 3), nil, nil, true, 0.1, 1e-5).Release()
				return rm
			}), shapes: zsh([]int{3}), fill: zf(2)},
		},
		"LayerNorm": {{run: one(func(d *Device) *Tensor { return LayerNorm(x0(d), []int{3}, nil, nil, 1e-5) }), shapes: zsh([]int{0, 3})}},
		"Dropout":   {{run: one(func(d *Device) *Tensor { return Dropout(x0(d), 0.5, true, g) }), shapes: zsh([]int{0, 3})}},
		"RBFKernel": {
			{run: one(func(d *Device) *Tensor { return RBFKernel(Zeros(d, 0, 4), Ones(d, 3, 4), 0.5) }), shapes: zsh([]int{0, 3})},
			// No features: every distance is 0, so every entry is 1.
			{run: one(func(d *Device) *Tensor { return RBFKernel(x20(d), Zeros(d, 3, 0), 0.5) }), shapes: zsh([]int{2, 3}), fill: zf(1)},
		},
		"AffineGrid": {{run: one(func(d *Device) *Tensor { return AffineGrid(Zeros(d, 0, 2, 3), []int{0, 1, 4, 5}, false) }), shapes: zsh([]int{0, 4, 5, 2})}},
		"GridSample": {{run: one(func(d *Device) *Tensor {
			return GridSample(img0(d), Zeros(d, 0, 2, 2, 2), GridZeros, false)
		}), shapes: zsh([]int{0, 1, 2, 2})}},
	}
	binary := map[string]func(a, b *Tensor) *Tensor{
		"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Pow": Pow, "Maximum": Maximum, "Minimum": Minimum,
		"Eq": Eq, "Ne": Ne, "Lt": Lt, "Le": Le, "Gt": Gt, "Ge": Ge, "ReLUGrad": ReLUGrad,
	}
	for name, f := range binary {
		cases[name] = []zcase{
			{run: one(func(d *Device) *Tensor { return f(x0(d), Ones(d, 1, 3)) }), shapes: zsh([]int{0, 3})},
			{run: one(func(d *Device) *Tensor { return f(Ones(d, 2, 1), x20(d)) }), shapes: zsh([]int{2, 0})},
		}
		cases[name+"Scalar"] = []zcase{{run: one(func(d *Device) *Tensor {
			x := x0(d)
			switch name {
			case "Add":
				return x.AddScalar(1)
			case "Sub":
				return x.SubScalar(1)
			case "Mul":
				return x.MulScalar(2)
			case "Div":
				return x.DivScalar(2)
			case "Pow":
				return x.PowScalar(2)
			case "Maximum":
				return x.MaximumScalar(0)
			case "Minimum":
				return x.MinimumScalar(0)
			case "Eq":
				return x.EqScalar(0)
			case "Ne":
				return x.NeScalar(0)
			case "Lt":
				return x.LtScalar(0)
			case "Le":
				return x.LeScalar(0)
			case "Gt":
				return x.GtScalar(0)
			case "ReLUGrad":
				return x.ReLUGradScalar(1)
			}
			return x.GeScalar(0)
		}), shapes: zsh([]int{0, 3})}}
	}
	unary := map[string]func(*Tensor) *Tensor{
		"Neg": Neg, "Abs": Abs, "Sign": Sign, "Reciprocal": Reciprocal, "Sqrt": Sqrt, "Rsqrt": Rsqrt,
		"Square": Square, "Exp": Exp, "Log": Log, "Log1p": Log1p, "Expm1": Expm1, "Sin": Sin, "Cos": Cos, "Tan": Tan,
		"Tanh": Tanh, "Sigmoid": Sigmoid, "ReLU": ReLU, "Erf": Erf, "GELU": GELU, "GELUTanh": GELUTanh,
		"SiLU":      SiLU,
		"LeakyReLU": func(x *Tensor) *Tensor { return LeakyReLU(x, 0.1) },
		"ELU":       func(x *Tensor) *Tensor { return ELU(x, 1) },
		"Softplus":  func(x *Tensor) *Tensor { return Softplus(x, 1, 20) },
		"Clamp":     func(x *Tensor) *Tensor { return Clamp(x, -1, 1) },
	}
	for name, f := range unary {
		cases[name] = []zcase{{run: one(func(d *Device) *Tensor { return f(x20(d).T()) }), shapes: zsh([]int{0, 2})}}
	}
	for _, o := range []Optimizer{SGD, Adam, RMSProp, Adagrad} {
		name := "Step(" + strings.ToLower(o.String()) + ")"
		cases[name] = []zcase{{run: func(d *Device) []*Tensor {
			a := StepArgs{LR: 0.1, Momentum: 0.9, Beta1: 0.9, Beta2: 0.999, BiasCorrection1: 0.1, BiasCorrection2: 0.001, Alpha: 0.99, Eps: 1e-8}
			p := Zeros(d, 0, 3)
			state := make([]*Tensor, o.States(a))
			for i := range state {
				state[i] = Zeros(d, 0, 3)
			}
			Step(o, p, x0(d), state, nil, a)
			return append([]*Tensor{p}, state...)
		}, shapes: nil}}
	}
	maps.Copy(cases, shapeOpZeroCases())
	for name, c := range linalgZeroCases() {
		cases[name] = c
	}
	for name, c := range sortZeroCases() {
		cases[name] = c
	}
	return cases
}

func TestZeroSizeCoversOps(t *testing.T) {
	cases := zeroCases()
	var missing []string
	for _, op := range Ops() {
		if _, ok := cases[op.Name]; !ok {
			missing = append(missing, op.Name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("ops without a zero-size case: %v", missing)
	}
}

func TestZeroSize(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		cases := zeroCases()
		for _, op := range Ops() {
			for i, c := range cases[op.Name] {
				var out []*Tensor
				err := zeroRun(t, op.Name, func() { out = c.run(dev) })
				if err != nil {
					var te *Error
					switch {
					case errors.As(err, &te) && errors.Is(err, hal.ErrUnsupported) && !slices.ContainsFunc(op.DTypes, func(dt DType) bool { return Supports(dev, op.Name, dt) }):
						continue // the device runs the op for no dtype (Float64 on WebGPU)
					case c.misuse != "" && strings.Contains(err.Error(), c.misuse):
						continue
					case errors.Is(err, hal.ErrUnsupported):
						t.Logf("%s case %d on %v: unsupported here: %v", op.Name, i, dev, err)
						continue
					}
					t.Errorf("%s case %d on %v: %v", op.Name, i, dev, err)
					continue
				}
				if c.misuse != "" {
					t.Errorf("%s case %d on %v: no misuse panic, want one saying %q", op.Name, i, dev, c.misuse)
				}
				zeroCheck(t, op.Name, i, c, out)
				releaseAll(out...)
			}
		}
	})
}

// zeroRun runs f, returning the *Error it panicked with; another panic
// fails the test naming the op.
func zeroRun(t *testing.T, op string, f func()) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				t.Fatalf("%s with a zero-size operand panicked with %T: %v", op, r, r)
			}
			err = e
		}
	}()
	f()
	return nil
}

func zeroCheck(t *testing.T, op string, i int, c zcase, out []*Tensor) {
	t.Helper()
	if c.shapes != nil && len(out) != len(c.shapes) {
		t.Errorf("%s case %d: %d results, want %d", op, i, len(out), len(c.shapes))
		return
	}
	for j, x := range out {
		if err := x.Err(); err != nil {
			t.Errorf("%s case %d: result %d carries %v", op, i, j, err)
			continue
		}
		want := x.Shape()
		if c.shapes != nil {
			want = c.shapes[j]
		}
		if !slices.Equal(x.Shape(), want) && !(len(want) == 0 && x.Rank() == 0) {
			t.Errorf("%s case %d: result %d has shape %v, want %v", op, i, j, x.Shape(), want)
			continue
		}
		got, err := x.Float64s()
		if err != nil {
			t.Errorf("%s case %d: reading result %d: %v", op, i, j, err)
			continue
		}
		if len(got) != fzProd(want) {
			t.Errorf("%s case %d: result %d has %d elements for shape %v", op, i, j, len(got), want)
		}
		if c.fill != nil {
			for k, v := range got {
				if v != *c.fill && !(math.IsNaN(v) && math.IsNaN(*c.fill)) {
					t.Errorf("%s case %d: element %d is %v, want %v", op, i, k, v, *c.fill)
					break
				}
			}
		}
	}
}
