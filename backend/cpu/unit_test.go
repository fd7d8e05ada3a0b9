package cpu

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/x448/float16"
)

var exhaustive = flag.Bool("exhaustive", false, "run the exhaustive float16 conversion check")

// TestPhiloxKnownAnswers checks the Random123 known-answer vectors for
// Philox4x32-10.
func TestPhiloxKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		assert.Equal(t, c.want, philox(c.ctr, c.key), "ctr %x key %x", c.ctr, c.key)
	}
}

func TestHalfRounding(t *testing.T) {
	const ulp1 = 0x1p-10 // binary16 ulp at 1
	for _, c := range []struct {
		name string
		x    float64
		want float64
	}{
		{"exact", 1.5, 1.5},
		{"tie to even down", 1 + ulp1/2, 1},
		{"tie to even up", 1 + 3*ulp1/2, 1 + 2*ulp1},
		{"above tie", 1 + ulp1/2 + 0x1p-20, 1 + ulp1},
		// float32 rounding to nearest would land on the tie and then
		// round down: this needs the round-to-odd step.
		{"double rounding", 1 + ulp1/2 + 0x1p-40, 1 + ulp1},
		{"double rounding below", 1 + ulp1/2 - 0x1p-40, 1},
		{"max", 65504, 65504},
		{"below overflow", 65519.99, 65504},
		{"overflow tie", 65520, math.Inf(1)},
		{"overflow", 1e6, math.Inf(1)},
		{"negative overflow", -1e6, math.Inf(-1)},
		{"smallest subnormal", 0x1p-24, 0x1p-24},
		{"subnormal tie to zero", 0x1p-25, 0},
		{"subnormal above tie", 0x1p-25 + 0x1p-40, 0x1p-24},
		{"subnormal tie to even up", 3 * 0x1p-25, 2 * 0x1p-24},
		{"largest subnormal", 1023 * 0x1p-24, 1023 * 0x1p-24},
		{"negative zero", math.Copysign(0, -1), math.Copysign(0, -1)},
		{"inf", math.Inf(1), math.Inf(1)},
	} {
		got64 := float64(halfOf64(c.x).Float32())
		assert.Equal(t, c.want, got64, "halfOf64 %s", c.name)
		assert.Equal(t, math.Signbit(c.want), math.Signbit(got64), "halfOf64 %s sign", c.name)
		if float64(float32(c.x)) == c.x { // exact in float32: both paths agree
			assert.Equal(t, c.want, float64(halfOf32(float32(c.x)).Float32()), "halfOf32 %s", c.name)
		}
	}
	assert.True(t, math.IsNaN(float64(halfOf64(math.NaN()).Float32())))
	assert.True(t, math.IsNaN(float64(halfOf32(float32(math.NaN())).Float32())))
}

func TestToInt32(t *testing.T) {
	for x, want := range map[float64]int32{
		2.9: 2, -2.9: -2, 0.5: 0, math.NaN(): 0, 3e9: math.MaxInt32, -3e9: math.MinInt32,
		math.Inf(1): math.MaxInt32, math.Inf(-1): math.MinInt32, 2147483647.5: math.MaxInt32, -2147483648.9: math.MinInt32,
	} {
		assert.Equal(t, want, toInt32(x), "%v", x)
	}
}

// TestCursor walks random strided views, including broadcast and size-1
// axes, from random starting points, and compares with the obvious index
// arithmetic.
func TestCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		rank := rng.IntN(5)
		shape, strides := make([]int, rank), make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.IntN(4)
		}
		// Mostly contiguous-ish strides, sometimes permuted, sliced or 0.
		copy(strides, hal.RowMajorStrides(shape))
		if rank > 1 && rng.IntN(2) == 0 {
			i, j := rng.IntN(rank), rng.IntN(rank)
			shape[i], shape[j] = shape[j], shape[i]
			strides[i], strides[j] = strides[j], strides[i]
		}
		for i := range strides {
			switch rng.IntN(6) {
			case 0:
				strides[i] = 0
			case 1:
				strides[i] *= 2
			}
		}
		off := rng.IntN(3)
		var want []int
		forEachPos(shape, strides, off, func(pos int) { want = append(want, pos) })
		start := rng.IntN(len(want))
		data := make([]int, 200)
		for i := range data {
			data[i] = i
		}
		got := make([]int, len(want)-start)
		c := newCursor(layoutOf(shape, strides, off), start)
		gatherRaw(got, data, &c)
		require.Equal(t, want[start:], got, "shape %v strides %v offset %d start %d", shape, strides, off, start)

		// scatterRaw is the inverse on views without repeats.
		if !slicesHasZero(strides, shape) {
			dst := make([]int, 200)
			c := newCursor(layoutOf(shape, strides, off), start)
			scatterRaw(dst, &c, got)
			for _, pos := range want[start:] {
				require.Equal(t, pos, dst[pos])
			}
		}
	}
}

func slicesHasZero(strides, shape []int) bool {
	for i, s := range strides {
		if s == 0 && shape[i] > 1 {
			return true
		}
	}
	return false
}

func TestLayoutMerges(t *testing.T) {
	l := layoutOf([]int{2, 1, 3, 4}, []int{12, 99, 4, 1}, 5)
	assert.Equal(t, 1, l.rank)
	assert.Equal(t, 24, l.shape[0])
	l = layoutOf([]int{2, 3, 4}, []int{1, 8, 2}, 0) // the last two merge into 12 of stride 2
	assert.Equal(t, 2, l.rank)
	assert.Equal(t, [2]int{12, 2}, [2]int{l.shape[1], l.strides[1]})
	l = layoutOf(nil, nil, 7)
	assert.Equal(t, 1, l.rank)
	assert.Equal(t, 7, newCursor(l, 0).pos)
}

func TestErrorTexts(t *testing.T) {
	h := newHarness(t)
	a := h.zeros(hal.Float32, 3, 4)
	b := h.zeros(hal.Float32, 4, 3)
	dst := h.zeros(hal.Float32, 3, 4)
	err := h.dev.Binary(hal.Add, dst, a, b)
	assert.ErrorIs(t, err, hal.ErrInvalid)
	assert.EqualError(t, err, "cpu: binary add: a float32[3 4] and b float32[4 3] do not match dst [3 4]: invalid argument")

	err = h.dev.Binary(hal.Add, dst, a, h.zeros(hal.Float64, 3, 4))
	assert.EqualError(t, err, "cpu: binary add: a float32[3 4] and b float64[3 4] differ in dtype: invalid argument")

	i := h.zeros(hal.Int32, 3, 4)
	err = h.dev.Binary(hal.Div, i, i, h.zeros(hal.Int32, 3, 4))
	assert.ErrorIs(t, err, hal.ErrUnsupported)
	assert.EqualError(t, err, "cpu: binary div: dtype int32: unsupported operation")

	err = h.dev.Unary(hal.Exp, h.zeros(hal.Int32, 2), h.zeros(hal.Int32, 2), hal.Args{})
	assert.EqualError(t, err, "cpu: unary exp: dtype int32: unsupported operation")

	err = h.dev.Unary(hal.Exp, dst, a, hal.Args{}) // in place on another view of...
	assert.NoError(t, err)

	bad := hal.View{Buf: a.Buf, DType: hal.Float32, Shape: []int{13}, Strides: []int{1}}
	err = h.dev.Unary(hal.Neg, h.zeros(hal.Float32, 13), bad, hal.Args{})
	assert.ErrorIs(t, err, hal.ErrInvalid)
	assert.Contains(t, err.Error(), "cpu: unary neg: src: view float32[13](offset 0, strides [1]) needs 52 bytes, its buffer has 48")

	err = h.dev.Reduce(hal.Max, h.zeros(hal.Float32, 3), h.zeros(hal.Float32, 3, 0), 1)
	assert.EqualError(t, err, "cpu: reduce max: src float32[3 0] has no elements to reduce over its last 1 axes: invalid argument")

	err = h.dev.MatMul(h.zeros(hal.Float32, 3, 3), a, a, 1, 0)
	assert.EqualError(t, err, "cpu: matmul: a float32[3 4] times b float32[3 4] does not give dst float32[3 3]: invalid argument")

	other := New()
	defer other.Close()
	ob, _ := other.Alloc(48)
	err = h.dev.Unary(hal.Neg, dst, hal.Contiguous(ob, hal.Float32, 3, 4), hal.Args{})
	assert.EqualError(t, err, "cpu: unary neg: src: not a buffer of this device: invalid argument")
}

func TestAliasing(t *testing.T) {
	h := newHarness(t)
	buf := h.buffer(hal.Float32, make([]float64, 8))
	first := hal.View{Buf: buf, DType: hal.Float32, Shape: []int{4}, Strides: []int{1}}
	second := hal.View{Buf: buf, DType: hal.Float32, Offset: 4, Shape: []int{4}, Strides: []int{1}}
	assert.NoError(t, h.dev.Unary(hal.Neg, first, first, hal.Args{}), "identical views may alias")
	assert.ErrorIs(t, h.dev.Unary(hal.Neg, first, second, hal.Args{}), hal.ErrInvalid, "other views of one buffer may not")
	m := hal.View{Buf: buf, DType: hal.Float32, Shape: []int{2, 2}, Strides: []int{2, 1}}
	assert.ErrorIs(t, h.dev.MatMul(m, m, h.zeros(hal.Float32, 2, 2), 1, 0), hal.ErrInvalid)
	rep := hal.View{Buf: buf, DType: hal.Float32, Shape: []int{4, 2}, Strides: []int{0, 1}}
	assert.ErrorIs(t, h.dev.Fill(rep, 0, 1), hal.ErrInvalid, "a dst with repeats")
	assert.ErrorIs(t, h.dev.Fill(hal.View{Buf: buf, DType: hal.Float32, Shape: []int{3, 2}, Strides: []int{1, 2}}, 0, 1), hal.ErrInvalid, "interleaved")
	assert.NoError(t, h.dev.Fill(hal.View{Buf: buf, DType: hal.Float32, Shape: []int{2, 2}, Strides: []int{1, 2}}, 0, 1), "transposed")
}

// TestHalfOf32MatchesFloat16 compares the fast conversion with the
// reference package on every float32 whose bits are a multiple of a prime
// stride (≈ 1% of all), plus the edges. An exhaustive run passed too:
// go test -run HalfOf32 -exhaustive.
func TestHalfOf32MatchesFloat16(t *testing.T) {
	stride := uint64(97)
	if *exhaustive {
		stride = 1
	}
	check := func(b uint32) {
		x := math.Float32frombits(b)
		got, want := halfOf32(x), float16.Fromfloat32(x)
		if got != want && !(got.IsNaN() && want.IsNaN()) {
			t.Fatalf("halfOf32(%v = %#08x) = %#04x, want %#04x", x, b, uint16(got), uint16(want))
		}
	}
	for b := uint64(0); b < 1<<32; b += stride {
		check(uint32(b))
	}
	for _, b := range []uint32{0x7f800000, 0xff800000, 0x7f800001, 0x477fefff, 0x477ff000, 0x33000000, 0x33000001, 0x387fc000} {
		check(b)
	}
}
