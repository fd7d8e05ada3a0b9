package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// elementGrain is the number of elements a worker must get before an
// elementwise kernel is split across goroutines: 32K float32s take some
// 10 µs to stream, enough to amortize waking another goroutine.
const elementGrain = 1 << 15

// Kernels work on equal-length chunks; dst may alias an input because each
// element is read before it is written.
var (
	binaryKernels = map[hal.BinaryOp]func(dst, a, b []float32){
		hal.Add: add,
		hal.Mul: mul,
	}
	unaryKernels = map[hal.UnaryOp]func(dst, src []float32){
		hal.ReLU:    relu,
		hal.Sigmoid: sigmoid,
	}
)

func add(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)] // lets the compiler drop bounds checks
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func mul(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func relu(dst, src []float32) {
	src = src[:len(dst)]
	for i, x := range src {
		// The builtin compiles without a data-dependent branch; an if on
		// random signs mispredicts half the time and ran 5× slower. It
		// also maps −0 to +0.
		dst[i] = max(x, 0)
	}
}

func sigmoid(dst, src []float32) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = sigmoid1(x)
	}
}

// sigmoid1 is 1/(1+e^−x), evaluated in float64 and always with a
// non-positive exponent: e^−x for x ≥ 0 and e^x/(1+e^x) otherwise. The
// exponential then never overflows, so no Inf/Inf → NaN for large |x|, and
// for very negative x the tiny result keeps full relative precision instead
// of cancelling in 1 − something.
func sigmoid1(x float32) float32 {
	v := float64(x)
	if v >= 0 {
		return float32(1 / (1 + math.Exp(-v)))
	}
	e := math.Exp(v)
	return float32(e / (1 + e))
}
