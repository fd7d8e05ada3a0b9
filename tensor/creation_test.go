package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreation(t *testing.T) { forEachDevice(t, testCreation) }

func testCreation(t *testing.T, dev *Device) {
	t.Run("Zeros Ones", func(t *testing.T) {
		z, o, s := Zeros(dev, 3, 5), Ones(dev, 1025), Zeros(dev)
		defer releaseAll(z, o, s)
		assert.Equal(t, make([]float32, 15), read(t, z))
		assert.Equal(t, onesFloat32(1025), read(t, o))
		assert.Equal(t, []int{}, s.Shape())
		assert.Equal(t, []float32{0}, read(t, s))
		assert.Equal(t, Float32, o.DType())
	})
	t.Run("Full", func(t *testing.T) {
		forEachDType(t, dev, "Full", func(dtype DType) { Full(dev, dtype, 1, 1).Release() }, func(t *testing.T, dtype DType) {
			x := Full(dev, dtype, -2.75, 2, 7)
			like := FullLike(x, 3)
			zeros, ones := ZerosLike(x), OnesLike(x)
			defer releaseAll(x, like, zeros, ones)
			want := roundTo(dtype, -2.75)
			if dtype.IsInteger() {
				want = -2 // truncated, as torch.full
			}
			for _, v := range read64(t, x) {
				require.Equal(t, want, v)
			}
			for _, c := range []struct {
				x    *Tensor
				want float64
			}{{like, 3}, {zeros, 0}, {ones, 1}} {
				assert.Equal(t, dtype, c.x.DType())
				assert.Equal(t, []int{2, 7}, c.x.Shape())
				for _, v := range read64(t, c.x) {
					require.Equal(t, c.want, v)
				}
			}
		})
	})
	t.Run("Arange", func(t *testing.T) {
		for _, tc := range []struct {
			dtype            DType
			start, end, step float64
			want             []float64
		}{
			{Float32, 0, 5, 1, []float64{0, 1, 2, 3, 4}},
			{Float32, 1, 2, 0.25, []float64{1, 1.25, 1.5, 1.75}},
			{Float32, 5, 0, -1.5, []float64{5, 3.5, 2, 0.5}},
			{Int32, -3, 4, 2, []float64{-3, -1, 1, 3}},
			{Float32, 2, 2, 1, []float64{}},
			{Float64, 0, 0.3, 0.1, []float64{0, 0.1, 0.2}},
		} {
			if !Supports(dev, "Arange", tc.dtype) {
				continue
			}
			x := Arange(dev, tc.dtype, tc.start, tc.end, tc.step)
			assert.Equal(t, tc.dtype, x.DType())
			checkClose(t, tc.want, read64(t, x), fillTol(tc.dtype, tc.start, tc.step, tc.end))
			x.Release()
		}
		big := Arange(dev, Float32, 0, 1025, 1)
		defer big.Release()
		got := read(t, big)
		for i, v := range got {
			require.Equal(t, float32(i), v)
		}
	})
	t.Run("Linspace", func(t *testing.T) {
		for _, tc := range []struct {
			start, end float64
			n          int
		}{{0, 1, 5}, {-1, 1, 1000}, {3, 3, 7}, {2, 10, 1}, {0, 1, 0}, {1, -1, 1025}} {
			x := Linspace(dev, tc.start, tc.end, tc.n)
			want := make([]float64, tc.n)
			step := (tc.end - tc.start) / float64(tc.n-1)
			for i := range want {
				if i < tc.n/2 {
					want[i] = tc.start + float64(i)*step
				} else {
					want[i] = tc.end - float64(tc.n-1-i)*step
				}
			}
			if tc.n == 1 {
				want[0] = tc.start
			}
			got := read64(t, x)
			checkClose(t, want, got, fillTol(Float32, tc.start, step, tc.end))
			if tc.n > 1 {
				assert.Equal(t, tc.start, got[0])
				assert.Equal(t, roundTo(Float32, tc.end), got[tc.n-1], "both ends are exact")
			}
			x.Release()
		}
	})
	t.Run("Eye", func(t *testing.T) {
		for _, s := range [][2]int{{3, 3}, {2, 4}, {4, 2}, {1, 1}, {0, 3}} {
			x := Eye(dev, s[0], s[1])
			want := make([]float32, s[0]*s[1])
			for i := range min(s[0], s[1]) {
				want[i*s[1]+i] = 1
			}
			assert.Equal(t, []int{s[0], s[1]}, x.Shape())
			assert.Equal(t, want, read(t, x))
			x.Release()
		}
	})
	t.Run("From and read back", func(t *testing.T) {
		i := FromInt32(dev, []int32{-7, 0, 1 << 30}, 3, 1)
		defer i.Release()
		got, err := i.Int32s()
		require.NoError(t, err)
		assert.Equal(t, []int32{-7, 0, 1 << 30}, got)
		f, err := i.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{-7, 0, 1 << 30}, f)
		item := i.Slice(0, 2, 3, 1)
		defer item.Release()
		v, err := item.Item()
		require.NoError(t, err)
		assert.Equal(t, float64(1<<30), v)
		if Supports(dev, "FromFloat64", Float64) {
			d := FromFloat64(dev, []float64{1.0000000001, -2.5})
			defer d.Release()
			assert.Equal(t, []float64{1.0000000001, -2.5}, read64(t, d))
			ints, err := d.Int32s()
			require.NoError(t, err)
			assert.Equal(t, []int32{1, -2}, ints)
		}
	})
}

func TestCreationErrors(t *testing.T) {
	dev := openCPU(t)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { Arange(dev, Float32, 0, 5, 0) }, "tensor: Arange: need finite start and end and a non-zero step, got start 0, end 5, step 0"},
		{func() { Arange(dev, Float32, 0, 5, -1) }, "tensor: Arange: end 5 is not reachable from start 0 with step -1"},
		{func() { Arange(dev, Int32, 0, 4e9, 1e9) }, "tensor: Arange: value 3e+09 does not fit in int32"},
		{func() { Linspace(dev, 0, 1, -1) }, "tensor: Linspace: negative count -1"},
		{func() { Eye(dev, -1, 2) }, "tensor: Eye: negative dimension in shape [-1 2]"},
		{func() { Full(dev, Int32, 1e10, 2) }, "tensor: Full: value 1e+10 does not fit in int32"},
		{func() { Full(dev, DType(9), 1, 2) }, "tensor: Full: invalid dtype DType(9)"},
		{func() { Zeros(dev, 1, 2, 3, 4, 5, 6, 7, 8, 9) }, "tensor: Zeros: shape [1 2 3 4 5 6 7 8 9] has rank 9, more than the maximum 8"},
		{func() { FromInt32(dev, []int32{1, 2}, 3) }, "tensor: FromInt32: shape [3] needs 3 elements, data has 2"},
	} {
		assert.Equal(t, tc.want, panicMessage(t, tc.f))
	}
}

// fillTol bounds the error of the Fill kernel's start + i·step: a GPU
// computes it in float32, rounding step, the product and the sum.
func fillTol(dtype DType, start, step, end float64) func(int) float64 {
	return func(i int) float64 {
		return 4 * epsilon[dtype] * (math.Abs(start) + math.Abs(float64(i)*step) + math.Abs(end))
	}
}
