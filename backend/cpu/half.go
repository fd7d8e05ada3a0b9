package cpu

import (
	"math"
	"sync"

	"github.com/x448/float16"
)

// half is IEEE binary16 as stored in a buffer. Kernels compute it in
// float32 and round back to nearest even, which is exact for +, −, ·, / and
// √: float32 has more than twice binary16's precision plus two bits, so
// rounding twice cannot differ from rounding once.
type half = float16.Float16

// halfOf32 rounds x to the nearest binary16, ties to even, overflowing to
// ±Inf and keeping NaN a NaN (quieted). It is the branch-free conversion
// of Maratyszcza's FP16 library, which PyTorch also uses: the float32
// hardware does the rounding. Multiplying |x| by 2¹¹² and then 2⁻¹¹⁰
// saturates what overflows binary16 to Inf (and rounds nothing else);
// adding a power of two just above x's binade then rounds away all but
// binary16's bits of x, ties to even, subnormals included; the sum's low
// bits are the binary16 exponent and significand. The explicit float32
// conversions forbid fusing the steps into one FMA, which would skip a
// rounding. It is about 5× faster than float16.Fromfloat32, with which a
// test checks it agrees.
func halfOf32(x float32) half {
	const scaleToInf, scaleToZero = 0x1p112, 0x1p-110
	w := math.Float32bits(x)
	base := float32(float32(math.Float32frombits(w&0x7fffffff)*scaleToInf) * scaleToZero)
	shl1 := w + w
	sign := uint16(w >> 16 & 0x8000)
	if shl1 > 0xff000000 { // NaN
		return half(sign | 0x7e00)
	}
	bias := max(shl1&0xff000000, 0x71000000)
	base = float32(math.Float32frombits(bias>>1+0x07800000) + base)
	bits := math.Float32bits(base)
	return half(sign | uint16(bits>>13&0x7c00+bits&0x0fff))
}

// halfTable maps every binary16 bit pattern to its float32 value, which a
// load then is a single lookup; float16's bit manipulation took 2.5 ns.
var halfTable = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
})

// halfOf64 rounds x to the nearest binary16 directly. Going through
// float32 with round-to-nearest could round twice wrongly (a float64 just
// above a binary16 tie can land exactly on it in float32), so x is first
// rounded to float32 with round-to-odd, which keeps the information the
// second rounding needs: a float32 that is inexact gets its last bit set.
func halfOf64(x float64) half {
	f := float32(x)
	if g := float64(f); g != x && !math.IsNaN(x) && !math.IsInf(float64(f), 0) {
		if b := math.Float32bits(f); b&1 == 0 {
			// f is even, so step it one ulp toward x: in sign-magnitude
			// bits, down shrinks |f| and up grows it.
			if math.Abs(g) > math.Abs(x) {
				b--
			} else {
				b++
			}
			f = math.Float32frombits(b)
		}
	}
	return float16.Fromfloat32(f)
}

// toInt32 converts x to int32 the way Copy and Fill define it: toward
// zero, saturating at the int32 range, NaN to 0. Go leaves out-of-range
// conversions implementation-defined, so the checks come first.
func toInt32(x float64) int32 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return int32(x)
}

// toInt64 converts x to int64 as toInt32 does to int32: toward zero,
// saturating at the int64 range (2⁶³ is the first float64 past it), NaN
// to 0.
func toInt64(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= 1<<63:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// convert copies src into dst (same length), converting each element:
// floats round to nearest even, floats to integers as toInt32 and toInt64
// (int64 to int32 saturates likewise); int64 to a float rounds to nearest
// (exact while |x| ≤ 2⁵³ for float64, 2²⁴ for float32).
func convert[D, S storage](dst []D, src []S) {
	src = src[:len(dst)]
	switch d := any(dst).(type) {
	case []float32:
		switch s := any(src).(type) {
		case []float32:
			copy(d, s)
		case []float64:
			for i, x := range s {
				d[i] = float32(x)
			}
		case []int32:
			for i, x := range s {
				d[i] = float32(x)
			}
		case []int64:
			for i, x := range s {
				d[i] = float32(x)
			}
		case []half:
			t := halfTable()
			for i, x := range s {
				d[i] = t[x]
			}
		}
	case []float64:
		switch s := any(src).(type) {
		case []float32:
			for i, x := range s {
				d[i] = float64(x)
			}
		case []float64:
			copy(d, s)
		case []int32:
			for i, x := range s {
				d[i] = float64(x)
			}
		case []int64:
			for i, x := range s {
				d[i] = float64(x)
			}
		case []half:
			t := halfTable()
			for i, x := range s {
				d[i] = float64(t[x])
			}
		}
	case []int32:
		switch s := any(src).(type) {
		case []float32:
			for i, x := range s {
				d[i] = toInt32(float64(x))
			}
		case []float64:
			for i, x := range s {
				d[i] = toInt32(x)
			}
		case []int32:
			copy(d, s)
		case []int64:
			for i, x := range s {
				d[i] = int32(min(max(x, math.MinInt32), math.MaxInt32))
			}
		case []half:
			t := halfTable()
			for i, x := range s {
				d[i] = toInt32(float64(t[x]))
			}
		}
	case []int64:
		switch s := any(src).(type) {
		case []float32:
			for i, x := range s {
				d[i] = toInt64(float64(x))
			}
		case []float64:
			for i, x := range s {
				d[i] = toInt64(x)
			}
		case []int32:
			for i, x := range s {
				d[i] = int64(x)
			}
		case []int64:
			copy(d, s)
		case []half:
			t := halfTable()
			for i, x := range s {
				d[i] = toInt64(float64(t[x]))
			}
		}
	case []half:
		switch s := any(src).(type) {
		case []float32:
			for i, x := range s {
				d[i] = halfOf32(x)
			}
		case []float64:
			for i, x := range s {
				d[i] = halfOf64(x)
			}
		case []int32:
			// |x| < 2²⁴ is exact in float32; anything larger overflows
			// binary16 whichever way it rounds.
			for i, x := range s {
				d[i] = halfOf32(float32(x))
			}
		case []int64:
			for i, x := range s {
				d[i] = halfOf64(float64(x))
			}
		case []half:
			copy(d, s)
		}
	}
}
