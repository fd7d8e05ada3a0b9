package haltest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

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

// upload allocates a buffer holding v.
func upload(t testing.TB, dev hal.Device, v []float32) hal.Buffer {
	t.Helper()
	b := alloc(t, dev, int64(len(v))*4)
	require.NoError(t, dev.Write(b, encode(v)))
	return b
}

// download reads the first n float32s of b.
func download(t testing.TB, dev hal.Device, b hal.Buffer, n int) []float32 {
	t.Helper()
	raw := make([]byte, n*4)
	require.NoError(t, dev.Read(b, raw))
	return decode(raw)
}

// encode and decode spell out the little-endian float32 layout that hal
// buffers use, independently of how a backend does it.
func encode(v []float32) []byte {
	raw := make([]byte, len(v)*4)
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[i*4:], math.Float32bits(x))
	}
	return raw
}

func decode(raw []byte) []float32 {
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[i*4:]))
	}
	return v
}

// filled returns n copies of x.
func filled(n int, x float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = x
	}
	return v
}

// foreignBuffer is a hal.Buffer that no device made.
type foreignBuffer struct{ size int64 }

func (b foreignBuffer) Size() int64 { return b.size }
