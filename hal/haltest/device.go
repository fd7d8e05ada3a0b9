package haltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// suite is the device under test and what it declared.
type suite struct {
	dev   hal.Device
	caps  hal.Capabilities
	arith Arithmetic // the floating-point rules its kernels are held to
	// big caches the large inputs that several reductions share;
	// cleanups free them when Run ends.
	big      map[string]operand
	cleanups []func()
}

// alloc allocates size bytes and frees them when the test ends, so the
// suite's own footprint does not pile up across cases.
func alloc(t testing.TB, dev hal.Device, size int64) hal.Buffer {
	t.Helper()
	b, err := dev.Alloc(size)
	require.NoError(t, err, "Alloc(%d)", size)
	require.NotNil(t, b)
	t.Cleanup(func() { dev.Free(b) })
	return b
}

// upload allocates a buffer holding v in dt.
func upload(t testing.TB, dev hal.Device, dt hal.DType, v []float64) hal.Buffer {
	t.Helper()
	b := alloc(t, dev, int64(len(v)*dt.Size()))
	require.NoError(t, dev.Write(b, encode(dt, v)))
	return b
}

// download reads the first n elements of b as dt.
func download(t testing.TB, dev hal.Device, b hal.Buffer, dt hal.DType, n int) []float64 {
	t.Helper()
	raw := make([]byte, n*dt.Size())
	require.NoError(t, dev.Read(b, raw))
	return decode(dt, raw)
}

// operand is a view on the device together with the host copy of its
// whole buffer.
type operand struct {
	hal.View
	store []float64
}

// values returns the view's elements in row-major order.
func (o operand) values() []float64 {
	return viewValues(o.View, o.store)
}

// viewValues picks v's elements, in row-major order, out of a host copy of
// its buffer.
func viewValues(v hal.View, store []float64) []float64 {
	out := make([]float64, v.Elements())
	forEach(v.Shape, v.Strides, v.Offset, func(i, pos int) { out[i] = store[pos] })
	return out
}

// operand makes a device view of dtype dt and the given shape, placed as
// l says, with every buffer element (used or not) drawn from gen and
// rounded to dt.
func (s *suite) operand(t testing.TB, dt hal.DType, shape []int, l layout, gen func() float64) operand {
	t.Helper()
	off, strides, size := l.place(shape)
	store := make([]float64, size)
	for i := range store {
		store[i] = roundTo(dt, gen())
	}
	buf := upload(t, s.dev, dt, store)
	return operand{View: hal.View{Buf: buf, DType: dt, Offset: off, Shape: shape, Strides: strides}, store: store}
}

// fromValues makes a device view of the given row-major values, placed as
// l says; unused buffer elements are random.
func (s *suite) fromValues(t testing.TB, dt hal.DType, shape []int, l layout, vals []float64, rng *rand.Rand) operand {
	t.Helper()
	require.Equal(t, numel(shape), len(vals), "suite bug: values for %v", shape)
	off, strides, size := l.place(shape)
	store := make([]float64, size)
	for i := range store {
		store[i] = roundTo(dt, sentinelish(dt, rng))
	}
	forEach(shape, strides, off, func(i, pos int) { store[pos] = roundTo(dt, vals[i]) })
	buf := upload(t, s.dev, dt, store)
	return operand{View: hal.View{Buf: buf, DType: dt, Offset: off, Shape: shape, Strides: strides}, store: store}
}

// sentinel is what output buffers hold before a kernel runs, so an element
// the kernel skipped shows up even where the answer is 0. It is exact in
// every dtype and far from the values the suite computes.
func sentinel(dt hal.DType) float64 {
	if dt.IsInteger() {
		return -1234567
	}
	return -7.25
}

// sentinelish returns random filler for unused buffer elements: random
// values in a range that results rarely fall in.
func sentinelish(dt hal.DType, rng *rand.Rand) float64 {
	if dt.IsInteger() {
		return float64(-1_000_000 - rng.IntN(1000))
	}
	return -(1 + rng.Float64()) * 1e3
}

// output makes a destination view whose whole buffer holds the sentinel.
func (s *suite) output(t testing.TB, dt hal.DType, shape []int, l layout) operand {
	t.Helper()
	v := sentinel(dt)
	return s.operand(t, dt, shape, l, func() float64 { return v })
}

// result reads o's buffer back after a kernel wrote o, asserts that the
// kernel left every element outside the view as it was, and returns the
// view's elements in row-major order.
func (s *suite) result(t testing.TB, o operand) []float64 {
	t.Helper()
	got := download(t, s.dev, o.Buf, o.DType, len(o.store))
	inView := make([]bool, len(o.store))
	forEach(o.Shape, o.Strides, o.Offset, func(_, pos int) { inView[pos] = true })
	var outside []int
	for pos, in := range inView {
		if !in && !sameBits(got[pos], o.store[pos]) {
			outside = append(outside, pos)
		}
	}
	if len(outside) > maxReported {
		outside = outside[:maxReported]
	}
	assert.Empty(t, outside, "kernel wrote buffer elements outside dst %v (buffer positions, first few)", o.View)
	return viewValues(o.View, got)
}

// sameBits compares two float64s as values, with NaN equal to NaN and −0
// different from +0.
func sameBits(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// exact makes a contiguous view of zeros whose buffer holds exactly its
// elements, for the tests of views that overrun their buffer.
func (s *suite) exact(t testing.TB, dt hal.DType, shape ...int) hal.View {
	t.Helper()
	buf := upload(t, s.dev, dt, make([]float64, numel(shape)))
	return hal.Contiguous(buf, dt, shape...)
}

// has reports whether the device declared kernel for dt.
func (s *suite) has(kernel string, dt hal.DType) bool { return s.caps.Supports(kernel, dt) }

// floatTypes and allTypes are the dtypes the suite tries per kernel.
var floatTypes = []hal.DType{hal.Float32, hal.Float64, hal.Float16}
