//go:build cgo

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// These tests cover what the conformance suite (hal/haltest) cannot see
// from outside: the WGSL math's accuracy against the builtins it replaces,
// NaN handling that a shader compiler may optimize away, float16
// variants that this machine cannot run, dispatch grids past 65,535
// workgroups and the binding of in-place operands.

// ewUpload writes float32 values into a fresh buffer, freed when the test
// ends, and returns their contiguous view.
func ewUpload(t testing.TB, d *Device, vals []float32) hal.View {
	t.Helper()
	b, err := d.Alloc(int64(4 * max(len(vals), 1)))
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(b) })
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	require.NoError(t, d.Write(b, raw))
	return hal.Contiguous(b, hal.Float32, len(vals))
}

// ewUploadInt32 is ewUpload for int32 values.
func ewUploadInt32(t testing.TB, d *Device, vals []int32) hal.View {
	t.Helper()
	f := make([]float32, len(vals))
	for i, v := range vals {
		f[i] = math.Float32frombits(uint32(v))
	}
	v := ewUpload(t, d, f)
	v.DType = hal.Int32
	return v
}

// ewBuffer allocates n 4-byte elements holding the bits of fill.
func ewBuffer(t testing.TB, d *Device, n int, fill uint32) hal.Buffer {
	t.Helper()
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(fill)
	}
	return ewUpload(t, d, f).Buf
}

// ewWords reads a buffer's first n 4-byte words.
func ewWords(t testing.TB, d *Device, b hal.Buffer, n int) []uint32 {
	t.Helper()
	raw := make([]byte, 4*n)
	require.NoError(t, d.Read(b, raw))
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return out
}

// ewFloats reads a buffer's first n float32s.
func ewFloats(t testing.TB, d *Device, b hal.Buffer, n int) []float32 {
	t.Helper()
	w := ewWords(t, d, b, n)
	out := make([]float32, n)
	for i, v := range w {
		out[i] = math.Float32frombits(v)
	}
	return out
}

// ulps is |got − want| in units of float32's spacing at want (the spacing
// of the smallest normal below it); 0 when both are the same NaN or
// infinity, +Inf when only one is.
func ulps(got float32, want float64) float64 {
	w := float32(want)
	switch {
	case math.IsNaN(want) || math.IsNaN(float64(got)):
		if math.IsNaN(want) && math.IsNaN(float64(got)) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(float64(w), 0) || math.IsInf(float64(got), 0):
		if got == w {
			return 0
		}
		return math.Inf(1)
	}
	spacing := math.Max(float64(math.Nextafter32(float32(math.Abs(want)), math.MaxFloat32)-float32(math.Abs(want))), 0x1p-149)
	spacing = math.Max(spacing, 0x1p-126*0x1p-23)
	return math.Abs(float64(got)-want) / spacing
}

// sameFloat is equality with NaN equal to NaN and −0 distinct from +0.
func sameFloat(a, b float32) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b))
}

// ewSigmoid is σ(x) in float64 without overflow.
func ewSigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// TestElementwiseMathAccuracy holds the WGSL math of shaders/math.wgsl to
// a few ulp over wide argument ranges: far tighter than WGSL promises of
// its builtins (exp and log 3 + 2|x| ulp, sin and cos 2⁻¹¹ absolute) and
// than llvmpipe's builtins deliver (exp 60 ulp near −80, log and tanh lose
// most digits near 1 and 0), which these functions replace.
func TestElementwiseMathAccuracy(t *testing.T) { forEachTestDevice(t, testElementwiseMathAccuracy) }

func testElementwiseMathAccuracy(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(1, 2))
	uniform := func(lo, hi float64) func() float64 {
		return func() float64 { return lo + (hi-lo)*rng.Float64() }
	}
	logUniform := func(lo, hi float64, signed bool) func() float64 {
		return func() float64 {
			v := math.Pow(10, lo+(hi-lo)*rng.Float64())
			if signed && rng.IntN(2) == 0 {
				v = -v
			}
			return v
		}
	}
	cases := []struct {
		op     hal.UnaryOp
		args   hal.Args
		gen    func() float64
		ref    func(float64) float64
		maxULP float64
	}{
		{hal.Exp, hal.Args{}, uniform(-87, 88), math.Exp, 2},
		{hal.Exp, hal.Args{}, uniform(-1, 1), math.Exp, 2},
		{hal.Log, hal.Args{}, logUniform(-37, 38, false), math.Log, 2},
		{hal.Log, hal.Args{}, uniform(0.5, 2), math.Log, 2},
		{hal.Log1p, hal.Args{}, logUniform(-20, 0, true), math.Log1p, 2},
		{hal.Log1p, hal.Args{}, uniform(-0.999, 100), math.Log1p, 2},
		{hal.Sin, hal.Args{}, uniform(-10, 10), math.Sin, 2},
		{hal.Sin, hal.Args{}, uniform(-1e4, 1e4), math.Sin, 2.5},
		{hal.Cos, hal.Args{}, uniform(-1e4, 1e4), math.Cos, 2.5},
		{hal.Tan, hal.Args{}, uniform(-1.5, 1.5), math.Tan, 3},
		{hal.Tanh, hal.Args{}, logUniform(-10, 1.2, true), math.Tanh, 3},
		{hal.Sigmoid, hal.Args{}, uniform(-80, 30), ewSigmoid, 3},
		{hal.SiLU, hal.Args{}, uniform(-80, 30), func(x float64) float64 { return x * ewSigmoid(x) }, 4},
		// Every float32 in [1/8, 4) checked on llvmpipe: at most 1.95 ulp,
		// just past the switch from the series to erfc at 1/2.
		{hal.Erf, hal.Args{}, uniform(-5, 5), math.Erf, 2.5},
		{hal.Erf, hal.Args{}, logUniform(-20, 0.3, true), math.Erf, 2.5},
		{hal.GELU, hal.Args{}, uniform(-13, 8), func(x float64) float64 { return x / 2 * math.Erfc(-x/math.Sqrt2) }, 8},
		// Near 0 only: further out, σ(2z) has the condition number |2z|
		// and float32 roundings of the constants and of x³ dominate.
		{hal.GELUTanh, hal.Args{}, uniform(-1, 2), func(x float64) float64 {
			return x * ewSigmoid(2*math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))
		}, 6},
		{hal.ELU, hal.Args{Alpha: 1}, uniform(-20, 2), func(x float64) float64 {
			if x > 0 {
				return x
			}
			return math.Expm1(x)
		}, 2},
		{hal.Softplus, hal.Args{Alpha: 1, Beta: 20}, uniform(-80, 25), func(x float64) float64 {
			if x > 20 {
				return x
			}
			return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
		}, 3},
	}
	const n = 4096
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(c.gen())
			}
			src := ewUpload(t, d, x)
			dst := ewUpload(t, d, make([]float32, n))
			require.NoError(t, d.Unary(c.op, dst, src, c.args))
			got := ewFloats(t, d, dst.Buf, n)
			worst, at := 0.0, 0
			for i := range x {
				want := c.ref(float64(x[i]))
				if got[i] == 0 && math.Abs(want) < math.Max(1, math.Abs(float64(x[i])))*haltest.WGSL.FlushFloor(hal.Float32) {
					continue // WGSL may flush a subnormal intermediate: x·Φ(x) at x = −13
				}
				if e := ulps(got[i], want); e > worst {
					worst, at = e, i
				}
			}
			t.Logf("max error %.2f ulp at x = %g (got %g, want %g)", worst, x[at], got[at], c.ref(float64(x[at])))
			// maxULP is math.wgsl's own accuracy; a GPU may add WGSL's
			// latitude for the divisions and square roots inside (an
			// extra ε·|result| is up to 2 ulp of it).
			limit := c.maxULP + 2*haltest.WGSL.ExtraULPs(c.op.Kernel(), hal.Float32)
			assert.LessOrEqual(t, worst, limit, "at x = %g", x[at])
		})
	}
}

// TestElementwisePow checks C's special cases and the accuracy of pow.
func TestElementwisePow(t *testing.T) { forEachTestDevice(t, testElementwisePow) }

func testElementwisePow(t *testing.T, d *Device) {
	inf, nan := math.Inf(1), math.NaN()
	specials := []float64{nan, inf, -inf, 0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, -2, 3, -3, 2.5, -2.5, 1e-3, 1e30, -1e30}
	var as, bs []float32
	for _, a := range specials {
		for _, b := range specials {
			as, bs = append(as, float32(a)), append(bs, float32(b))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 4096 {
		as = append(as, float32(math.Pow(10, -4+8*rng.Float64())))
		bs = append(bs, float32(-8+16*rng.Float64()))
	}
	n := len(as)
	dst := ewUpload(t, d, make([]float32, n))
	require.NoError(t, d.Binary(hal.Pow, dst, ewUpload(t, d, as), ewUpload(t, d, bs)))
	got := ewFloats(t, d, dst.Buf, n)
	worst := 0.0
	for i := range as {
		want := math.Pow(float64(as[i]), float64(bs[i]))
		if i < len(specials)*len(specials) {
			// C's special cases are exact, signs included; other
			// results are held to a few ulp.
			if want == 0 || math.Abs(want) == 1 || math.IsInf(want, 0) || math.IsNaN(want) {
				require.True(t, sameFloat(float32(want), got[i]), "pow(%g, %g) = %g, want %g", as[i], bs[i], got[i], want)
			} else {
				require.LessOrEqual(t, ulps(got[i], want), powULPs(2, as[i], bs[i]), "pow(%g, %g) = %g, want %g", as[i], bs[i], got[i], want)
			}
			continue
		}
		worst = max(worst, ulps(got[i], want)/powULPs(4, as[i], bs[i]))
	}
	assert.LessOrEqual(t, worst, 1.0, "pow error relative to its bound (powULPs)")
}

// powULPs bounds pow's error in ulps: base, plus the exponent: y·ln x
// carries float32's relative rounding, which e^(·) turns into |y·ln x|·2⁻²⁴
// of the result (2|y·ln x| ulp at most), plus WGSL's latitude
// (haltest.WGSLAccuracy) for the division inside ln, carried the same way,
// and for the division (1/xⁿ, negative integer y) or square root (y = ½)
// that some exponents end with; an extra ε·|result| is up to 2 ulp.
func powULPs(base float64, x, y float32) float64 {
	cond := math.Abs(float64(y) * math.Log(math.Abs(float64(x))))
	if math.IsNaN(cond) || math.IsInf(cond, 0) {
		cond = 0
	}
	extra := 0.0
	switch {
	case y == 0.5:
		extra = haltest.WGSL.ExtraULPs(hal.Sqrt.Kernel(), hal.Float32)
	case y < 0 && y == float32(math.Trunc(float64(y))):
		extra = haltest.WGSL.ExtraULPs(hal.Div.Kernel(), hal.Float32)
	}
	logExtra := haltest.WGSL.ExtraULPs(hal.Log.Kernel(), hal.Float32)
	return base + 2*(1+logExtra)*cond + 2*extra
}

// TestElementwiseNaN checks the NaN rules of hal's op table, which WGSL's
// builtins and comparisons do not promise (a compiler may assume there is
// no NaN): Maximum and Minimum propagate it, comparisons are false except
// Ne, ReLU, Clamp and Sign keep it, and Copy to Int32 makes it 0.
func TestElementwiseNaN(t *testing.T) { forEachTestDevice(t, testElementwiseNaN) }

func testElementwiseNaN(t *testing.T, d *Device) {
	nan := float32(math.NaN())
	a := ewUpload(t, d, []float32{nan, 1, nan, -2})
	b := ewUpload(t, d, []float32{1, nan, nan, 3})
	out := ewUpload(t, d, make([]float32, 4))
	isNaN := func(v float32) bool { return v != v }

	for _, op := range []hal.BinaryOp{hal.Maximum, hal.Minimum} {
		require.NoError(t, d.Binary(op, out, a, b))
		got := ewFloats(t, d, out.Buf, 4)
		assert.True(t, isNaN(got[0]) && isNaN(got[1]) && isNaN(got[2]), "%v: %v", op, got)
		assert.Equal(t, map[hal.BinaryOp]float32{hal.Maximum: 3, hal.Minimum: -2}[op], got[3], "%v", op)
	}
	mask := out
	mask.DType = hal.Int32
	for _, op := range []hal.BinaryOp{hal.Eq, hal.Ne, hal.Lt, hal.Le, hal.Gt, hal.Ge} {
		require.NoError(t, d.Binary(op, mask, a, b))
		got := ewWords(t, d, out.Buf, 3)
		want := uint32(0)
		if op == hal.Ne {
			want = 1
		}
		assert.Equal(t, []uint32{want, want, want}, got, "%v with NaN", op)
	}
	for _, op := range []hal.UnaryOp{hal.ReLU, hal.Clamp, hal.Sign, hal.Abs, hal.Exp, hal.Log, hal.Tanh, hal.Sigmoid, hal.GELU, hal.Softplus, hal.Sin, hal.Erf} {
		require.NoError(t, d.Unary(op, out, a, hal.Args{Alpha: 1, Beta: 2}))
		got := ewFloats(t, d, out.Buf, 4)
		assert.True(t, isNaN(got[0]), "%v(NaN) = %v", op, got[0])
	}
	require.NoError(t, d.Copy(mask, a))
	assert.Equal(t, uint32(0), ewWords(t, d, out.Buf, 1)[0], "NaN copies to int32 0")
}

// TestElementwiseFloat16Renders renders every elementwise kernel's
// float16 variant (the f32 template with f16 storage that computes in
// f32) and checks what the WGSL needs: the enable directive first, f16
// bindings, conversions on load and store. Where the adapter lacks
// shader-f16, as llvmpipe does, the variants cannot compile, so each is
// also compiled with f16 spelled f32 (and the bit patterns to_f16 builds
// widened to match): that catches every template, type and name error
// short of f16's own semantics.
func TestElementwiseFloat16Renders(t *testing.T) { forEachTestDevice(t, testElementwiseFloat16Renders) }

func testElementwiseFloat16Renders(t *testing.T, d *Device) {
	f16Bits := regexp.MustCompile(`bitcast<vec2<f16>>\(([^)]*)\)`)
	read := func(load string) ewRead {
		typ := load
		if typ == "" {
			typ = "f16"
		}
		return ewRead{Name: "a", Array: "in1", Slot: 1, Load: load, Type: typ}
	}
	var shaders []ewShader
	for _, value := range unaryFloat {
		shaders = append(shaders, ewShader{
			Enable: "enable f16;", WorkgroupSize: 64, Math: true, DstType: "f16",
			Inputs: []ewInput{{Binding: 1, Type: "f16"}}, Reads: []ewRead{read("f32")},
			Value: store(hal.Float16, value), Unravel: true,
		})
	}
	for op, value := range binaryFloat {
		dstType := "f16"
		if op.IsComparison() {
			dstType = "i32"
		} else {
			value = store(hal.Float16, value)
		}
		shaders = append(shaders, ewShader{
			Enable: "enable f16;", WorkgroupSize: 64, Math: true, DstType: dstType,
			Inputs: []ewInput{{Binding: 1, Type: "f16"}, {Binding: 2, Type: "f16"}},
			Reads:  []ewRead{read("f32"), {Name: "b", Array: "in2", Slot: 2, Load: "f32", Type: "f32", Strided: true}},
			Value:  value, Unravel: true,
		})
	}
	shaders = append(shaders,
		// Where and same-dtype Copy move f16 values without converting.
		ewShader{Enable: "enable f16;", WorkgroupSize: 64, DstType: "f16",
			Inputs: []ewInput{{Binding: 1, Type: "i32"}, {Binding: 2, Type: "f16"}},
			Reads:  []ewRead{{Name: "a", Array: "in1", Slot: 1, Type: "i32"}, {Name: "b", Array: "in2", Slot: 2, Type: "f16"}, {Name: "c", Array: "dst", Slot: 3, Type: "f16"}},
			Value:  "select(c, b, a != 0)"},
		ewShader{Enable: "enable f16;", WorkgroupSize: 64, DstType: "f16", DstStrided: true, Unravel: true,
			Inputs: []ewInput{{Binding: 1, Type: "f16"}}, Reads: []ewRead{read("")}, Value: "a"},
		// Conversions to and from float16.
		ewShader{Enable: "enable f16;", WorkgroupSize: 64, Math: true, DstType: "i32",
			Inputs: []ewInput{{Binding: 1, Type: "f16"}}, Reads: []ewRead{read("f32")}, Value: "f32_to_i32(a)"},
		ewShader{Enable: "enable f16;", WorkgroupSize: 64, Math: true, DstType: "f16",
			Inputs: []ewInput{{Binding: 1, Type: "i32"}}, Reads: []ewRead{read("f32")}, Value: store(hal.Float16, "a")},
		// Fill and Random.
		ewShader{Enable: "enable f16;", WorkgroupSize: 64, Math: true, DstType: "f16", DstStrided: true, Unravel: true,
			Value: store(hal.Float16, "params.f.x + (f32(i) * params.f.z + (params.f.y + f32(i) * params.f.w))")},
		ewShader{Enable: "enable f16;", WorkgroupSize: 64, Math: true, Philox: true, DstType: "f16",
			Value: store(hal.Float16, "random_normal(i)")},
	)
	// Each also on the contiguous path, scalar and vec4, 4 and 8 lanes.
	for _, sh := range slices.Clone(shaders) {
		for _, vec4 := range []bool{false, true} {
			for _, lanes := range []int{4, 8} {
				c := sh
				c.Reads = slices.Clone(sh.Reads)
				for k := range c.Reads {
					c.Reads[k].Strided = false
				}
				c.DstStrided, c.Unravel = false, false
				c.Lanes, c.Vec4 = lanes, vec4
				c.Chunks, c.Idx = ewUnroll(lanes)
				shaders = append(shaders, c)
			}
		}
	}
	for _, sh := range shaders {
		src, err := render("elementwise.wgsl", sh)
		require.NoError(t, err, "%+v", sh)
		require.True(t, strings.HasPrefix(src, "enable f16;\n"), "the directive comes first:\n%s", src)
		assert.Contains(t, src, "fn main(")
		assert.NotContains(t, src, "<no value>", "every template field is set:\n%s", src)
		switch {
		case sh.DstType == "f16" && sh.Vec4:
			assert.Contains(t, src, "var<storage, read_write> dst: array<vec4<f16>>;")
		case sh.DstType == "f16":
			assert.Contains(t, src, "var<storage, read_write> dst: array<f16>;")
		}
		if sh.DstType == "f16" {
			if sh.Math {
				assert.Contains(t, src, "fn to_f16(x: f32) -> f16", "float16 stores go through to_f16")
			}
		}
		for _, r := range sh.Reads {
			if r.Load == "f32" && sh.Lanes == 0 {
				assert.Contains(t, src, "let "+r.Name+" = f32(", "float16 loads convert to float32")
			}
		}

		as32 := strings.TrimPrefix(src, "enable f16;\n")
		as32 = f16Bits.ReplaceAllString(as32, "bitcast<vec2<f32>>(vec2<u32>($1, 0u))")
		as32 = strings.ReplaceAll(as32, "f16", "f32")
		_, err = d.rt.Kernel("f16-as-f32 "+ewKernelName("test", sh), 1+len(sh.Inputs), 1, func() (string, error) { return as32, nil })
		require.NoError(t, err, "%s", as32)
	}
}

// TestElementwiseFloat16Refused checks that without shader-f16 every
// elementwise kernel refuses float16 with ErrUnsupported instead of
// compiling a shader the device rejects.
func TestElementwiseFloat16Refused(t *testing.T) { forEachTestDevice(t, testElementwiseFloat16Refused) }

func testElementwiseFloat16Refused(t *testing.T, d *Device) {
	if d.rt.HasF16() {
		t.Skip("the adapter has shader-f16")
	}
	b := ewBuffer(t, d, 4, 0)
	h := hal.Contiguous(b, hal.Float16, 4)
	f := hal.Contiguous(b, hal.Float32, 2)
	for name, err := range map[string]error{
		"fill":   d.Fill(h, 1, 0),
		"random": d.Random(h, hal.Uniform, 0, 1, 2),
		"copy":   d.Copy(f, hal.Contiguous(ewBuffer(t, d, 1, 0), hal.Float16, 2)),
		"unary":  d.Unary(hal.Exp, h, h, hal.Args{}),
		"binary": d.Binary(hal.Add, h, h, h),
	} {
		assert.ErrorIs(t, err, hal.ErrUnsupported, name)
		if err != nil {
			assert.Contains(t, err.Error(), "float16", name)
		}
	}
	c := d.Capabilities()
	for _, k := range []string{hal.KernelFill, hal.KernelCopy, hal.KernelWhere, hal.Exp.Kernel(), hal.Add.Kernel(), hal.Uniform.Kernel()} {
		assert.False(t, c.Supports(k, hal.Float16), k)
	}
}

// TestGridOf checks the two-dimensional grid: within the limit on both
// axes, enough workgroups, the fewest rows, and fewer idle workgroups than
// rows; past limit² workgroups, an error.
func TestGridOf(t *testing.T) {
	for _, limit := range []int{1, 2, 7, 65535} {
		counts := []int{0, 1, limit - 1, limit, limit + 1, 2 * limit, 2*limit + 1, limit * limit}
		for g := 0; g <= 4*limit && g < 200; g++ {
			counts = append(counts, g)
		}
		for _, groups := range counts {
			if groups > limit*limit {
				continue
			}
			x, y, err := gridOf(groups, limit)
			require.NoError(t, err, "%d groups, limit %d", groups, limit)
			launched := int(x) * int(y)
			assert.LessOrEqual(t, int(x), limit, "%d groups, limit %d", groups, limit)
			assert.Equal(t, max((groups+limit-1)/limit, 1), int(y), "the fewest rows: %d groups, limit %d", groups, limit)
			assert.GreaterOrEqual(t, launched, max(groups, 1), "%d groups, limit %d", groups, limit)
			assert.Less(t, launched-max(groups, 1), int(y), "idle workgroups: %d groups, limit %d (%d×%d)", groups, limit, x, y)
		}
		_, _, err := gridOf(limit*limit+1, limit)
		assert.ErrorIs(t, err, hal.ErrUnsupported, "limit %d", limit)
	}
	x, y, err := gridOf(65536, 65535)
	require.NoError(t, err)
	assert.Equal(t, [2]uint32{32768, 2}, [2]uint32{x, y})
}

// TestElementwiseLargeGrid runs kernels over more than 65,535 workgroups,
// so that the grid is two-dimensional and row_stride matters.
func TestElementwiseLargeGrid(t *testing.T) { forEachTestDevice(t, testElementwiseLargeGrid) }

func testElementwiseLargeGrid(t *testing.T, d *Device) {
	wg := d.workgroupSize()
	n := int(d.limits.MaxComputeWorkgroupsPerDimension)*wg + 3*wg + 5
	if uint64(n)*4 > d.limits.MaxStorageBufferBindingSize {
		t.Skipf("%d elements exceed the binding limit", n)
	}
	_, y, err := d.grid((n + wg - 1) / wg)
	require.NoError(t, err)
	require.Greater(t, y, uint32(1), "the grid must be two-dimensional")

	b, err := d.Alloc(int64(4 * n))
	require.NoError(t, err)
	defer d.Free(b)
	v := hal.Contiguous(b, hal.Int32, n)
	require.NoError(t, d.Fill(v, -7, 3))
	require.NoError(t, d.Binary(hal.Add, v, v, v)) // in place, both inputs
	got := ewWords(t, d, b, n)
	for i, w := range got {
		if int32(w) != 2*(-7+3*int32(i)) {
			t.Fatalf("element %d of %d: got %d, want %d", i, n, int32(w), 2*(-7+3*int32(i)))
		}
	}
}

// TestElementwiseInPlace checks in-place binding: dst identical to an input
// is bound once and read through dst (WebGPU forbids a writable binding
// that aliases another), two inputs on one buffer share a binding, and an
// input that overlaps dst without being the same view is refused.
func TestElementwiseInPlace(t *testing.T) { forEachTestDevice(t, testElementwiseInPlace) }

func testElementwiseInPlace(t *testing.T, d *Device) {
	defer unfused(d)()
	a := ewUpload(t, d, []float32{1, 2, 3, 4, 5, 6})
	b := ewUpload(t, d, []float32{10, 20, 30, 40, 50, 60})
	require.NoError(t, d.Binary(hal.Sub, b, b, a)) // b = b − a
	assert.Equal(t, []float32{9, 18, 27, 36, 45, 54}, ewFloats(t, d, b.Buf, 6))
	require.NoError(t, d.Binary(hal.Mul, a, a, a)) // a = a·a, one binding
	assert.Equal(t, []float32{1, 4, 9, 16, 25, 36}, ewFloats(t, d, a.Buf, 6))
	require.NoError(t, d.Unary(hal.Neg, a, a, hal.Args{}))
	assert.Equal(t, []float32{-1, -4, -9, -16, -25, -36}, ewFloats(t, d, a.Buf, 6))

	var names []string
	for name, k := range d.rt.CachedKernels() {
		if strings.HasPrefix(name, "binary.mul(") && strings.Contains(name, "a:dst,b:dst") {
			names = append(names, name)
			assert.Equal(t, 1, k.Storage(), "in-place a·a binds dst alone")
		}
	}
	assert.NotEmpty(t, names, "the in-place kernel reads both operands through dst")

	// Two different views of one input buffer: one read-only binding.
	out := ewUpload(t, d, make([]float32, 9))
	out.Shape, out.Strides = []int{3, 3}, []int{3, 1}
	col, row := b, b
	col.Shape, col.Strides = []int{3, 3}, []int{1, 0}
	row.Shape, row.Strides = []int{3, 3}, []int{0, 1}
	require.NoError(t, d.Binary(hal.Add, out, col, row))
	assert.Equal(t, []float32{18, 27, 36, 27, 36, 45, 36, 45, 54}, ewFloats(t, d, out.Buf, 9))

	// Overlapping but not identical: refused.
	shifted := a
	shifted.Offset, shifted.Shape, shifted.Strides = 1, []int{5}, []int{1}
	head := a
	head.Shape = []int{5}
	err := d.Unary(hal.Neg, head, shifted, hal.Args{})
	assert.ErrorIs(t, err, hal.ErrInvalid)
}

// TestElementwiseStridedDst checks Copy and Fill into strided
// destinations (a transposed and a stepped view), that the elements
// between stay untouched, and that overlapping destinations are refused.
func TestElementwiseStridedDst(t *testing.T) { forEachTestDevice(t, testElementwiseStridedDst) }

func testElementwiseStridedDst(t *testing.T, d *Device) {
	const sentinel = 0xdeadbeef
	// A 3×4 transposed view (strides 1, 3) over a 12-element buffer at
	// offset 2, so the buffer holds 14 elements.
	buf := ewBuffer(t, d, 14, sentinel)
	dst := hal.View{Buf: buf, DType: hal.Int32, Offset: 2, Shape: []int{3, 4}, Strides: []int{1, 3}}
	src := ewUploadInt32(t, d, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	src.Shape, src.Strides = []int{3, 4}, []int{4, 1}
	require.NoError(t, d.Copy(dst, src))
	got := ewWords(t, d, buf, 14)
	assert.Equal(t, uint32(sentinel), got[0])
	assert.Equal(t, uint32(sentinel), got[1])
	for r := range 3 {
		for c := range 4 {
			assert.Equal(t, uint32(r*4+c), got[2+r+3*c], "element (%d, %d)", r, c)
		}
	}

	// Every other element of a 10-element buffer, filled with a ramp
	// converted from float.
	buf = ewBuffer(t, d, 10, sentinel)
	stepped := hal.View{Buf: buf, DType: hal.Float32, Offset: 1, Shape: []int{5}, Strides: []int{2}}
	require.NoError(t, d.Fill(stepped, 0.5, 0.25))
	f := ewFloats(t, d, buf, 10)
	for i := range 10 {
		if i%2 == 1 {
			assert.Equal(t, float32(0.5+0.25*float64(i/2)), f[i], "element %d", i)
		} else {
			assert.Equal(t, uint32(sentinel), math.Float32bits(f[i]), "element %d is outside the view", i)
		}
	}

	overlapping := hal.View{Buf: buf, DType: hal.Float32, Shape: []int{3, 3}, Strides: []int{1, 1}}
	assert.ErrorIs(t, d.Fill(overlapping, 1, 0), hal.ErrInvalid)
	broadcast := hal.View{Buf: buf, DType: hal.Float32, Shape: []int{4}, Strides: []int{0}}
	assert.ErrorIs(t, d.Copy(broadcast, ewUpload(t, d, []float32{1, 2, 3, 4})), hal.ErrInvalid)
	// Unary, Binary and Where write contiguous destinations only.
	assert.ErrorIs(t, d.Unary(hal.Neg, stepped, ewUpload(t, d, make([]float32, 5)), hal.Args{}), hal.ErrInvalid)
}

// ewPhilox is Philox4x32-10 from its definition (Salmon et al., SC11), the
// test's own reference for the WGSL version.
func ewPhilox(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for round := range 10 {
		if round > 0 {
			key[0] += 0x9E3779B9
			key[1] += 0xBB67AE85
		}
		hi0, lo0 := bits.Mul32(0xD2511F53, ctr[0])
		hi1, lo1 := bits.Mul32(0xCD9E8D57, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// TestRandomPhilox checks the WGSL Philox (whose 32×32→64-bit products are
// built from 16-bit halves) bit for bit through Uniform: the reference
// first against Random123's known answers, then the device against the
// reference across an offset whose low word carries.
func TestRandomPhilox(t *testing.T) {
	kat := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, k := range kat {
		require.Equal(t, k.want, ewPhilox(k.ctr, k.key))
	}

	forEachTestDevice(t, testRandomPhilox)
}

// testRandomPhilox checks d's Uniform against the reference.
func testRandomPhilox(t *testing.T, d *Device) {
	const n = 4099
	for _, c := range []struct{ seed, offset uint64 }{{0, 0}, {0xa4093822299f31d0, 1<<32 - 2000}, {1<<64 - 1, 1<<64 - 1000}} {
		dst := ewUpload(t, d, make([]float32, n))
		require.NoError(t, d.Random(dst, hal.Uniform, 0, c.seed, c.offset))
		got := ewFloats(t, d, dst.Buf, n)
		for i, g := range got {
			ctr := c.offset + uint64(i)
			w := ewPhilox([4]uint32{uint32(ctr), uint32(ctr >> 32)}, [2]uint32{uint32(c.seed), uint32(c.seed >> 32)})
			want := float32(float64(w[0]>>8) * 0x1p-24)
			if g != want {
				t.Fatalf("seed %#x offset %#x element %d: got %g, want %g (w0 %08x)", c.seed, c.offset, i, g, want, w[0])
			}
		}
	}
}

// BenchmarkElementwiseAdd measures a + b over 1M float32 elements with
// contiguous operands (the direct-index kernel) and with both inputs
// transposed 1024×1024 views (per-element coordinates and strides). The
// bytes counted are the 12 per element that must move.
func BenchmarkElementwiseAdd(b *testing.B) {
	d := openTestDevice(b)
	const side = 1024
	const n = side * side
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i % 1000)
	}
	x, y, out := ewUpload(b, d, vals), ewUpload(b, d, vals), ewUpload(b, d, make([]float32, n))
	for _, c := range []struct {
		name string
		tr   bool
	}{{"contiguous", false}, {"transposed", true}} {
		b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
			xa, ya, o := x, y, out
			o.Shape, o.Strides = []int{side, side}, []int{side, 1}
			xa.Shape, ya.Shape = o.Shape, o.Shape
			xa.Strides, ya.Strides = []int{side, 1}, []int{side, 1}
			if c.tr {
				xa.Strides, ya.Strides = []int{1, side}, []int{1, side}
			}
			require.NoError(b, d.Binary(hal.Add, o, xa, ya)) // compile outside the timing
			require.NoError(b, d.Sync())
			b.SetBytes(12 * n)
			b.ResetTimer()
			for range b.N {
				if err := d.Binary(hal.Add, o, xa, ya); err != nil {
					b.Fatal(err)
				}
			}
			require.NoError(b, d.Sync())
		})
	}
}
