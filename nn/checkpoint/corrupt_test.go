package checkpoint

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// Corrupt checkpoints: Load must return an error and leave the module as
// it was, whatever the file holds — truncated, bit-flipped, a header
// length beyond the file or beyond any sane size, the wrong dtype or
// shape — and never panic. A flip that leaves a well-formed file (in the
// data, or whitespace in the header) may load; then the module must hold
// exactly what the file says.

// tinyCheckpoint is a valid checkpoint of newTiny(dev, 1).
func tinyCheckpoint(t testing.TB) []byte {
	dev := cpuDevice(t)
	m := newTiny(dev, 1)
	defer m.release()
	path := filepath.Join(t.TempDir(), "tiny.safetensors")
	require.NoError(t, Save(path, m, nil))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// loadBytes writes file to disk and loads it into m; it checks the
// contract and reports whether the load succeeded.
func loadBytes(t *testing.T, dir string, m *tinyModule, file []byte) bool {
	t.Helper()
	path := filepath.Join(dir, "c.safetensors")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	before := values(t, m)
	err := Load(path, m, nil)
	if err != nil {
		require.Equal(t, before, values(t, m), "a failed Load changed the module: %v", err)
		require.True(t, strings.HasPrefix(err.Error(), "checkpoint: "), "error %q does not say where it comes from", err)
		return false
	}
	// Accepted: the module now holds the file's tensors exactly.
	got, _, rerr := Read(bytes.NewReader(file), cpuDevice(t))
	require.NoError(t, rerr, "Load accepted a file that Read refuses")
	defer releaseAll(got)
	after := values(t, m)
	for name, x := range got {
		if _, ok := after[name]; !ok {
			continue // optimizer state, which Load with a nil opt skips
		}
		v, err := x.Float32s()
		require.NoError(t, err)
		require.Equal(t, bitsOf32(v), bitsOf32(after[name]), name)
	}
	return true
}

// bitsOf32 compares float32s by bits, so that a NaN equals itself; a
// signalling NaN counts as its quiet form, which copies on a device may
// give (as TestRoundTrip notes).
func bitsOf32(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
		if x != x {
			out[i] |= 0x400000
		}
	}
	return out
}

func TestLoadCorrupt(t *testing.T) {
	good := tinyCheckpoint(t)
	hlen := int(binary.LittleEndian.Uint64(good))
	header := string(good[8 : 8+hlen])
	data := good[8+hlen:]
	withHeader := func(h string) []byte { return rawFile(h, data) }
	withLength := func(n uint64) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint64(b, n)
		return b
	}
	cases := map[string][]byte{
		"empty":                 nil,
		"length only":           good[:8],
		"header length 2^64-1":  withLength(^uint64(0)),
		"header length 2^40":    withLength(1 << 40),
		"header length +1":      withLength(uint64(hlen) + 1),
		"header length -1":      withLength(uint64(hlen) - 1),
		"header length 0":       withLength(0),
		"wrong dtype":           withHeader(strings.Replace(header, `"F32"`, `"I32"`, 1)),
		"unknown dtype":         withHeader(strings.Replace(header, `"F32"`, `"BF16"`, 1)),
		"wrong shape":           withHeader(strings.Replace(header, `[3,2]`, `[2,3]`, 1)),
		"shape needs more data": withHeader(strings.Replace(header, `[3,2]`, `[3,3]`, 1)),
		"huge shape":            withHeader(strings.Replace(header, `[3,2]`, `[3037000499,3037000499,3037000499]`, 1)),
		"negative shape":        withHeader(strings.Replace(header, `[3,2]`, `[-3,-2]`, 1)),
		"rank 9":                withHeader(strings.Replace(header, `[3,2]`, `[1,1,1,1,1,1,1,3,2]`, 1)),
		"trailing data":         append(bytes.Clone(good), 0),
		"missing data":          good[:len(good)-4],
		"not JSON":              withHeader(strings.Repeat("x", hlen)),
		"array header":          withHeader(`[]`),
		"renamed tensor":        withHeader(strings.Replace(header, `"0.weight"`, `"0.weigh_"`, 1)),
		"offsets past the end":  withHeader(strings.Replace(header, `"data_offsets":[0,`, `"data_offsets":[4,`, 1)),
	}
	dev := cpuDevice(t)
	m := newTiny(dev, 7)
	defer m.release()
	dir := t.TempDir()
	for name, file := range cases {
		t.Run(name, func(t *testing.T) {
			require.False(t, loadBytes(t, dir, m, file), "a corrupt checkpoint loaded")
		})
	}
	// The table's replacements must have hit something, or they test the
	// good file.
	for _, s := range []string{`"F32"`, `[3,2]`, `"0.weight"`, `"data_offsets":[0,`} {
		require.Contains(t, header, s)
	}

	t.Run("every truncation", func(t *testing.T) {
		for n := range len(good) {
			require.False(t, loadBytes(t, dir, m, good[:n]), "truncated to %d of %d bytes", n, len(good))
		}
	})
	t.Run("every bit flip", func(t *testing.T) {
		loaded := 0
		for i := range len(good) {
			for bit := range 8 {
				b := bytes.Clone(good)
				b[i] ^= 1 << bit
				if loadBytes(t, dir, m, b) {
					loaded++
					require.GreaterOrEqual(t, i, 8, "a flip in the header length loaded")
				}
			}
		}
		// Every flip in the data is a valid file with other values.
		require.GreaterOrEqual(t, loaded, 8*len(data))
	})
}

// The same on WebGPU: a module there is restored through uploads, which
// must not happen for a corrupt file either.
func TestLoadCorruptOnEachDevice(t *testing.T) {
	good := tinyCheckpoint(t)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newTiny(dev, 7)
		defer m.release()
		dir := t.TempDir()
		for _, n := range []int{0, 7, 8, 20, len(good) / 2, len(good) - 1} {
			require.False(t, loadBytes(t, dir, m, good[:n]), "truncated to %d bytes", n)
		}
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint64(b, 1<<62)
		require.False(t, loadBytes(t, dir, m, b))
		require.True(t, loadBytes(t, dir, m, good), "the good file loads")
	})
}

// FuzzLoad loads arbitrary bytes as a checkpoint into a module: an error
// leaves the module unchanged, success gives it the file's values, and
// nothing panics. Seeds are a good checkpoint and damaged copies.
func FuzzLoad(f *testing.F) {
	good := tinyCheckpoint(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	b := bytes.Clone(good)
	b[len(b)-1] ^= 0x80
	f.Add(b)
	b = bytes.Clone(good)
	b[20] ^= 0x01
	f.Add(b)
	f.Add(rawFile(`{"0.weight":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]},"0.bias":{"dtype":"F32","shape":[3],"data_offsets":[24,36]},"1.running_mean":{"dtype":"F32","shape":[3],"data_offsets":[36,48]},"optim.x":{"dtype":"I32","shape":[],"data_offsets":[48,52]}}`, make([]byte, 52)))
	dev := cpuDevice(f)
	f.Fuzz(func(t *testing.T, file []byte) {
		m := newTiny(dev, 7)
		defer m.release()
		loadBytes(t, t.TempDir(), m, file)
	})
}
