package cpu

import (
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/hal"
)

// The contiguous float32 fast paths. Each calls its assembly kernel where
// hasSIMD, else a portable loop with the same results: the arithmetic ones
// round identically, and the softmax pieces stay within the bounds their
// comments give.

// binaryF32 runs an arithmetic op on equal-length slices, or reports false
// for an op without a fast path.
func binaryF32(op hal.BinaryOp, out, a, b []float32) bool {
	n := len(out)
	a, b = a[:n], b[:n]
	if !hasSIMD || n == 0 {
		return false
	}
	var simd, nt func(out, a, b *float32, n int)
	switch op {
	case hal.Add:
		simd, nt = addF32AVX2, addF32NT
	case hal.Sub:
		simd, nt = subF32AVX2, subF32NT
	case hal.Mul:
		simd, nt = mulF32AVX2, mulF32NT
	case hal.Div:
		simd, nt = divF32AVX2, divF32NT
	case hal.ReLUGrad:
		// A compare and a mask, no non-temporal variant: the gradient
		// it writes is read right after, by the convolution's backward.
		reluGradF32AVX2(&out[0], &a[0], &b[0], n)
		return true
	default:
		return false
	}
	if head, body := ntSplit(out); body > 0 {
		if head > 0 {
			simd(&out[0], &a[0], &b[0], head)
		}
		nt(&out[head], &a[head], &b[head], body)
		if i := head + body; i < n {
			simd(&out[i], &a[i], &b[i], n-i)
		}
		return true
	}
	simd(&out[0], &a[0], &b[0], n)
	return true
}

// ntMin is the chunk length from which the arithmetic kernels store past
// the caches (VMOVNTPS): a chunk that long no longer fits in them next to
// its inputs, and a normal store would first read each line for
// ownership, a third more traffic for relu, a quarter for add. Measured
// on Zen 4 (best of 100 calls, GB/s of least traffic): relu/16M 39 → 53
// at one thread, add/16M 40 → 55, add and relu/4M 52-75 → 72-80; at 1M,
// which the L3 holds, the cached stores stay faster. Two threads cut 4M
// into 2M chunks whose data the shared L3 still holds: there cached
// stores run relu/4M at 127 GB/s against 86 past the caches, hence 4M.
var ntMin = 4 << 20

// ntSplit cuts out for the non-temporal kernels: head elements up to a
// 64-byte boundary, then body, a multiple of 32, stored past the caches.
// body is 0 when out is too short to be worth it.
func ntSplit(out []float32) (head, body int) {
	if len(out) < ntMin {
		return 0, 0
	}
	head = int(-uintptr(unsafe.Pointer(&out[0])) & 63 / 4)
	return head, (len(out) - head) &^ 31
}

// reluF32 sets out = max(x, 0), keeping NaN and mapping −0 to +0.
func reluF32(out, x []float32) {
	x = x[:len(out)]
	if hasSIMD && len(out) > 0 {
		if head, body := ntSplit(out); body > 0 {
			if head > 0 {
				reluF32AVX2(&out[0], &x[0], head)
			}
			reluF32NT(&out[head], &x[head], body)
			if i := head + body; i < len(out) {
				reluF32AVX2(&out[i], &x[i], len(out)-i)
			}
			return
		}
		reluF32AVX2(&out[0], &x[0], len(out))
		return
	}
	for i, v := range x {
		out[i] = max(v, 0)
	}
}

// sumStreamsMin is the length from which sumF32 reads two streams: past
// the caches, where memory bound the one-stream kernel.
const sumStreamsMin = 1 << 18

// sumF32 adds x in float64, which holds every partial sum of float32
// values with 29 bits to spare.
func sumF32(x []float32) float64 {
	if hasAVX512 && len(x) >= sumStreamsMin {
		// Two halves side by side: two streams from memory.
		h := len(x) / 2 &^ 31
		s := sumF32x2AVX512(&x[0], &x[h], h)
		if rest := x[2*h:]; len(rest) > 0 {
			s += sumF32AVX512(&rest[0], len(rest))
		}
		return s
	}
	if hasAVX512 && len(x) > 0 {
		// Twice the AVX2 kernel's speed in cache (the widening is the
		// bottleneck there).
		return sumF32AVX512(&x[0], len(x))
	}
	if hasSIMD && len(x) > 0 {
		return sumF32AVX2(&x[0], len(x))
	}
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i])
		s1 += float64(x[i+1])
		s2 += float64(x[i+2])
		s3 += float64(x[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// extremeF32 returns the max (or min) of x, len(x) ≥ 1, when SIMD can
// give the reduction's exact answer: no NaN (the first NaN must win) and
// an extreme other than ±0 (a tie of −0 and +0 must keep the earlier).
// ok is false otherwise, and the caller walks x in order.
func extremeF32(x []float32, isMin bool) (v float32, ok bool) {
	if !hasSIMD || len(x) == 0 {
		return 0, false
	}
	var nan bool
	if isMin {
		v, nan = minNaNF32AVX2(&x[0], len(x))
	} else {
		v, nan = maxNaNF32AVX2(&x[0], len(x))
	}
	return v, !nan && v != 0
}

// softmaxRowF32 writes softmax (or log_softmax) of the row x into dst, of
// equal length ≥ 1. The SIMD exp is Cephes' expf with FMA: at most 2 ulp
// from e^t (measured 1 ulp, see simd_test.go), flushed to 0 below the
// smallest normal; the portable path rounds float64 exp once.
func softmaxRowF32(dst, x []float32, log bool) {
	n := len(x)
	dst = dst[:n]
	var m, s float32
	if hasSIMD {
		m = maxF32AVX2(&x[0], n)
		s = expSumF32AVX2(&dst[0], &x[0], n, m)
	} else {
		m = x[0]
		for _, v := range x[1:] {
			m = max(m, v)
		}
		for i, v := range x {
			e := float32(math.Exp(float64(v - m)))
			dst[i] = e
			s += e
		}
	}
	if log {
		l := float32(math.Log(float64(s)))
		if hasSIMD {
			shiftF32AVX2(&dst[0], &x[0], n, m, l)
			return
		}
		for i, v := range x {
			dst[i] = (v - m) - l
		}
		return
	}
	r := 1 / s
	if hasSIMD {
		scaleF32AVX2(&dst[0], n, r)
		return
	}
	for i := range dst {
		dst[i] *= r
	}
}

// softmaxRowF64 is softmaxRowF32 in float64, always portable.
func softmaxRowF64(dst, x []float64, log bool) {
	dst = dst[:len(x)]
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	var s float64
	for i, v := range x {
		e := math.Exp(v - m)
		dst[i] = e
		s += e
	}
	if log {
		l := math.Log(s)
		for i, v := range x {
			dst[i] = (v - m) - l
		}
		return
	}
	r := 1 / s
	for i := range dst {
		dst[i] *= r
	}
}
