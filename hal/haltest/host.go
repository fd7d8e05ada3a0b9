package haltest

import (
	"encoding/binary"
	"math"

	"github.com/webtensor/webtensor/hal"
)

// The suite keeps every host-side value as a float64 that is exactly
// representable in the operand's dtype, and spells out the little-endian
// byte layouts of hal buffers itself, so it shares no conversion code with
// any backend.

// encode packs values (already representable in dt) into dt's bytes.
func encode(dt hal.DType, v []float64) []byte {
	raw := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case hal.Float32:
			binary.LittleEndian.PutUint32(raw[i*4:], math.Float32bits(float32(x)))
		case hal.Float64:
			binary.LittleEndian.PutUint64(raw[i*8:], math.Float64bits(x))
		case hal.Int32:
			binary.LittleEndian.PutUint32(raw[i*4:], uint32(int32(x)))
		case hal.Int64:
			binary.LittleEndian.PutUint64(raw[i*8:], uint64(int64(x)))
		case hal.Float16:
			binary.LittleEndian.PutUint16(raw[i*2:], f16Bits(x))
		}
	}
	return raw
}

// decode unpacks dt's bytes into float64s (exactly).
func decode(dt hal.DType, raw []byte) []float64 {
	v := make([]float64, len(raw)/dt.Size())
	for i := range v {
		switch dt {
		case hal.Float32:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i*4:])))
		case hal.Float64:
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[i*8:]))
		case hal.Int32:
			v[i] = float64(int32(binary.LittleEndian.Uint32(raw[i*4:])))
		case hal.Int64:
			// Exact while |v| ≤ 2⁵³, which the suite's values keep to
			// (saturated values, ±2⁶³, are exact too).
			v[i] = float64(int64(binary.LittleEndian.Uint64(raw[i*8:])))
		case hal.Float16:
			v[i] = f16Value(binary.LittleEndian.Uint16(raw[i*2:]))
		}
	}
	return v
}

// roundTo rounds x to the nearest value of dt, ties to even, overflowing to
// ±Inf: what one IEEE rounding to dt gives. Int32 truncates and saturates
// as Copy does.
func roundTo(dt hal.DType, x float64) float64 {
	switch dt {
	case hal.Float32:
		return float64(float32(x))
	case hal.Float16:
		return f16Value(f16Bits(x))
	case hal.Int32:
		return toInt32(x)
	case hal.Int64:
		return toInt64(x)
	}
	return x
}

// toInt64 is Copy's float → int64 conversion as a float64: truncation
// toward zero, saturating at ±2⁶³ (the float64 nearest the int64 range's
// ends, which is how decode reads MaxInt64 and MinInt64), NaN to 0.
func toInt64(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= 0x1p63:
		return 0x1p63
	case x <= -0x1p63:
		return -0x1p63
	}
	return math.Trunc(x)
}

// toInt32 is Copy's float → int32 conversion: truncation toward zero,
// saturating at the int32 range, NaN to 0.
func toInt32(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return math.Trunc(x)
}

// f16Bits rounds x to IEEE 754 binary16 (1 sign, 5 exponent, 10 fraction
// bits, bias 15), ties to even, and returns its bits. Written from the
// format's definition rather than taken from a library, so a backend that
// uses a library for its conversions is checked against something else.
func f16Bits(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	switch {
	case math.IsNaN(x):
		return 0x7e00 // quiet NaN
	case math.IsInf(x, 0):
		return sign | 0x7c00
	case x == 0:
		return sign
	case x < 0x1p-14:
		// Subnormal: a multiple of 2⁻²⁴. A result of 1024 is 2⁻¹⁴, whose
		// bits (exponent 1, fraction 0) are exactly 1024 too.
		return sign | uint16(math.RoundToEven(x*0x1p24))
	}
	_, e := math.Frexp(x) // x = f·2^e, f in [0.5, 1)
	e--                   // x = m·2^e, m in [1, 2)
	frac := math.RoundToEven((math.Ldexp(x, -e) - 1) * 1024)
	if frac == 1024 { // rounded up to the next power of two
		frac = 0
		e++
	}
	if e > 15 {
		return sign | 0x7c00 // ±Inf
	}
	return sign | uint16(e+15)<<10 | uint16(frac)
}

// f16Value is the value of binary16 bits h.
func f16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * frac * 0x1p-24
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// unitRoundoff is u = 2^−p for dt's p-bit significand: the largest
// relative error of one rounding to nearest. Int32 has none.
func unitRoundoff(dt hal.DType) float64 {
	switch dt {
	case hal.Float32:
		return 0x1p-24
	case hal.Float64:
		return 0x1p-53
	case hal.Float16:
		return 0x1p-11
	}
	return 0
}

// minNormal is dt's smallest positive normal number. Results below it may
// be flushed to zero: WGSL allows it and llvmpipe does it.
func minNormal(dt hal.DType) float64 {
	switch dt {
	case hal.Float32:
		return 0x1p-126
	case hal.Float64:
		return 0x1p-1022
	case hal.Float16:
		return 0x1p-14
	}
	return 0
}

// maxFinite is dt's largest finite value.
func maxFinite(dt hal.DType) float64 {
	switch dt {
	case hal.Float32:
		return math.MaxFloat32
	case hal.Float64:
		return math.MaxFloat64
	case hal.Float16:
		return 65504
	}
	return math.MaxInt32
}
