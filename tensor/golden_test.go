package tensor

// Conformance against PyTorch: testdata/golden/*.json hold inputs and
// expected outputs written by testdata/golden/gen.py (PyTorch 1.13, see
// testdata/golden/README.md). Every case runs on every device; a case whose
// op or dtype the device does not run must fail with hal.ErrUnsupported.
//
// Run one family or case with, e.g.,
//
//	go test ./tensor -run 'TestGolden/cpu/reductions/'
//	go test ./tensor -run 'TestGolden/webgpu/nn_conv/conv2d_groups2$'

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

const goldenDir = "../testdata/golden"

// ---------------------------------------------------------------- tolerances

// The golden tolerances, in one place: per op family and per dtype. A float
// result passes when
//
//	|got − want| ≤ atol(dtype) + eps(dtype)·(ulps·|want| + k·√n·scale)
//
// where want is PyTorch's float64 result rounded once to the output dtype,
// and scale and n come with each expected output (see gen.py):
//
//   - elementwise ops: scale = Σⱼ |xⱼ·∂f/∂xⱼ|, n = 1 — how far one rounding
//     of the arguments (inside the kernel, e.g. exp computed as exp2(x·log₂e))
//     moves the result;
//   - accumulating ops (sums, matmul, conv, average pools, scatter-add):
//     scale = the op applied to absolute values (Σ|x|, |A|·|B|, …) and n the
//     number of terms per output. The worst-case bound for any summation
//     order is n·eps·Σ|x|, but for these random inputs the rounding errors
//     are independent and grow as √n: both backends stay 10⁴ times inside
//     n·eps·Σ|x| at n = 1025, where that bound would let a dropped term of
//     size 0.1 pass. k·√n·eps·Σ|x| still holds for sequential, pairwise
//     and tiled float32 sums alike;
//   - composite ops (var, logsumexp, softmax, norms, rbf, grid sampling,
//     arange/linspace): a first-order error bound of the same form, derived
//     per op in gen.py.
//
// Exact families compare bit for bit (NaN matches NaN, −0 matches +0).
// Int32 results are always exact. atol is the dtype's smallest normal
// number, since GPUs may flush subnormal results to zero.
//
// These hold under IEEE 754 arithmetic, the CPU backend's. A WebGPU device
// follows WGSL's accuracy rules instead (haltest.WGSLAccuracy): its +, −,
// × and conversions may round to either neighbour, its divisions are good
// to 2.5 ulp and its square roots to 4.5, and it may flush subnormal
// inputs and intermediates. goldenTolOn adds, for each op, the extra ulps
// that haltest's table gives the kernels the op issues (Op.Kernels), and
// flush·(the dtype's smallest normal) for an intermediate flushed to zero
// and then multiplied by up to goldenFlushScale (GELU(x) = x·Φ(x), whose
// Φ(x) is subnormal in float32 for x in [−14, −13]).
type goldenTol struct {
	exact bool
	ulps  float64 // of |want|
	k     float64 // multiplies √n·scale
	flush float64 // absolute, for flushed subnormal intermediates
}

// goldenFlushScale bounds what multiplies a flushed intermediate.
const goldenFlushScale = 16

// goldenConversions are the exact-family ops that round a value into the
// output dtype (a cast, a fill with a constant): WGSL converts to either
// neighbour.
var goldenConversions = map[string]bool{"cast": true, "full": true, "full_like": true}

// goldenTolOn is the tolerance of case c's outputs of dtype dt on dev.
func goldenTolOn(dev *Device, c *goldenCase, op goldenOp, dt DType) goldenTol {
	var kernels []Kernel
	if o, listed := lookupOp(c.opName(op)); listed {
		kernels = o.Kernels(c.mainDType())
	}
	return goldenTolFor(haltest.ArithmeticOf(dev.Info()), c.Op, op.family, kernels, dt)
}

// goldenTolFor is the tolerance of an output of dtype dt of the golden op
// caseOp, of the given family, that issues kernels, on arithmetic ar.
func goldenTolFor(ar haltest.Arithmetic, caseOp, family string, kernels []Kernel, dt DType) goldenTol {
	tol := goldenTolerances[family]
	if ar == haltest.IEEE || dt == Int32 {
		return tol
	}
	if tol.exact {
		if goldenConversions[caseOp] {
			return goldenTol{ulps: 1} // either neighbour of PyTorch's rounding
		}
		// Moves and selections are exact on any device, but a subnormal
		// may read as zero.
		tol.flush = ar.FlushFloor(dt)
		return tol
	}
	for _, k := range kernels {
		tol.ulps += ar.ExtraULPs(k.Name, k.DType)
	}
	tol.flush = goldenFlushScale * ar.FlushFloor(dt)
	return tol
}

var goldenTolerances = map[string]goldenTol{
	"exact":          {exact: true},   // copies, views, comparisons, max/min, argmax, where, relu, clamp, gather…
	"arith":          {ulps: 2},       // one correctly rounded +, −, ·, or scalar constant rounding (leaky_relu α)
	"divsqrt":        {ulps: 3},       // ÷, 1/x, √x, 1/√x (WGSL allows 2.5 ulp for ÷)
	"transcendental": {ulps: 4, k: 2}, // exp, log, tanh, erf, sigmoid, pow, gelu, silu, softplus, elu, sin, cos, tan
	"accumulate":     {ulps: 2, k: 2}, // sum, mean, prod, matmul, gemm, gemv, conv, avg pools, scatter_add
	"composite":      {ulps: 4, k: 2}, // var, std, logsumexp, softmax, log_softmax, norms, rbf, affine_grid, grid_sample, arange, linspace
}

// goldenEps is each dtype's machine epsilon (one ulp at 1) and atol its
// smallest normal number.
var goldenEps = map[DType]struct{ eps, atol float64 }{
	Float32: {0x1p-23, 0x1p-126},
	Float64: {0x1p-52, 0x1p-1022},
	Float16: {0x1p-10, 0x1p-14},
}

// ---------------------------------------------------------------- file format

type goldenFile struct {
	Family string       `json:"family"`
	Torch  string       `json:"torch"`
	Cases  []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name    string          `json:"name"`
	Op      string          `json:"op"`
	Args    goldenArgs      `json:"args"`
	Inputs  []*goldenTensor `json:"inputs"`
	Outputs []goldenTensor  `json:"outputs"`
	Error   string          `json:"error"`
}

type goldenTensor struct {
	DType      string           `json:"dtype"`
	Shape      []int            `json:"shape"`
	Data       goldenNums       `json:"data"`
	View       []map[string]any `json:"view"`
	Contiguous *bool            `json:"contiguous"`
	Scale      goldenNums       `json:"scale"` // one number for all elements, or one per element
	N          int              `json:"n"`
}

// goldenNums decodes a JSON number, or an array of numbers, where NaN and
// infinities are the strings "nan", "inf" and "-inf".
type goldenNums []float64

func (g *goldenNums) UnmarshalJSON(b []byte) error {
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	items, ok := raw.([]any)
	if !ok {
		items = []any{raw}
	}
	out := make([]float64, len(items))
	for i, v := range items {
		f, err := goldenNumber(v)
		if err != nil {
			return err
		}
		out[i] = f
	}
	*g = out
	return nil
}

func goldenNumber(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case string:
		switch v {
		case "nan":
			return math.NaN(), nil
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("golden: bad number %v", v)
}

func goldenDType(name string) DType {
	switch name {
	case "float32":
		return Float32
	case "float64":
		return Float64
	case "float16":
		return Float16
	case "int32":
		return Int32
	}
	panic("golden: unknown dtype " + name)
}

// goldenArgs are a case's op arguments.
type goldenArgs map[string]json.RawMessage

func (a goldenArgs) decode(key string, v any) {
	raw, ok := a[key]
	if !ok {
		panic(fmt.Sprintf("golden: missing argument %q", key))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		panic(fmt.Sprintf("golden: argument %q: %v", key, err))
	}
}

func (a goldenArgs) isNull(key string) bool {
	raw, ok := a[key]
	return !ok || string(raw) == "null"
}

func (a goldenArgs) int(key string) int {
	var v int
	a.decode(key, &v)
	return v
}

func (a goldenArgs) ints(key string) []int {
	if a.isNull(key) {
		return nil
	}
	var v []int
	a.decode(key, &v)
	return v
}

func (a goldenArgs) pair(key string) [2]int {
	v := a.ints(key)
	return [2]int{v[0], v[1]}
}

func (a goldenArgs) bool(key string) bool {
	var v bool
	a.decode(key, &v)
	return v
}

func (a goldenArgs) str(key string) string {
	var v string
	a.decode(key, &v)
	return v
}

// float decodes a number (or "nan"/"inf"/"-inf"); null gives ifNull.
func (a goldenArgs) floatOr(key string, ifNull float64) float64 {
	if a.isNull(key) {
		return ifNull
	}
	var v any
	a.decode(key, &v)
	f, err := goldenNumber(v)
	if err != nil {
		panic(err)
	}
	return f
}

func (a goldenArgs) float(key string) float64 {
	if a.isNull(key) {
		panic(fmt.Sprintf("golden: missing argument %q", key))
	}
	return a.floatOr(key, 0)
}

// ---------------------------------------------------------------- op table

// goldenOp maps a golden op name to a webtensor call.
type goldenOp struct {
	name   string // the op's name in Ops() (for Supports); "" when it takes it from args
	family string // a key of goldenTolerances
	run    func(dev *Device, a goldenArgs, in []*Tensor) []*Tensor
}

func goldenOne(t *Tensor) []*Tensor { return []*Tensor{t} }

var goldenOps = map[string]goldenOp{}

func init() {
	binary := []struct {
		op, name, family string
		fn               func(a, b *Tensor) *Tensor
		scalar           func(t *Tensor, s float64) *Tensor
	}{
		{"add", "Add", "arith", Add, (*Tensor).AddScalar},
		{"sub", "Sub", "arith", Sub, (*Tensor).SubScalar},
		{"mul", "Mul", "arith", Mul, (*Tensor).MulScalar},
		{"div", "Div", "divsqrt", Div, (*Tensor).DivScalar},
		{"pow", "Pow", "transcendental", Pow, (*Tensor).PowScalar},
		{"maximum", "Maximum", "exact", Maximum, (*Tensor).MaximumScalar},
		{"minimum", "Minimum", "exact", Minimum, (*Tensor).MinimumScalar},
		{"eq", "Eq", "exact", Eq, (*Tensor).EqScalar},
		{"ne", "Ne", "exact", Ne, (*Tensor).NeScalar},
		{"lt", "Lt", "exact", Lt, (*Tensor).LtScalar},
		{"le", "Le", "exact", Le, (*Tensor).LeScalar},
		{"gt", "Gt", "exact", Gt, (*Tensor).GtScalar},
		{"ge", "Ge", "exact", Ge, (*Tensor).GeScalar},
	}
	for _, b := range binary {
		goldenOps[b.op] = goldenOp{b.name, b.family, func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(b.fn(in[0], in[1]))
		}}
		goldenOps[b.op+"_scalar"] = goldenOp{b.name + "Scalar", b.family, func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(b.scalar(in[0], a.float("scalar")))
		}}
	}
	goldenOps["where"] = goldenOp{"Where", "exact", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(Where(in[0], in[1], in[2]))
	}}

	unary := []struct {
		op, name, family string
		fn               func(x *Tensor, a goldenArgs) *Tensor
	}{
		{"neg", "Neg", "exact", func(x *Tensor, _ goldenArgs) *Tensor { return x.Neg() }},
		{"abs", "Abs", "exact", func(x *Tensor, _ goldenArgs) *Tensor { return x.Abs() }},
		{"sign", "Sign", "exact", func(x *Tensor, _ goldenArgs) *Tensor { return x.Sign() }},
		{"reciprocal", "Reciprocal", "divsqrt", func(x *Tensor, _ goldenArgs) *Tensor { return x.Reciprocal() }},
		{"sqrt", "Sqrt", "divsqrt", func(x *Tensor, _ goldenArgs) *Tensor { return x.Sqrt() }},
		{"rsqrt", "Rsqrt", "divsqrt", func(x *Tensor, _ goldenArgs) *Tensor { return x.Rsqrt() }},
		{"square", "Square", "arith", func(x *Tensor, _ goldenArgs) *Tensor { return x.Square() }},
		{"exp", "Exp", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Exp() }},
		{"log", "Log", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Log() }},
		{"log1p", "Log1p", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Log1p() }},
		{"sin", "Sin", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Sin() }},
		{"cos", "Cos", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Cos() }},
		{"tan", "Tan", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Tan() }},
		{"tanh", "Tanh", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Tanh() }},
		{"erf", "Erf", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Erf() }},
		{"sigmoid", "Sigmoid", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.Sigmoid() }},
		{"relu", "ReLU", "exact", func(x *Tensor, _ goldenArgs) *Tensor { return x.ReLU() }},
		{"leaky_relu", "LeakyReLU", "arith", func(x *Tensor, a goldenArgs) *Tensor { return x.LeakyReLU(a.float("alpha")) }},
		{"elu", "ELU", "transcendental", func(x *Tensor, a goldenArgs) *Tensor { return x.ELU(a.float("alpha")) }},
		{"gelu", "GELU", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.GELU() }},
		{"gelu_tanh", "GELUTanh", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.GELUTanh() }},
		{"silu", "SiLU", "transcendental", func(x *Tensor, _ goldenArgs) *Tensor { return x.SiLU() }},
		{"softplus", "Softplus", "transcendental", func(x *Tensor, a goldenArgs) *Tensor {
			return x.Softplus(a.float("beta"), a.float("threshold"))
		}},
		{"clamp", "Clamp", "exact", func(x *Tensor, a goldenArgs) *Tensor {
			return x.Clamp(a.floatOr("min", math.Inf(-1)), a.floatOr("max", math.Inf(1)))
		}},
	}
	for _, u := range unary {
		goldenOps[u.op] = goldenOp{u.name, u.family, func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(u.fn(in[0], a))
		}}
	}

	reductions := []struct {
		op, name, family string
		fn               func(t *Tensor, dims []int, keepDim bool) *Tensor
	}{
		{"sum", "Sum", "accumulate", (*Tensor).Sum},
		{"mean", "Mean", "accumulate", (*Tensor).Mean},
		{"prod", "Prod", "accumulate", (*Tensor).Prod},
		{"max", "Max", "exact", (*Tensor).Max},
		{"min", "Min", "exact", (*Tensor).Min},
		{"logsumexp", "LogSumExp", "composite", (*Tensor).LogSumExp},
	}
	for _, r := range reductions {
		goldenOps[r.op] = goldenOp{r.name, r.family, func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(r.fn(in[0], a.ints("dims"), a.bool("keepdim")))
		}}
	}
	for op, fn := range map[string]func(t *Tensor, dims []int, keepDim bool) *Tensor{"argmax": (*Tensor).ArgMax, "argmin": (*Tensor).ArgMin} {
		goldenOps[op] = goldenOp{map[string]string{"argmax": "ArgMax", "argmin": "ArgMin"}[op], "exact",
			func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
				var dims []int
				if !a.isNull("dim") {
					dims = []int{a.int("dim")}
				}
				return goldenOne(fn(in[0], dims, a.bool("keepdim")))
			}}
	}
	goldenOps["var"] = goldenOp{"Var", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].Var(a.ints("dims"), a.int("correction"), a.bool("keepdim")))
	}}
	goldenOps["std"] = goldenOp{"Std", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].Std(a.ints("dims"), a.int("correction"), a.bool("keepdim")))
	}}

	// Linear algebra.
	goldenOps["matmul"] = goldenOp{"MatMul", "accumulate", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(MatMul(in[0], in[1]))
	}}
	goldenOps["gemm"] = goldenOp{"Gemm", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(Gemm(a.float("alpha"), in[0], a.bool("trans_a"), in[1], a.bool("trans_b"), a.float("beta"), in[2]))
	}}
	goldenOps["matvec"] = goldenOp{"MatVec", "accumulate", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(MatVec(in[0], in[1]))
	}}
	goldenOps["outer"] = goldenOp{"Outer", "arith", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(Outer(in[0], in[1]))
	}}
	goldenOps["t"] = goldenOp{"T", "exact", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor { return goldenOne(in[0].T()) }}
	goldenOps["transpose"] = goldenOp{"Transpose", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		d := a.ints("dims")
		return goldenOne(in[0].Transpose(d[0], d[1]))
	}}
	goldenOps["permute"] = goldenOp{"Permute", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
		return goldenOne(in[0].Permute(a.ints("dims")...))
	}}

	// Shape.
	shape := map[string]goldenOp{
		"reshape": {"Reshape", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Reshape(a.ints("shape")...))
		}},
		"flatten": {"Flatten", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Flatten(a.int("start"), a.int("end")))
		}},
		"squeeze": {"Squeeze", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Squeeze(a.ints("dims")...))
		}},
		"unsqueeze": {"Unsqueeze", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Unsqueeze(a.int("dim")))
		}},
		"expand": {"Expand", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Expand(a.ints("shape")...))
		}},
		"broadcast_to": {"BroadcastTo", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].BroadcastTo(a.ints("shape")...))
		}},
		"slice": {"Slice", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Slice(a.int("dim"), a.int("start"), a.int("end"), a.int("step")))
		}},
		"concat": {"Concat", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(Concat(a.int("dim"), in...))
		}},
		"stack": {"Stack", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(Stack(a.int("dim"), in...))
		}},
		"split": {"Split", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return in[0].Split(a.int("dim"), a.int("size"))
		}},
		"chunk": {"Chunk", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return in[0].Chunk(a.int("dim"), a.int("chunks"))
		}},
		"pad": {"", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Pad(a.ints("pads"), goldenPadMode(a), a.float("value")))
		}},
		"contiguous": {"Contiguous", "exact", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Contiguous())
		}},
		"cast": {"Cast", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Cast(goldenDType(a.str("to"))))
		}},
		// Indexing.
		"gather": {"Gather", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Gather(a.int("dim"), in[1]))
		}},
		"index_select": {"IndexSelect", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].IndexSelect(a.int("dim"), in[1]))
		}},
		"scatter_add": {"ScatterAdd", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].ScatterAdd(a.int("dim"), in[1], in[2]))
		}},
		"one_hot": {"OneHot", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(OneHot(in[0], a.int("num_classes")))
		}},
	}
	for k, v := range shape {
		goldenOps[k] = v
	}

	// Neural-network ops.
	nn := map[string]goldenOp{
		"conv2d": {"Conv2d", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(Conv2d(in[0], in[1], in[2], ConvOptions{Stride: a.pair("stride"), Padding: a.pair("padding"),
				Dilation: a.pair("dilation"), Groups: a.int("groups")}))
		}},
		"conv_transpose2d": {"ConvTranspose2d", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(ConvTranspose2d(in[0], in[1], in[2], ConvTransposeOptions{Stride: a.pair("stride"),
				Padding: a.pair("padding"), OutputPadding: a.pair("output_padding"), Dilation: a.pair("dilation"),
				Groups: a.int("groups")}))
		}},
		"max_pool2d": {"MaxPool2d", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			v, i := MaxPool2d(in[0], goldenPoolOptions(a))
			return []*Tensor{v, i}
		}},
		"avg_pool2d": {"AvgPool2d", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(AvgPool2d(in[0], goldenPoolOptions(a), a.bool("count_include_pad")))
		}},
		"adaptive_avg_pool2d": {"AdaptiveAvgPool2d", "accumulate", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			s := a.pair("output_size")
			return goldenOne(AdaptiveAvgPool2d(in[0], s[0], s[1]))
		}},
		// BatchNorm's outputs are y and, when training with running
		// statistics, the running mean and variance it updated in place.
		"batch_norm": {"BatchNorm", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			training := a.bool("training")
			y := BatchNorm(in[0], in[1], in[2], in[3], in[4], training, a.float("momentum"), a.float("eps"))
			if training && in[1] != nil {
				return []*Tensor{y, in[1], in[2]}
			}
			return goldenOne(y)
		}},
		"layer_norm": {"LayerNorm", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(LayerNorm(in[0], a.ints("normalized_shape"), in[1], in[2], a.float("eps")))
		}},
		"softmax": {"Softmax", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].Softmax(a.int("dim")))
		}},
		"log_softmax": {"LogSoftmax", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(in[0].LogSoftmax(a.int("dim")))
		}},
		"rbf_kernel": {"RBFKernel", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(RBFKernel(in[0], in[1], a.float("gamma")))
		}},
		"affine_grid": {"AffineGrid", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(AffineGrid(in[0], a.ints("size"), a.bool("align_corners")))
		}},
		"grid_sample": {"GridSample", "composite", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			pad := map[string]GridPadding{"zeros": GridZeros, "border": GridBorder}[a.str("padding_mode")]
			return goldenOne(GridSample(in[0], in[1], pad, a.bool("align_corners")))
		}},
	}
	for k, v := range nn {
		goldenOps[k] = v
	}

	// Creation.
	creation := map[string]goldenOp{
		"zeros": {"Zeros", "exact", func(dev *Device, a goldenArgs, _ []*Tensor) []*Tensor {
			return goldenOne(Zeros(dev, a.ints("shape")...))
		}},
		"ones": {"Ones", "exact", func(dev *Device, a goldenArgs, _ []*Tensor) []*Tensor {
			return goldenOne(Ones(dev, a.ints("shape")...))
		}},
		"full": {"Full", "exact", func(dev *Device, a goldenArgs, _ []*Tensor) []*Tensor {
			return goldenOne(Full(dev, goldenDType(a.str("dtype")), a.float("value"), a.ints("shape")...))
		}},
		"arange": {"Arange", "composite", func(dev *Device, a goldenArgs, _ []*Tensor) []*Tensor {
			return goldenOne(Arange(dev, goldenDType(a.str("dtype")), a.float("start"), a.float("end"), a.float("step")))
		}},
		"linspace": {"Linspace", "composite", func(dev *Device, a goldenArgs, _ []*Tensor) []*Tensor {
			return goldenOne(Linspace(dev, a.float("start"), a.float("end"), a.int("steps")))
		}},
		"eye": {"Eye", "exact", func(dev *Device, a goldenArgs, _ []*Tensor) []*Tensor {
			return goldenOne(Eye(dev, a.int("n"), a.int("m")))
		}},
		"zeros_like": {"ZerosLike", "exact", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor { return goldenOne(ZerosLike(in[0])) }},
		"ones_like":  {"OnesLike", "exact", func(_ *Device, _ goldenArgs, in []*Tensor) []*Tensor { return goldenOne(OnesLike(in[0])) }},
		"full_like": {"FullLike", "exact", func(_ *Device, a goldenArgs, in []*Tensor) []*Tensor {
			return goldenOne(FullLike(in[0], a.float("value")))
		}},
	}
	for k, v := range creation {
		goldenOps[k] = v
	}
}

func goldenPadMode(a goldenArgs) PadMode {
	switch m := a.str("mode"); m {
	case "constant":
		return PadConstant
	case "reflect":
		return PadReflect
	default:
		panic("golden: unknown pad mode " + m)
	}
}

func goldenPoolOptions(a goldenArgs) PoolOptions {
	return PoolOptions{Kernel: a.pair("kernel"), Stride: a.pair("stride"), Padding: a.pair("padding"),
		Dilation: a.pair("dilation"), CeilMode: a.bool("ceil_mode")}
}

// opName is the name Supports knows the case's op by.
func (c *goldenCase) opName(op goldenOp) string {
	if c.Op == "pad" {
		if c.Args.str("mode") == "reflect" {
			return "Pad(reflect)"
		}
		return "Pad"
	}
	return op.name
}

// mainDType is the dtype Supports is asked about: the first input's, or
// the dtype a creation op makes.
func (c *goldenCase) mainDType() DType {
	for _, in := range c.Inputs {
		if in != nil {
			return goldenDType(in.DType)
		}
	}
	if !c.Args.isNull("dtype") {
		return goldenDType(c.Args.str("dtype"))
	}
	return Float32
}

// dtypes lists every dtype the case's inputs and outputs use.
func (c *goldenCase) dtypes() []DType {
	var out []DType
	add := func(name string) {
		if t := goldenDType(name); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, in := range c.Inputs {
		if in != nil {
			add(in.DType)
		}
	}
	for _, o := range c.Outputs {
		add(o.DType)
	}
	if !c.Args.isNull("dtype") {
		add(c.Args.str("dtype"))
	}
	return out
}

// required reports whether the case must run on every device, whatever the
// device declares: float32 runs everywhere (with Int32 indices, masks and
// argmax results), so a float32 op that a device refuses is a failure,
// not an expected ErrUnsupported.
func (c *goldenCase) required() bool {
	if c.mainDType() != Float32 {
		return false
	}
	for _, t := range c.dtypes() {
		if t != Float32 && t != Int32 {
			return false
		}
	}
	return true
}

// supported reports whether dev declares the case runnable: Supports says
// so for the op (when the op table lists it), and the device holds every
// dtype the case uses.
func (c *goldenCase) supported(dev *Device, op goldenOp) (bool, string) {
	name := c.opName(op)
	if _, listed := lookupOp(name); listed {
		if t := c.mainDType(); !Supports(dev, name, t) {
			return false, fmt.Sprintf("Supports(%s, %v) is false", name, t)
		}
	}
	for _, t := range c.dtypes() {
		if !dev.caps().Supports(hal.KernelCopy, t) {
			return false, fmt.Sprintf("the device holds no %v", t)
		}
	}
	return true, ""
}

// ---------------------------------------------------------------- running

func loadGolden(t *testing.T) []goldenFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no golden files in %s (run `make golden`)", goldenDir)
	var files []goldenFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var f goldenFile
		require.NoError(t, json.Unmarshal(b, &f), p)
		require.Equal(t, strings.TrimSuffix(filepath.Base(p), ".json"), f.Family, p)
		files = append(files, f)
	}
	return files
}

func TestGolden(t *testing.T) {
	files := loadGolden(t)
	// Every op in the files has a Go call, before any device runs.
	for _, f := range files {
		for _, c := range f.Cases {
			op, ok := goldenOps[c.Op]
			require.True(t, ok, "%s/%s: no Go call for op %q", f.Family, c.Name, c.Op)
			_, ok = goldenTolerances[op.family]
			require.True(t, ok, "op %q: unknown tolerance family %q", c.Op, op.family)
		}
	}
	forEachDevice(t, func(t *testing.T, dev *Device) {
		counts := map[string]int{}
		for _, f := range files {
			t.Run(f.Family, func(t *testing.T) {
				for i := range f.Cases {
					c := &f.Cases[i]
					t.Run(c.Name, func(t *testing.T) { counts[runGoldenCase(t, dev, c)]++ })
				}
			})
		}
		t.Logf("%v: %d cases compared with PyTorch, %d refused with ErrUnsupported as declared, %d errors as PyTorch",
			dev, counts["compared"], counts["unsupported"], counts["error"])
	})
}

// runGoldenCase runs one case and says how it ended: "compared",
// "unsupported" or "error" (an error PyTorch raises too).
func runGoldenCase(t *testing.T, dev *Device, c *goldenCase) (outcome string) {
	op := goldenOps[c.Op]
	var made []*Tensor
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked: %v\n%s", c.Op, r, debug.Stack())
		}
		for _, x := range made {
			x.Release()
		}
	}()
	track := func(x *Tensor) *Tensor {
		if x != nil {
			made = append(made, x)
		}
		return x
	}

	ok, why := c.supported(dev, op)
	wantErr := c.Error
	if wantErr == "" && !ok && !c.required() {
		wantErr = "unsupported"
	}
	if wantErr == "" && !ok {
		// Run it anyway, to show what happens, but it fails.
		t.Errorf("%s on %v must run (float32 runs on every device), but the device declares it unsupported: %s", c.Op, c.mainDType(), why)
	}

	// Build the inputs and run the op; misuse and unsupported ops panic
	// with *Error, device failures surface when reading.
	var outs []*Tensor
	err := Catch(func() {
		in := make([]*Tensor, len(c.Inputs))
		for i, g := range c.Inputs {
			if g != nil {
				in[i] = buildGoldenInput(t, dev, g, track)
			}
		}
		outs = op.run(dev, c.Args, in)
		for _, o := range outs {
			if !slices.Contains(made, o) {
				track(o)
			}
		}
	})
	type result struct {
		f []float64
		i []int32
	}
	results := make([]result, len(outs))
	if err == nil {
		for k, o := range outs {
			if o.DType() == Int32 {
				results[k].i, err = o.Int32s()
			} else {
				results[k].f, err = o.Float64s()
			}
			if err != nil {
				break
			}
		}
	}
	if err == nil {
		err = dev.Sync()
	}

	switch wantErr {
	case "unsupported":
		if err == nil {
			t.Fatalf("%s ran, but should fail with hal.ErrUnsupported (%s)", c.Op, why)
		}
		if !errors.Is(err, hal.ErrUnsupported) {
			t.Fatalf("%s should fail with hal.ErrUnsupported (%s), got: %v", c.Op, why, err)
		}
		return "unsupported"
	case "any":
		if err == nil {
			t.Fatalf("%s should fail (PyTorch raises), but ran", c.Op)
		}
		return "error"
	case "":
	default:
		t.Fatalf("golden: unknown expected error %q", wantErr)
	}
	require.NoError(t, err, "%s", c.Op)
	require.Len(t, outs, len(c.Outputs), "%s: number of outputs", c.Op)

	for k, want := range c.Outputs {
		got := outs[k]
		label := fmt.Sprintf("output %d", k)
		if !slices.Equal(got.Shape(), want.Shape) && !(len(got.Shape()) == 0 && len(want.Shape) == 0) {
			t.Errorf("%s: shape %v, want %v", label, got.Shape(), want.Shape)
			continue
		}
		wantDT := goldenDType(want.DType)
		if got.DType() != wantDT {
			t.Errorf("%s: dtype %v, want %v", label, got.DType(), wantDT)
			continue
		}
		if len(want.Data) != got.Len() {
			t.Fatalf("golden: %s has %d values for shape %v", label, len(want.Data), want.Shape)
		}
		if wantDT == Int32 {
			compareGoldenInts(t, label, results[k].i, want.Data)
		} else {
			compareGoldenFloats(t, label, results[k].f, want, wantDT, goldenTolOn(dev, c, op, wantDT))
		}
	}
	return "compared"
}

// buildGoldenInput uploads g's base tensor and takes its views.
func buildGoldenInput(t *testing.T, dev *Device, g *goldenTensor, track func(*Tensor) *Tensor) *Tensor {
	var x *Tensor
	switch dt := goldenDType(g.DType); dt {
	case Float32, Float16:
		data := make([]float32, len(g.Data))
		for i, v := range g.Data {
			data[i] = float32(v)
		}
		x = track(FromFloat32(dev, data, g.Shape...))
		if dt == Float16 {
			x = track(x.Cast(Float16))
		}
	case Float64:
		x = track(FromFloat64(dev, slices.Clone(g.Data), g.Shape...))
	case Int32:
		data := make([]int32, len(g.Data))
		for i, v := range g.Data {
			data[i] = int32(v)
		}
		x = track(FromInt32(dev, data, g.Shape...))
	}
	for _, v := range g.View {
		for kind, arg := range v {
			a := goldenViewInts(arg)
			switch kind {
			case "transpose":
				x = track(x.Transpose(a[0], a[1]))
			case "permute":
				x = track(x.Permute(a...))
			case "expand":
				x = track(x.Expand(a...))
			case "slice":
				x = track(x.Slice(a[0], a[1], a[2], a[3]))
			default:
				panic("golden: unknown view " + kind)
			}
		}
	}
	// A view PyTorch keeps non-contiguous must be a strided view here too,
	// not a copy, so that the kernels' stride handling is what is tested.
	if g.Contiguous != nil && !*g.Contiguous && x.IsContiguous() {
		t.Errorf("input view %v is contiguous (a copy?); PyTorch's is a strided view", g.View)
	}
	return x
}

func goldenViewInts(arg any) []int {
	items := arg.([]any)
	out := make([]int, len(items))
	for i, v := range items {
		out[i] = int(v.(float64))
	}
	return out
}

func compareGoldenInts(t *testing.T, label string, got []int32, want []float64) {
	t.Helper()
	if n, bad := goldenIntMismatches(got, want); n > 0 {
		t.Errorf("%s: %d of %d elements differ: %s", label, n, len(want), strings.Join(bad, "; "))
	}
}

// goldenIntMismatches counts the elements of got that differ from want,
// with a few examples.
func goldenIntMismatches(got []int32, want []float64) (int, []string) {
	var bad []string
	n := 0
	for i := range want {
		if float64(got[i]) != want[i] {
			n++
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("[%d] got %d, want %d", i, got[i], int64(want[i])))
			}
		}
	}
	return n, bad
}

func compareGoldenFloats(t *testing.T, label string, got []float64, want goldenTensor, dt DType, tol goldenTol) {
	t.Helper()
	if n, bad := goldenFloatMismatches(got, want, dt, tol); n > 0 {
		t.Errorf("%s (%v): %d of %d elements differ: %s", label, dt, n, len(want.Data), strings.Join(bad, "; "))
	}
	if os.Getenv("WEBTENSOR_GOLDEN_MARGIN") != "" && !tol.exact {
		t.Logf("%s (%v): worst |diff|/tol = %.3g", label, dt, goldenWorstRatio(got, want, dt, tol))
	}
}

// goldenWorstRatio is the largest |got − want| / tolerance over the finite
// elements: how close a passing result came to failing.
func goldenWorstRatio(got []float64, want goldenTensor, dt DType, tol goldenTol) float64 {
	e := goldenEps[dt]
	n := math.Sqrt(float64(max(want.N, 1)))
	worst := 0.0
	for i, w := range want.Data {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			continue
		}
		s := 0.0
		switch len(want.Scale) {
		case 0:
		case 1:
			s = want.Scale[0]
		default:
			s = want.Scale[i]
		}
		bound := e.atol + tol.flush + e.eps*(tol.ulps*math.Abs(w)+tol.k*n*s)
		worst = max(worst, math.Abs(got[i]-w)/bound)
	}
	return worst
}

// goldenFloatMismatches counts the elements of got outside the tolerance
// of want, with a few examples.
func goldenFloatMismatches(got []float64, want goldenTensor, dt DType, tol goldenTol) (int, []string) {
	e := goldenEps[dt]
	scale := func(i int) float64 {
		switch len(want.Scale) {
		case 0:
			return 0
		case 1:
			return want.Scale[0]
		}
		return want.Scale[i]
	}
	n := math.Sqrt(float64(max(want.N, 1)))
	var bad []string
	count := 0
	for i, w := range want.Data {
		g := got[i]
		var ok bool
		var bound float64
		switch {
		case math.IsNaN(w):
			ok = math.IsNaN(g)
		case math.IsInf(w, 0):
			ok = g == w
		case tol.exact:
			ok = g == w || g == 0 && math.Abs(w) < tol.flush
		default:
			bound = e.atol + tol.flush + e.eps*(tol.ulps*math.Abs(w)+tol.k*n*scale(i))
			ok = math.Abs(g-w) <= bound // false for NaN and infinities
		}
		if !ok {
			count++
			if len(bad) < 5 {
				if tol.exact || math.IsNaN(w) || math.IsInf(w, 0) {
					bad = append(bad, fmt.Sprintf("[%d] got %v, want %v", i, g, w))
				} else {
					bad = append(bad, fmt.Sprintf("[%d] got %v, want %v (|diff| %.3g > tol %.3g)", i, g, w, math.Abs(g-w), bound))
				}
			}
		}
	}
	return count, bad
}

// The comparison itself: exact families are bit-exact, NaN and infinities
// must match, and the bound scales as documented above.
func TestGoldenComparator(t *testing.T) {
	f32 := func(data, scale []float64, n int) goldenTensor {
		return goldenTensor{DType: "float32", Data: data, Scale: scale, N: n}
	}
	inf, nan := math.Inf(1), math.NaN()
	ulp := 0x1p-23
	for _, c := range []struct {
		name   string
		got    []float64
		want   goldenTensor
		family string
		bad    int
	}{
		{"exact equal", []float64{1, -0.0, inf, nan}, f32([]float64{1, 0, inf, nan}, nil, 0), "exact", 0},
		{"exact one ulp", []float64{1 + ulp}, f32([]float64{1}, nil, 0), "exact", 1},
		{"nan for number", []float64{nan, 1}, f32([]float64{1, nan}, nil, 0), "arith", 2},
		{"inf sign", []float64{-inf}, f32([]float64{inf}, nil, 0), "arith", 1},
		{"finite for inf", []float64{3e38}, f32([]float64{inf}, nil, 0), "transcendental", 1},
		{"arith 2 ulp", []float64{1 + 2*ulp, 1 - 3*ulp}, f32([]float64{1, 1}, nil, 0), "arith", 1},
		{"scale", []float64{10 + 40*ulp, 10 + 41*ulp}, f32([]float64{10, 10}, []float64{10}, 1), "accumulate", 1},
		{"√n·scale", []float64{1 + 16*ulp, 1 + 17*ulp}, f32([]float64{1, 1}, []float64{1, 1}, 49), "accumulate", 1},
		{"subnormal flush", []float64{0}, f32([]float64{1e-40}, nil, 0), "arith", 0},
	} {
		n, bad := goldenFloatMismatches(c.got, c.want, Float32, goldenTolerances[c.family])
		require.Equal(t, c.bad, n, "%s: %v", c.name, bad)
	}
	n, _ := goldenIntMismatches([]int32{1, 2, 3}, []float64{1, 2, 4})
	require.Equal(t, 1, n)
}

// The tolerances a WebGPU device gets: WGSL's latitude for the kernels an
// op issues, and no more.
func TestGoldenToleranceWGSL(t *testing.T) {
	ulp := 0x1p-23
	q := 1.3
	div := []Kernel{{hal.Div.Kernel(), Float32}}
	gelu := []Kernel{{hal.GELU.Kernel(), Float32}}
	cast := []Kernel{{hal.KernelCopy, Float32}, {hal.KernelCopy, Float16}}
	for _, c := range []struct {
		name    string
		ar      haltest.Arithmetic
		op, fam string
		kernels []Kernel
		dt      DType
		got     float64
		want    float64
		ok      bool
	}{
		{"div 4 ulp on WGSL", haltest.WGSL, "div", "divsqrt", div, Float32, q + 4*ulp, q, true},
		{"div 4 ulp on IEEE", haltest.IEEE, "div", "divsqrt", div, Float32, q + 4*ulp, q, false},
		{"div 1e-4 on WGSL", haltest.WGSL, "div", "divsqrt", div, Float32, q * (1 + 1e-4), q, false},
		{"div 8 ulp on WGSL", haltest.WGSL, "div", "divsqrt", div, Float32, q + 8*ulp, q, false},
		{"GELU(−12.99) flushed on WGSL", haltest.WGSL, "gelu", "transcendental", gelu, Float32, 0, -9.3e-38, true},
		{"GELU(−12.99) flushed on IEEE", haltest.IEEE, "gelu", "transcendental", gelu, Float32, 0, -9.3e-38, false},
		{"GELU 1e-5 on WGSL", haltest.WGSL, "gelu", "transcendental", gelu, Float32, -0.1 * (1 + 1e-5), -0.1, false},
		{"cast other neighbour on WGSL", haltest.WGSL, "cast", "exact", cast, Float16, 1 + 0x1p-10, 1, true},
		{"cast other neighbour on IEEE", haltest.IEEE, "cast", "exact", cast, Float16, 1 + 0x1p-10, 1, false},
		{"cast 2 ulp on WGSL", haltest.WGSL, "cast", "exact", cast, Float16, 1 + 0x1p-9, 1, false},
		{"copy subnormal flushed on WGSL", haltest.WGSL, "contiguous", "exact", nil, Float32, 0, 1e-40, true},
		{"copy off by one ulp on WGSL", haltest.WGSL, "contiguous", "exact", nil, Float32, 1 + ulp, 1, false},
	} {
		tol := goldenTolFor(c.ar, c.op, c.fam, c.kernels, c.dt)
		want := goldenTensor{DType: c.dt.String(), Data: []float64{c.want}}
		n, bad := goldenFloatMismatches([]float64{c.got}, want, c.dt, tol)
		require.Equal(t, c.ok, n == 0, "%s: %v", c.name, bad)
	}
}
