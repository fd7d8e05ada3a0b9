package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// randomInt64s returns n values uniform in [-limit, limit].
func randomInt64s(rng *rand.Rand, n int, limit int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = rng.Int64N(2*limit+1) - limit
	}
	return out
}

// TestInt64RoundTrip: FromInt64 and Int64s return every value, on the CPU
// as Int64 (the whole range) and on WebGPU as Int32 (the int32 range), and
// To carries them between the devices.
func TestInt64RoundTrip(t *testing.T) { forEachDevice(t, testInt64RoundTrip) }

func testInt64RoundTrip(t *testing.T, dev *Device) {
	rng := newRand(t)
	limit := int64(math.MaxInt32)
	want := Int64
	if !HoldsInt64(dev) {
		want = Int32
	}
	if HoldsInt64(dev) {
		limit = math.MaxInt64 / 2
	}
	data := randomInt64s(rng, 37, limit)
	data[0], data[1] = -limit, limit
	x := FromInt64(dev, data, 37)
	defer x.Release()
	require.Equal(t, want, x.DType())
	got, err := x.Int64s()
	require.NoError(t, err)
	assert.Equal(t, data, got)

	// Through the CPU and back; a strided view reads in row-major order.
	cpu := openCPU(t)
	y := x.To(cpu)
	z := y.To(dev)
	s := z.Slice(0, 1, 37, 3)
	defer releaseAll(y, z, s)
	got, err = z.Int64s()
	require.NoError(t, err)
	assert.Equal(t, data, got)
	got, err = s.Int64s()
	require.NoError(t, err)
	var every3 []int64
	for i := 1; i < 37; i += 3 {
		every3 = append(every3, data[i])
	}
	assert.Equal(t, every3, got)

	// A scalar keeps rank 0.
	sc := FromInt64(dev, []int64{-7}, []int{}...)
	defer sc.Release()
	assert.Empty(t, sc.Shape())
	v, err := sc.Item()
	require.NoError(t, err)
	assert.Equal(t, -7.0, v)
}

// TestInt64Narrowing: on a device without Int64 (every WebGPU adapter:
// WGSL has no 64-bit integers) Int64 data becomes Int32, and a value out
// of the int32 range is a typed error naming the op, the value, its
// position and the device; kernels that would make an Int64 tensor there
// are unsupported and say so.
func TestInt64Narrowing(t *testing.T) {
	forEachWebGPU(t, func(t *testing.T, dev *Device) {
		require.False(t, HoldsInt64(dev))
		require.False(t, dev.Capabilities().Supports(hal.KernelCopy, Int64), "capabilities report int64 unsupported")
		for _, bad := range []int64{math.MaxInt32 + 1, math.MinInt32 - 1, 1 << 40} {
			data := []int64{1, 2, 3, bad, 5}
			err := Catch(func() { FromInt64(dev, data).Release() })
			require.ErrorIs(t, err, ErrInt64Overflow)
			for _, part := range []string{"FromInt64", fmt.Sprint(bad), "element 3", dev.Name()} {
				assert.Contains(t, err.Error(), part)
			}
		}
		// The int32 range's ends narrow exactly.
		edge := FromInt64(dev, []int64{math.MinInt32, math.MaxInt32})
		defer edge.Release()
		got, err := edge.Int32s()
		require.NoError(t, err)
		assert.Equal(t, []int32{math.MinInt32, math.MaxInt32}, got)

		// To from the CPU: the failure is the result's, returned by reads.
		cpu := openCPU(t)
		src := FromInt64(cpu, []int64{0, -(1 << 33)})
		moved := src.To(dev)
		defer releaseAll(src, moved)
		_, err = moved.Int64s()
		require.ErrorIs(t, err, ErrInt64Overflow)
		assert.Contains(t, err.Error(), "To")
		assert.Contains(t, err.Error(), "-8589934592")

		// Making Int64 on the device itself is refused by name.
		x := FromInt32(dev, []int32{1, 2})
		defer x.Release()
		for name, f := range map[string]func(){
			"Cast": func() { x.Cast(Int64).Release() },
			"Full": func() { Full(dev, Int64, 1, 2).Release() },
		} {
			err := Catch(f)
			require.ErrorIs(t, err, hal.ErrUnsupported, name)
			assert.Contains(t, err.Error(), name)
			assert.Contains(t, err.Error(), "int64")
		}
	})
}

// TestInt64Ops checks the CPU's Int64 kernels beyond the float64-exact
// range against Go's int64 arithmetic: wrapping Add, Sub and Mul, Neg,
// Abs, comparisons, Where, Int64 indices and exact integer casts.
func TestInt64Ops(t *testing.T) {
	dev := openCPU(t)
	rng := newRand(t)
	const n = 53
	av, bv := randomInt64s(rng, n, math.MaxInt64/2), randomInt64s(rng, n, math.MaxInt64/2)
	bv[0], bv[1] = av[0], av[1]-1 // some ties
	a, b := FromInt64(dev, av), FromInt64(dev, bv)
	defer releaseAll(a, b)
	read := func(x *Tensor) []int64 {
		t.Helper()
		defer x.Release()
		require.Equal(t, Int64, x.DType())
		v, err := x.Int64s()
		require.NoError(t, err)
		return v
	}
	mask := func(x *Tensor) []int32 {
		t.Helper()
		defer x.Release()
		v, err := x.Int32s()
		require.NoError(t, err)
		return v
	}
	elementwise := func(f func(x, y int64) int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = f(av[i], bv[i])
		}
		return out
	}
	test := func(f func(x, y int64) bool) []int32 {
		out := make([]int32, n)
		for i := range out {
			if f(av[i], bv[i]) {
				out[i] = 1
			}
		}
		return out
	}
	assert.Equal(t, elementwise(func(x, y int64) int64 { return x + y }), read(a.Add(b)))
	assert.Equal(t, elementwise(func(x, y int64) int64 { return x - y }), read(a.Sub(b)))
	assert.Equal(t, elementwise(func(x, y int64) int64 { return x * y }), read(a.Mul(b)))
	assert.Equal(t, elementwise(func(x, _ int64) int64 { return -x }), read(a.Neg()))
	assert.Equal(t, elementwise(func(x, _ int64) int64 { return max(x, -x) }), read(a.Abs()))
	assert.Equal(t, elementwise(func(x, y int64) int64 { return max(x, y) }), read(a.Maximum(b)))
	assert.Equal(t, test(func(x, y int64) bool { return x == y }), mask(a.Eq(b)))
	assert.Equal(t, test(func(x, y int64) bool { return x < y }), mask(a.Lt(b)))
	assert.Equal(t, test(func(x, y int64) bool { return x >= y }), mask(a.Ge(b)))

	// Where with the Int32 mask a comparison gives.
	lt := a.Lt(b)
	defer lt.Release()
	assert.Equal(t, elementwise(func(x, y int64) int64 { return min(x, y) }), read(Where(lt, a, b)))

	// Reductions, exact in int64 over the whole range (sums wrap).
	small := randomInt64s(rng, 4*13, math.MaxInt64/4)
	s := FromInt64(dev, small, 4, 13)
	defer s.Release()
	sums, maxes := make([]int64, 4), make([]int64, 4)
	argmax := make([]int32, 4)
	for r := range 4 {
		row := small[r*13 : (r+1)*13]
		maxes[r] = row[0]
		for j, v := range row {
			sums[r] += v
			if v > maxes[r] {
				maxes[r], argmax[r] = v, int32(j)
			}
		}
	}
	assert.Equal(t, sums, read(s.Sum([]int{1}, false)))
	st := s.Transpose(0, 1) // strided: the same sums down its columns
	defer st.Release()
	assert.Equal(t, sums, read(st.Sum([]int{0}, false)))
	assert.Equal(t, maxes, read(s.Max([]int{1}, false)))
	assert.Equal(t, argmax, mask(s.ArgMax([]int{1}, false)))

	// Int64 indices select what Int32 indices select.
	table := FromFloat32(dev, randomFloat32s(rng, 7*3), 7, 3)
	ids64 := FromInt64(dev, []int64{6, 0, 3, 3})
	ids32 := FromInt32(dev, []int32{6, 0, 3, 3})
	defer releaseAll(table, ids64, ids32)
	want := read64(t, table.IndexSelect(0, ids32))
	assert.Equal(t, want, read64(t, table.IndexSelect(0, ids64)))

	// Casts between the integers are exact (saturating to int32), and
	// Int64 → Float64 is exact below 2⁵³.
	ints := FromInt64(dev, []int64{1 << 40, -(1 << 40), 5, math.MaxInt64, -(1 << 53)})
	defer ints.Release()
	i32 := ints.Cast(Int32)
	f64 := ints.Cast(Float64)
	defer releaseAll(i32, f64)
	got32, err := i32.Int32s()
	require.NoError(t, err)
	assert.Equal(t, []int32{math.MaxInt32, math.MinInt32, 5, math.MaxInt32, math.MinInt32}, got32)
	assert.Equal(t, []float64{1 << 40, -(1 << 40), 5, 0x1p63, -(1 << 53)}, read64(t, f64))
	narrow := FromInt32(dev, []int32{math.MinInt32, 7})
	defer narrow.Release()
	assert.Equal(t, []int64{math.MinInt32, 7}, read(narrow.Cast(Int64)))
}
