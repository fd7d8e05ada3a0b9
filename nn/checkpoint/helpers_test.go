package checkpoint

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
	"github.com/x448/float16"
)

// The devices every test runs on (internal/testdevice).
var (
	ci            = testdevice.CI
	cpuDevice     = testdevice.CPU
	forEachDevice = testdevice.ForEach
	forEachWebGPU = testdevice.ForEachWebGPU
)

// bitsOf returns t's elements as their bit patterns, so that NaN and −0
// compare exactly.
func bitsOf(t testing.TB, x *tensor.Tensor) []uint64 {
	t.Helper()
	var out []uint64
	switch x.DType() {
	case tensor.Float64:
		v, err := x.Float64s()
		require.NoError(t, err)
		for _, f := range v {
			out = append(out, math.Float64bits(f))
		}
	case tensor.Int32:
		v, err := x.Int32s()
		require.NoError(t, err)
		for _, i := range v {
			out = append(out, uint64(uint32(i)))
		}
	case tensor.Float16:
		v, err := x.Float32s()
		require.NoError(t, err)
		for _, f := range v {
			out = append(out, uint64(float16.Fromfloat32(f).Bits()))
		}
	default:
		v, err := x.Float32s()
		require.NoError(t, err)
		for _, f := range v {
			out = append(out, uint64(math.Float32bits(f)))
		}
	}
	return out
}

// fromBits makes a tensor of dtype whose elements have the given bit
// patterns.
func fromBits(dev *tensor.Device, dtype tensor.DType, bits []uint64, shape []int) *tensor.Tensor {
	shape = append([]int{}, shape...)
	switch dtype {
	case tensor.Float64:
		v := make([]float64, len(bits))
		for i, b := range bits {
			v[i] = math.Float64frombits(b)
		}
		return tensor.FromFloat64(dev, v, shape...)
	case tensor.Int32:
		v := make([]int32, len(bits))
		for i, b := range bits {
			v[i] = int32(uint32(b))
		}
		return tensor.FromInt32(dev, v, shape...)
	case tensor.Float16:
		v := make([]float32, len(bits))
		for i, b := range bits {
			v[i] = float16.Frombits(uint16(b)).Float32()
		}
		f := tensor.FromFloat32(dev, v, shape...)
		defer f.Release()
		return f.Cast(tensor.Float16)
	}
	v := make([]float32, len(bits))
	for i, b := range bits {
		v[i] = math.Float32frombits(uint32(b))
	}
	return tensor.FromFloat32(dev, v, shape...)
}

func releaseAll(m map[string]*tensor.Tensor) {
	for _, t := range m {
		t.Release()
	}
}

// rawFile assembles a safetensors file from a header string and data,
// without padding, for hand-made corrupt inputs.
func rawFile(header string, data []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	out = append(out, header...)
	return append(out, data...)
}
