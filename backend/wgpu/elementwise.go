//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/hal"
)

// elementwiseCapabilities declares the elementwise families, each kernel
// for the dtypes of its entry in hal's kernel table that the device holds.
func (d *Device) elementwiseCapabilities(c hal.Capabilities) {
	c.Declare(d.numericTypes(), hal.FamilyFill, hal.FamilyRandom, hal.FamilyCopy, hal.FamilyUnary, hal.FamilyBinary, hal.FamilyWhere)
}

// unaryFloat are the unary kernels over float32 a (float16 loads convert);
// Alpha and Beta arrive as params.f.x and params.f.y.
var unaryFloat = map[hal.UnaryOp]string{
	hal.Neg:        "-a",
	hal.Abs:        "abs(a)",
	hal.Sign:       "sign_f(a)",
	hal.Reciprocal: "1.0 / a",
	hal.Sqrt:       "sqrt_f(a)",
	hal.Rsqrt:      "rsqrt_f(a)",
	hal.Square:     "a * a",
	hal.Exp:        "exp_f(a)",
	hal.Expm1:      "expm1_f(a)",
	hal.Log:        "log_f(a)",
	hal.Log1p:      "log1p_f(a)",
	hal.Sin:        "sin_f(a)",
	hal.Cos:        "cos_f(a)",
	hal.Tan:        "tan_f(a)",
	hal.Tanh:       "tanh_f(a)",
	hal.Sigmoid:    "sigmoid_f(a)",
	hal.ReLU:       "relu_f(a)",
	hal.LeakyReLU:  "leaky_relu_f(a, params.f.x)",
	hal.ELU:        "elu_f(a, params.f.x)",
	hal.GELU:       "a * normal_cdf(a)",
	hal.GELUTanh:   "gelu_tanh_f(a)",
	hal.SiLU:       "a * sigmoid_f(a)",
	hal.Softplus:   "softplus_f(a, params.f.x, params.f.y)",
	hal.Clamp:      "clamp_f(a, params.f.x, params.f.y)",
	hal.Erf:        "erf_f(a)",
}

// unaryInt are the Int32 unary kernels: i32 arithmetic wraps, as in Go;
// Clamp's bounds arrive as params.u.x and params.u.y.
var unaryInt = map[hal.UnaryOp]string{
	hal.Neg:    "-a",
	hal.Abs:    "abs(a)",
	hal.Sign:   "select(select(0, -1, a < 0), 1, a > 0)",
	hal.Square: "a * a",
	hal.ReLU:   "max(a, 0)",
	hal.Clamp:  "min(max(a, bitcast<i32>(params.u.x)), bitcast<i32>(params.u.y))",
}

// binaryFloat are the binary kernels over float32 a and b. Comparisons
// test NaN explicitly: WGSL lets a compiler assume there is none.
var binaryFloat = map[hal.BinaryOp]string{
	hal.Add:     "a + b",
	hal.Sub:     "a - b",
	hal.Mul:     "a * b",
	hal.Div:     "a / b",
	hal.Pow:     "pow_f(a, b)",
	hal.Maximum: "max_f(a, b)",
	hal.Minimum: "min_f(a, b)",
	hal.Eq:      "select(0, 1, !is_nan(a) && !is_nan(b) && a == b)",
	hal.Ne:      "select(0, 1, is_nan(a) || is_nan(b) || a != b)",
	hal.Lt:      "select(0, 1, !is_nan(a) && !is_nan(b) && a < b)",
	hal.Le:      "select(0, 1, !is_nan(a) && !is_nan(b) && a <= b)",
	hal.Gt:      "select(0, 1, !is_nan(a) && !is_nan(b) && a > b)",
	hal.Ge:      "select(0, 1, !is_nan(a) && !is_nan(b) && a >= b)",
	// A NaN b passes a, as on the CPU.
	hal.ReLUGrad: "select(a, 0.0, !is_nan(b) && b <= 0.0)",
}

// binaryInt are the Int32 binary kernels.
var binaryInt = map[hal.BinaryOp]string{
	hal.Add:      "a + b",
	hal.Sub:      "a - b",
	hal.Mul:      "a * b",
	hal.Maximum:  "max(a, b)",
	hal.Minimum:  "min(a, b)",
	hal.Eq:       "select(0, 1, a == b)",
	hal.Ne:       "select(0, 1, a != b)",
	hal.Lt:       "select(0, 1, a < b)",
	hal.Le:       "select(0, 1, a <= b)",
	hal.Gt:       "select(0, 1, a > b)",
	hal.Ge:       "select(0, 1, a >= b)",
	hal.ReLUGrad: "select(a, 0, b <= 0)",
}

// loadType is how an operand of dtype t is bound and loaded for
// arithmetic: float16 computes in float32.
func loadType(t hal.DType) (typ, load string) {
	if t == hal.Float16 {
		return "f16", "f32"
	}
	return wgslType(t), ""
}

// bitsType is how an operand of dtype t is bound when it is only moved:
// as i32 for both 4-byte dtypes, so that float32 bits (NaN payloads
// included) pass untouched and float32 and int32 share kernels.
func bitsType(t hal.DType) string {
	if t == hal.Float16 {
		return "f16"
	}
	return "i32"
}

// store rounds a float32 value to float dtype t.
func store(t hal.DType, expr string) string {
	if t == hal.Float16 {
		return "to_f16(" + expr + ")"
	}
	return expr
}

// ewCheck validates the operands of an elementwise kernel: the device is
// open, every view is ours and in bounds, inputs have dst's shape, and an
// input shares dst's buffer only as the very same view.
func (d *Device) ewCheck(op string, dst hal.View, inputs ...hal.View) (operand, []operand, error) {
	if d.rt.Closed() {
		return operand{}, nil, fmt.Errorf("webgpu: %s on closed device: %w", op, hal.ErrClosed)
	}
	all, err := d.chunkableOperands(op, append([]hal.View{dst}, inputs...)...)
	if err != nil {
		return operand{}, nil, err
	}
	out, ins := all[0], all[1:]
	for i, in := range ins {
		if !slices.Equal(in.Shape, out.Shape) {
			return operand{}, nil, fmt.Errorf("webgpu: %s: input %d has shape %v, dst %v: %w", op, i, in.Shape, out.Shape, hal.ErrInvalid)
		}
		if in.alloc == out.alloc && !in.Same(out.View) {
			return operand{}, nil, fmt.Errorf("webgpu: %s: input %v shares dst %v's buffer without being the same view: %w", op, in.View, out.View, hal.ErrInvalid)
		}
	}
	return out, ins, nil
}

// needContiguous fails unless dst is row-major.
func needContiguous(op string, dst operand) error {
	if !dst.Contiguous() {
		return fmt.Errorf("webgpu: %s: dst %v must be contiguous: %w", op, dst.View, hal.ErrInvalid)
	}
	return nil
}

// needNoOverlap fails if a strided dst could reach an element twice.
func needNoOverlap(op string, dst operand) error {
	if overlaps(dst.Shape, dst.Strides) {
		return fmt.Errorf("webgpu: %s: dst %v has overlapping strides: %w", op, dst.View, hal.ErrInvalid)
	}
	return nil
}

// Fill sets dst's elements to start + i·step. Int32 ramps whose values all
// fit are computed exactly in i32; float ramps in float32 from start and
// step each split into a float32 and its float32 remainder, so that only
// the product and the sums round.
func (d *Device) Fill(dst hal.View, start, step float64) error {
	const op = hal.KernelFill
	out, _, err := d.ewCheck(op, dst)
	if err != nil {
		return err
	}
	if err := d.supports(op, out.DType); err != nil {
		return err
	}
	if err := needNoOverlap(op, out); err != nil {
		return err
	}
	j := ewJob{op: op, dst: out, dstTyp: wgslType(out.DType), math: true}
	last := float64(max(out.Elements()-1, 0))
	if out.DType == hal.Int32 && isInt32(start) && isInt32(step) && isInt32(start+last*step) {
		// i32 arithmetic wraps, but every value it yields is in range.
		j.u[0], j.u[1] = uint32(int32(start)), uint32(int32(step))
		j.value = "bitcast<i32>(params.u.x) + i32(i) * bitcast<i32>(params.u.y)"
		j.rebase = func(j *ewJob, base int64) { j.u[0] = uint32(int32(start + float64(base)*step)) }
		return j.run(d)
	}
	value := "params.f.x"
	if step == 0 {
		j.f[0] = float32(start)
	} else {
		j.f[0], j.f[1] = split32(start)
		j.f[2], j.f[3] = split32(step)
		value = "params.f.x + (f32(i) * params.f.z + (params.f.y + f32(i) * params.f.w))"
		j.rebase = func(j *ewJob, base int64) { j.f[0], j.f[1] = split32(start + float64(base)*step) }
	}
	if out.DType == hal.Int32 {
		j.value = "f32_to_i32(" + value + ")"
	} else {
		j.value = store(out.DType, value)
	}
	return j.run(d)
}

// isInt32 reports whether v is an integer in int32's range.
func isInt32(v float64) bool {
	return v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32
}

// split32 returns v as a float32 and the float32 rounding of what that
// misses (0 for infinities and NaN).
func split32(v float64) (hi, lo float32) {
	hi = float32(v)
	if math.IsInf(v, 0) || math.IsNaN(v) || math.IsInf(float64(hi), 0) {
		return hi, 0
	}
	return hi, float32(v - float64(hi))
}

// Random fills dst from the Philox4x32-10 stream; see hal.Distribution.
func (d *Device) Random(dst hal.View, dist hal.Distribution, p float64, seed, offset uint64) error {
	op := dist.Kernel()
	out, _, err := d.ewCheck(op, dst)
	if err != nil {
		return err
	}
	if err := d.supports(op, out.DType); err != nil {
		return err
	}
	if err := needContiguous(op, out); err != nil {
		return err
	}
	j := ewJob{op: op, dst: out, dstTyp: wgslType(out.DType), math: true, philox: true}
	j.u = [4]uint32{uint32(seed), uint32(seed >> 32), uint32(offset), uint32(offset >> 32)}
	j.rebase = func(j *ewJob, base int64) {
		at := offset + uint64(base) // the stream continues where the piece starts
		j.u[2], j.u[3] = uint32(at), uint32(at>>32)
	}
	switch dist {
	case hal.Uniform:
		j.value = "random_uniform(i)"
	case hal.Normal:
		j.value = "random_normal(i)"
	case hal.Bernoulli:
		// round(p·2²⁴) as the CPU backend rounds it; clamped to
		// [0, 2²⁴], which every float32 holds exactly.
		t := math.RoundToEven(p * (1 << 24))
		if math.IsNaN(t) {
			t = 0
		}
		j.f[0] = float32(min(max(t, 0), 1<<24))
		j.value = "random_bernoulli(i, params.f.x)"
	default:
		return fmt.Errorf("webgpu: %s: no such distribution: %w", op, hal.ErrUnsupported)
	}
	j.value = store(out.DType, j.value)
	return j.run(d)
}

// Copy converts src into dst. Within one dtype it moves bits; float to
// Int32 truncates and saturates, NaN to 0.
func (d *Device) Copy(dst, src hal.View) error {
	const op = hal.KernelCopy
	// The source's dtype is named first when neither is supported.
	if err := d.supports(op, src.DType); err != nil {
		return err
	}
	if err := d.supports(op, dst.DType); err != nil {
		return err
	}
	out, ins, err := d.ewCheck(op, dst, src)
	if err != nil {
		return err
	}
	in := ins[0]
	if err := needNoOverlap(op, out); err != nil {
		return err
	}
	if in.Same(out.View) {
		return nil // a copy onto itself
	}
	j := ewJob{op: op, dst: out}
	switch {
	case in.DType == out.DType:
		j.dstTyp = bitsType(out.DType)
		j.args = []ewArg{{o: in, typ: j.dstTyp}}
		j.value = "a"
	case out.DType == hal.Int32:
		typ, load := loadType(in.DType)
		j.dstTyp, j.math = "i32", true
		j.args = []ewArg{{o: in, typ: typ, load: load}}
		j.value = "f32_to_i32(a)"
	default:
		typ, load := loadType(in.DType)
		if in.DType == hal.Int32 {
			load = "f32"
		}
		j.dstTyp, j.math = wgslType(out.DType), true
		j.args = []ewArg{{o: in, typ: typ, load: load}}
		j.value = store(out.DType, "a")
	}
	return j.run(d)
}

// Unary computes dst = op(src, args) elementwise.
func (d *Device) Unary(op hal.UnaryOp, dst, src hal.View, args hal.Args) error {
	name := op.Kernel()
	if _, ok := unaryFloat[op]; !ok {
		return fmt.Errorf("webgpu: %s: no such kernel: %w", name, hal.ErrUnsupported)
	}
	out, ins, err := d.ewCheck(name, dst, src)
	if err != nil {
		return err
	}
	in := ins[0]
	if in.DType != out.DType {
		return fmt.Errorf("webgpu: %s: src %v and dst %v differ in dtype: %w", name, in.DType, out.DType, hal.ErrInvalid)
	}
	if err := d.supports(name, in.DType); err != nil {
		return err
	}
	if err := needContiguous(name, out); err != nil {
		return err
	}
	j := ewJob{op: name, dst: out}
	if in.DType == hal.Int32 {
		j.dstTyp = "i32"
		j.args = []ewArg{{o: in, typ: "i32"}}
		j.value = unaryInt[op]
		j.u[0], j.u[1] = uint32(saturateInt32(args.Alpha)), uint32(saturateInt32(args.Beta))
		return j.run(d)
	}
	typ, load := loadType(in.DType)
	j.dstTyp, j.math = typ, true
	j.args = []ewArg{{o: in, typ: typ, load: load}}
	j.value = store(out.DType, unaryFloat[op])
	j.f[0], j.f[1] = float32(args.Alpha), float32(args.Beta)
	return j.run(d)
}

// saturateInt32 truncates v toward zero into int32's range (NaN is 0), as
// Int32 Clamp takes its bounds.
func saturateInt32(v float64) int32 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt32:
		return math.MaxInt32
	case v <= math.MinInt32:
		return math.MinInt32
	}
	return int32(v)
}

// Binary computes dst = a op b elementwise.
func (d *Device) Binary(op hal.BinaryOp, dst, a, b hal.View) error {
	name := op.Kernel()
	if _, ok := binaryFloat[op]; !ok {
		return fmt.Errorf("webgpu: %s: no such kernel: %w", name, hal.ErrUnsupported)
	}
	out, ins, err := d.ewCheck(name, dst, a, b)
	if err != nil {
		return err
	}
	x, y := ins[0], ins[1]
	if x.DType != y.DType {
		return fmt.Errorf("webgpu: %s: a %v and b %v differ in dtype: %w", name, x.DType, y.DType, hal.ErrInvalid)
	}
	want := x.DType
	if op.IsComparison() {
		want = hal.Int32
	}
	if out.DType != want {
		return fmt.Errorf("webgpu: %s of %v: dst is %v, want %v: %w", name, x.DType, out.DType, want, hal.ErrInvalid)
	}
	if err := d.supports(name, x.DType); err != nil {
		return err
	}
	if err := needContiguous(name, out); err != nil {
		return err
	}
	j := ewJob{op: name, dst: out, dstTyp: wgslType(out.DType)}
	if x.DType == hal.Int32 {
		j.args = []ewArg{{o: x, typ: "i32"}, {o: y, typ: "i32"}}
		j.value = binaryInt[op]
		return j.run(d)
	}
	typ, load := loadType(x.DType)
	j.math = true
	j.args = []ewArg{{o: x, typ: typ, load: load}, {o: y, typ: typ, load: load}}
	j.value = binaryFloat[op]
	if !op.IsComparison() {
		j.value = store(out.DType, j.value)
	}
	return j.run(d)
}

// Where computes dst = cond ≠ 0 ? a : b, moving the chosen value's bits.
func (d *Device) Where(dst, cond, a, b hal.View) error {
	const op = hal.KernelWhere
	out, ins, err := d.ewCheck(op, dst, cond, a, b)
	if err != nil {
		return err
	}
	c, x, y := ins[0], ins[1], ins[2]
	if c.DType != hal.Int32 {
		return fmt.Errorf("webgpu: %s: cond is %v, want int32: %w", op, c.DType, hal.ErrInvalid)
	}
	if x.DType != y.DType || out.DType != x.DType {
		return fmt.Errorf("webgpu: %s: a %v, b %v and dst %v differ in dtype: %w", op, x.DType, y.DType, out.DType, hal.ErrInvalid)
	}
	if err := d.supports(op, x.DType); err != nil {
		return err
	}
	if err := needContiguous(op, out); err != nil {
		return err
	}
	typ := bitsType(x.DType)
	j := ewJob{op: op, dst: out, dstTyp: typ, value: "select(c, b, a != 0)"}
	j.args = []ewArg{{o: c, typ: "i32"}, {o: x, typ: typ}, {o: y, typ: typ}}
	return j.run(d)
}
