package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// harness drives a device from tests with float64 host values.
type harness struct {
	t   testing.TB
	dev *Device
}

func newHarness(t testing.TB) harness {
	d := New()
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return harness{t, d}
}

func encode(dt hal.DType, v []float64) []byte {
	out := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case hal.Float32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		case hal.Float64:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		case hal.Int32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
		case hal.Int64:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(toInt64(x)))
		case hal.Float16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(halfOf64(x)))
		}
	}
	return out
}

func decode(dt hal.DType, b []byte) []float64 {
	out := make([]float64, len(b)/dt.Size())
	for i := range out {
		switch dt {
		case hal.Float32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case hal.Float64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		case hal.Int32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case hal.Int64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
		case hal.Float16:
			out[i] = float64(half(binary.LittleEndian.Uint16(b[2*i:])).Float32())
		}
	}
	return out
}

// round is x as stored in dt.
func round(dt hal.DType, x float64) float64 { return decode(dt, encode(dt, []float64{x}))[0] }

// buffer uploads store as dt.
func (h harness) buffer(dt hal.DType, store []float64) hal.Buffer {
	b, err := h.dev.Alloc(int64(len(store) * dt.Size()))
	require.NoError(h.t, err)
	require.NoError(h.t, h.dev.Write(b, encode(dt, store)))
	return b
}

// view uploads vals as a contiguous view of shape.
func (h harness) view(dt hal.DType, vals []float64, shape ...int) hal.View {
	return hal.Contiguous(h.buffer(dt, vals), dt, shape...)
}

// zeros allocates a contiguous view filled with NaN-free zeros.
func (h harness) zeros(dt hal.DType, shape ...int) hal.View {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return h.view(dt, make([]float64, n), shape...)
}

// read returns v's elements in row-major order.
func (h harness) read(v hal.View) []float64 {
	raw := make([]byte, v.Buf.Size())
	require.NoError(h.t, h.dev.Read(v.Buf, raw))
	store := decode(v.DType, raw)
	out := make([]float64, 0, v.Elements())
	forEachPos(v.Shape, v.Strides, v.Offset, func(pos int) { out = append(out, store[pos]) })
	return out
}

// forEachPos calls fn with the buffer position of each element of a
// strided view in row-major order, computed the slow, obvious way.
func forEachPos(shape, strides []int, off int, fn func(pos int)) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	for i := range n {
		pos, r := off, i
		for k := len(shape) - 1; k >= 0; k-- {
			pos += r % shape[k] * strides[k]
			r /= shape[k]
		}
		fn(pos)
	}
}

// transposed uploads vals (row-major over shape [r, c]) stored
// column-major, so the view has strides [1, r] at an offset.
func (h harness) transposed(dt hal.DType, vals []float64, r, c int) hal.View {
	store := make([]float64, 3+r*c)
	for i := range r {
		for j := range c {
			store[3+j*r+i] = vals[i*c+j]
		}
	}
	return hal.View{Buf: h.buffer(dt, store), DType: dt, Offset: 3, Shape: []int{r, c}, Strides: []int{1, r}}
}

func randn(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return out
}

// eps is the unit roundoff of dt.
func eps(dt hal.DType) float64 {
	switch dt {
	case hal.Float64:
		return 0x1p-53
	case hal.Float16:
		return 0x1p-11
	case hal.Int32, hal.Int64:
		return 0
	}
	return 0x1p-24
}

// near checks got against want element by element within rel·|want| +
// abs, treating NaNs as equal and infinities exactly.
func near(t testing.TB, want, got []float64, rel, abs float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), append([]any{msg}, args...)...)
	for i := range want {
		w, g := want[i], got[i]
		switch {
		case math.IsNaN(w):
			require.Truef(t, math.IsNaN(g), "%s: element %d = %v, want NaN", sprintf(msg, args...), i, g)
		case math.IsInf(w, 0):
			require.Equalf(t, w, g, "%s: element %d", sprintf(msg, args...), i)
		case math.IsNaN(g) || math.IsInf(g, 0):
			require.Failf(t, "mismatch", "%s: element %d = %v, want %v", sprintf(msg, args...), i, g, w)
		default:
			require.LessOrEqualf(t, math.Abs(g-w), rel*math.Abs(w)+abs, "%s: element %d = %v, want %v", sprintf(msg, args...), i, g, w)
		}
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
