package checkpoint

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

func TestRoundTrip(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		rng := rand.New(rand.NewPCG(1, 2))
		shapes := [][]int{{}, {0}, {7}, {3, 5}, {2, 3, 4}, {1, 1, 2, 1, 3}}
		dtypes := []tensor.DType{tensor.Float32, tensor.Int32}
		if dev.Name() == "cpu" {
			dtypes = append(dtypes, tensor.Float64, tensor.Float16)
		}
		want := map[string][]uint64{}
		tensors := map[string]*tensor.Tensor{}
		defer releaseAll(tensors)
		for _, dt := range dtypes {
			for i, shape := range shapes {
				n := 1
				for _, d := range shape {
					n *= d
				}
				bits := make([]uint64, n)
				for j := range bits {
					switch dt {
					case tensor.Float16:
						bits[j] = uint64(rng.Uint32() & 0xffff)
						if bits[j]&0x7c00 == 0x7c00 && bits[j]&0x3ff != 0 {
							bits[j] = bits[j]&0x8000 | 0x7e00 // NaNs are canonical in F16
						}
					case tensor.Float64:
						bits[j] = rng.Uint64()
					default:
						bits[j] = uint64(rng.Uint32())
						if dt == tensor.Float32 && bits[j]&0x7f800000 == 0x7f800000 && bits[j]&0x7fffff != 0 {
							bits[j] |= 0x400000 // keep NaNs quiet, as every device does
						}
					}
				}
				name := dtypeNames[dt] + "/" + string(rune('a'+i))
				tensors[name] = fromBits(dev, dt, bits, shape)
				require.NoError(t, tensors[name].Err())
				want[name] = bits
			}
		}
		meta := map[string]string{"epoch": "3", "ünï\n": "\"x\"\\"}
		path := filepath.Join(t.TempDir(), "rt.safetensors")
		require.NoError(t, WriteFile(path, tensors, meta))
		got, gotMeta, err := ReadFile(path, dev)
		require.NoError(t, err)
		defer releaseAll(got)
		require.Equal(t, meta, gotMeta)
		require.Len(t, got, len(tensors))
		for name, orig := range tensors {
			g := got[name]
			require.NotNil(t, g, name)
			require.Equal(t, dev, g.Device())
			require.Equal(t, orig.DType(), g.DType(), name)
			require.Equal(t, orig.Shape(), g.Shape(), name)
			b := bitsOf(t, g)
			if len(want[name]) == 0 {
				require.Empty(t, b, name)
			} else {
				require.Equal(t, want[name], b, name)
			}
		}
	})
}

// A view that is not contiguous is written in row-major order of its
// logical elements, as PyTorch's contiguous() would give.
func TestWriteView(t *testing.T) {
	dev := cpuDevice(t)
	x := tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Release()
	xt := x.Transpose(0, 1)
	defer xt.Release()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, map[string]*tensor.Tensor{"t": xt}, nil))
	got, meta, err := Read(&buf, dev)
	require.NoError(t, err)
	defer releaseAll(got)
	require.Empty(t, meta)
	require.Equal(t, []int{3, 2}, got["t"].Shape())
	v, err := got["t"].Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 4, 2, 5, 3, 6}, v)
}

func TestWriteDeterministicAndAligned(t *testing.T) {
	dev := cpuDevice(t)
	tensors := map[string]*tensor.Tensor{}
	defer releaseAll(tensors)
	for _, name := range []string{"z", "b", "a.1", "a.10", "a.2", "B"} {
		tensors[name] = tensor.FromFloat32(dev, []float32{1, 2, 3})
	}
	var first []byte
	for range 5 {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, tensors, map[string]string{"y": "1", "x": "2"}))
		if first == nil {
			first = buf.Bytes()
			continue
		}
		require.Equal(t, first, buf.Bytes())
	}
	n := binary.LittleEndian.Uint64(first)
	require.Zero(t, n%8, "header padded to 8 bytes")
	header := string(first[8 : 8+n])
	require.Equal(t, `{"__metadata__":{"x":"2","y":"1"},"B":`, header[:len(`{"__metadata__":{"x":"2","y":"1"},"B":`)])
	order := []string{`"B"`, `"a.1"`, `"a.10"`, `"a.2"`, `"b"`, `"z"`}
	last := -1
	for _, k := range order {
		i := strings.Index(header, k+":")
		require.Greater(t, i, last, k)
		last = i
	}
	require.Equal(t, strings.TrimRight(header, " "), header[:strings.LastIndex(header, "}")+1])
}

func TestWriteErrors(t *testing.T) {
	dev := cpuDevice(t)
	x := tensor.FromFloat32(dev, []float32{1})
	defer x.Release()
	var buf bytes.Buffer
	require.ErrorContains(t, Write(&buf, map[string]*tensor.Tensor{"__metadata__": x}, nil), "reserved")
	require.ErrorContains(t, Write(&buf, map[string]*tensor.Tensor{"a": nil}, nil), `"a" is nil`)
	require.ErrorContains(t, Write(&buf, map[string]*tensor.Tensor{"\xff": x}, nil), "UTF-8")
	require.ErrorContains(t, Write(&buf, nil, map[string]string{"k": "\xff"}), "UTF-8")
	require.ErrorContains(t, WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir"), nil, nil), "checkpoint")
}

// Every dtype the device cannot hold is an error of Read, not a panic of
// the tensor package.
func TestReadUnsupportedOnDevice(t *testing.T) { forEachWebGPU(t, testReadUnsupportedOnDevice) }

func testReadUnsupportedOnDevice(t *testing.T, dev *tensor.Device) {
	file := rawFile(`{"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8))
	_, _, err := Read(bytes.NewReader(file), dev)
	if dev.Capabilities().Supports(hal.KernelCopy, tensor.Float64) {
		require.NoError(t, err)
		return
	}
	require.ErrorContains(t, err, `tensor "x"`)
}

func TestReadEmpty(t *testing.T) {
	dev := cpuDevice(t)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, nil, nil))
	require.Equal(t, rawFile("{}      ", nil), buf.Bytes())
	got, meta, err := Read(&buf, dev)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NotNil(t, meta)
	require.Empty(t, meta)
}

// smallFile is a valid file with two tensors and metadata.
func smallFile(t testing.TB) []byte {
	dev := cpuDevice(t)
	a := tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2)
	b := tensor.FromInt32(dev, []int32{-1, 5})
	defer a.Release()
	defer b.Release()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, map[string]*tensor.Tensor{"a": a, "b": b}, map[string]string{"m": "v"}))
	return buf.Bytes()
}

func TestReadTruncated(t *testing.T) {
	dev := cpuDevice(t)
	file := smallFile(t)
	for n := range len(file) {
		got, _, err := Read(bytes.NewReader(file[:n]), dev)
		require.Error(t, err, "prefix of %d bytes", n)
		require.Nil(t, got)
	}
	got, _, err := Read(bytes.NewReader(file), dev)
	require.NoError(t, err)
	releaseAll(got)
	_, _, err = Read(bytes.NewReader(append(file, 0)), dev)
	require.ErrorContains(t, err, "1 data bytes after the last tensor")
}

func TestReadCorrupt(t *testing.T) {
	dev := cpuDevice(t)
	f32 := func(offsets string) string {
		return `{"a":{"dtype":"F32","shape":[2],"data_offsets":` + offsets + `}}`
	}
	data8 := make([]byte, 8)
	cases := []struct {
		name, header string
		data         []byte
		want         string
	}{
		{"not an object", `[]`, nil, "does not start with a JSON object"},
		{"leading space", ` {}`, nil, "does not start with a JSON object"},
		{"broken JSON", `{"a":{"dtype":"F32",`, nil, "invalid JSON"},
		{"trailing garbage", `{} x`, nil, "data after the object"},
		{"two objects", `{}{}`, nil, "data after the object"},
		{"invalid UTF-8", "{\"\xff\":1}", nil, "UTF-8"},
		{"duplicate tensor", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data8, `duplicate key "a"`},
		{"duplicate field", `{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, data8, `duplicate key "dtype"`},
		{"wrong dtype", `{"a":{"dtype":"float32","shape":[2],"data_offsets":[0,8]}}`, data8, `tensor "a": unknown dtype "float32"`},
		{"lower-case dtype", `{"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}}`, data8, `unknown dtype "f32"`},
		{"foreign dtype", `{"a":{"dtype":"U16","shape":[4],"data_offsets":[0,8]}}`, data8, "U16 has no webtensor counterpart"},
		{"BF16 size", `{"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,16]}}`, data8, "span 16 bytes, but BF16[4] needs 8"},
		{"dtype not a string", `{"a":{"dtype":3,"shape":[2],"data_offsets":[0,8]}}`, data8, `"dtype" is not a string`},
		{"missing field", `{"a":{"dtype":"F32","shape":[2]}}`, data8, `missing field "data_offsets"`},
		{"unknown field", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`, data8, `unknown field "x"`},
		{"entry not an object", `{"a":[1]}`, nil, `tensor "a": entry is not a JSON object`},
		{"negative dim", `{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, data8, "not a non-negative integer"},
		{"fractional dim", `{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, data8, "not a non-negative integer"},
		{"null dim", `{"a":{"dtype":"F32","shape":[null],"data_offsets":[0,8]}}`, data8, "not a non-negative integer"},
		{"null shape", `{"a":{"dtype":"F32","shape":null,"data_offsets":[0,8]}}`, data8, "is not an array"},
		{"huge dim", `{"a":{"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,8]}}`, data8, "too many elements"},
		{"overflowing shape", `{"a":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}}`, nil, "too many elements"},
		{"rank 9", `{"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}}`, data8, "rank 9"},
		{"one offset", f32(`[0]`), data8, "has 1 numbers, want 2"},
		{"reversed offsets", f32(`[8,0]`), data8, "end before they begin"},
		{"wrong span", f32(`[0,4]`), data8[:4], "span 4 bytes, but F32[2] needs 8"},
		{"offsets out of range", f32(`[0,8]`), data8[:4], `tensor "a" ends at byte 8 of the data, but the file has only 4`},
		{"huge offsets", f32(`[18446744073709551607,18446744073709551615]`), data8, "out of range"},
		{"gap at start", f32(`[4,12]`), make([]byte, 12), "gap of 4 unused bytes after the start of the data"},
		{"overlap", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data8, `tensor "b" (bytes 4 to 8) overlaps tensor "a" (bytes 0 to 8)`},
		{"gap between", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, make([]byte, 12), `gap of 4 unused bytes after tensor "a"`},
		{"metadata not strings", `{"__metadata__":{"k":1}}`, nil, `value of "k" is not a string`},
		{"metadata null value", `{"__metadata__":{"k":null}}`, nil, `value of "k" is not a string`},
		{"metadata not an object", `{"__metadata__":"x"}`, nil, "__metadata__: is not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := Read(bytes.NewReader(rawFile(c.header, c.data)), dev)
			require.ErrorContains(t, err, c.want)
			require.Nil(t, got)
		})
	}

	t.Run("header beyond the file", func(t *testing.T) {
		file := rawFile(`{}`, nil)
		binary.LittleEndian.PutUint64(file, 1000)
		_, _, err := Read(bytes.NewReader(file), dev)
		require.ErrorContains(t, err, "header length 1000 exceeds the 2 bytes that follow it")
	})
	t.Run("huge header length", func(t *testing.T) {
		file := binary.LittleEndian.AppendUint64(nil, 1<<62)
		_, _, err := Read(bytes.NewReader(file), dev)
		require.ErrorContains(t, err, "exceeds the limit")
	})
	t.Run("corrupted header byte", func(t *testing.T) {
		file := smallFile(t)
		for i := 8; i < 8+int(binary.LittleEndian.Uint64(file)); i++ {
			bad := bytes.Clone(file)
			bad[i] ^= 0x55
			got, _, err := Read(bytes.NewReader(bad), dev)
			if err == nil { // a flip inside a name or metadata string
				releaseAll(got)
			}
		}
	})
	t.Run("valid: padding and empty tensors", func(t *testing.T) {
		header := `{"e":{"dtype":"F64","shape":[0,3],"data_offsets":[0,0]},"a":{"dtype":"I32","shape":[],"data_offsets":[0,4]},"z":{"dtype":"F16","shape":[0],"data_offsets":[4,4]}}` + "   \n "
		got, meta, err := Read(bytes.NewReader(rawFile(header, []byte{7, 0, 0, 0})), dev)
		require.NoError(t, err)
		defer releaseAll(got)
		require.Empty(t, meta)
		require.Equal(t, []int{0, 3}, got["e"].Shape())
		require.Equal(t, []int{}, got["a"].Shape())
		v, err := got["a"].Item()
		require.NoError(t, err)
		require.Equal(t, 7.0, v)
		require.Equal(t, tensor.Float16, got["z"].DType())
	})
	t.Run("nil device", func(t *testing.T) {
		_, _, err := Read(bytes.NewReader(smallFile(t)), nil)
		require.ErrorContains(t, err, "nil device")
	})
}

// FuzzRead checks that no input makes Read panic, and that what it
// accepts survives a Write/Read round trip unchanged. The seed corpus runs
// with every `go test`; `go test -fuzz FuzzRead` explores further.
func FuzzRead(f *testing.F) {
	f.Add(smallFile(f))
	f.Add(rawFile(`{}`, nil))
	f.Add(rawFile(`{"a":{"dtype":"F16","shape":[2,0],"data_offsets":[0,0]},"b":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`, make([]byte, 6)))
	f.Add(rawFile(`{"__metadata__":{"k":"v"},"x":{"dtype":"I32","shape":[1,1],"data_offsets":[0,4]}}`, []byte{1, 2, 3, 4}))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	dev := cpuDevice(f)
	f.Fuzz(func(t *testing.T, file []byte) {
		got, meta, err := Read(bytes.NewReader(file), dev)
		if err != nil {
			require.Nil(t, got)
			return
		}
		defer releaseAll(got)
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, got, meta))
		again, meta2, err := Read(&buf, dev)
		require.NoError(t, err)
		defer releaseAll(again)
		require.Equal(t, meta, meta2)
		require.Len(t, again, len(got))
		for name, x := range got {
			y := again[name]
			require.NotNil(t, y)
			require.Equal(t, x.Shape(), y.Shape())
			require.Equal(t, bitsOf(t, x), bitsOf(t, y))
		}
	})
}
