package cpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

func TestGather(t *testing.T) {
	h := newHarness(t)
	for _, dt := range hal.DTypes {
		// src [3, 4] read transposed from a [4, 3] store; gather along
		// axis 1 with index [2, 3] (fewer rows than src, as torch allows).
		src := h.transposed(dt, []float64{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}, 3, 4)
		// The index dtype alternates: Int64 indices are taken as well.
		it := []hal.DType{hal.Int32, hal.Int64}[int(dt)%2]
		index := h.view(it, []float64{3, 0, 0, 1, 2, 1}, 2, 3)
		dst := h.zeros(dt, 2, 3)
		require.NoError(t, h.dev.Gather(dst, src, index, 1))
		assert.Equal(t, []float64{3, 0, 0, 11, 12, 11}, h.read(dst), "%v", dt)

		index = h.view(it, []float64{1, 0, 2, 0}, 1, 4)
		dst = h.zeros(dt, 1, 4)
		require.NoError(t, h.dev.Gather(dst, src, index, 0))
		assert.Equal(t, []float64{10, 1, 22, 3}, h.read(dst), "%v axis 0", dt)
	}
}

func TestGatherOutOfRange(t *testing.T) {
	h := newHarness(t)
	src := h.view(hal.Float32, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	index := h.view(hal.Int32, []float64{0, 5, 2, -1, 1, 7}, 2, 3)
	dst := h.view(hal.Float32, []float64{9, 9, 9, 9, 9, 9}, 2, 3)
	err := h.dev.Gather(dst, src, index, 1)
	assert.ErrorIs(t, err, hal.ErrIndexOutOfRange)
	assert.EqualError(t, err, "cpu: gather: index 5 is out of range for axis 1 of size 3: index out of range")
	assert.Equal(t, []float64{1, 0, 3, 0, 5, 0}, h.read(dst), "bad indices give 0, the rest completes")
}

func TestScatterAdd(t *testing.T) {
	h := newHarness(t)
	for _, dt := range hal.DTypes {
		dst := h.view(dt, []float64{1, 1, 1, 1, 1, 1, 1, 1}, 2, 4)
		it := []hal.DType{hal.Int32, hal.Int64}[int(dt)%2]
		index := h.view(it, []float64{0, 3, 0, 1, 1, 1}, 2, 3)
		src := h.transposed(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
		require.NoError(t, h.dev.ScatterAdd(dst, index, src, 1))
		assert.Equal(t, []float64{5, 1, 1, 3, 1, 16, 1, 1}, h.read(dst), "%v", dt)

		// Along axis 0 with a smaller index.
		dst = h.zeros(dt, 3, 2)
		index = h.view(it, []float64{2, 0}, 1, 2)
		src = h.view(dt, []float64{7, 8}, 1, 2)
		require.NoError(t, h.dev.ScatterAdd(dst, index, src, 0))
		assert.Equal(t, []float64{0, 8, 0, 0, 7, 0}, h.read(dst), "%v axis 0", dt)
	}
	dst := h.zeros(hal.Float32, 2, 2)
	err := h.dev.ScatterAdd(dst, h.view(hal.Int32, []float64{1, -3}, 1, 2), h.view(hal.Float32, []float64{5, 6}, 1, 2), 1)
	assert.EqualError(t, err, "cpu: scatter_add: index -3 is out of range for axis 1 of size 2: index out of range")
	assert.Equal(t, []float64{0, 5, 0, 0}, h.read(dst))

	err = h.dev.ScatterAdd(dst, h.view(hal.Int32, []float64{0, 0, 0}, 1, 3), h.view(hal.Float32, []float64{5, 6, 7}, 1, 3), 0)
	assert.ErrorIs(t, err, hal.ErrInvalid)
}

// TestScatterAddParallelBlocks scatters enough elements for the kernel to
// split the index into blocks by the coordinates before axis, with
// repeated indices inside each block, and expects a float64 serial
// reference bit for bit (the adds inside a block keep their order).
func TestScatterAddParallelBlocks(t *testing.T) {
	h := newHarness(t)
	r := newRand()
	for _, c := range []struct {
		axis     int
		idx, dst []int
	}{
		{2, []int{7, 33, 301}, []int{7, 33, 3}},     // max pooling's backward: the last axis
		{1, []int{7, 33, 301}, []int{7, 40, 301}},   // a middle axis
		{0, []int{33, 7, 301}, []int{5, 7, 301}},    // axis 0: one block
		{2, []int{1, 1, 70001}, []int{1, 1, 1}},     // one block, all adds into one element
		{1, []int{3, 1, 40000}, []int{3, 2, 40000}}, // three long blocks
	} {
		n, m := c.idx[0]*c.idx[1]*c.idx[2], c.dst[0]*c.dst[1]*c.dst[2]
		size := c.dst[c.axis]
		ix, src, want := make([]float64, n), make([]float64, n), make([]float64, m)
		for i := range ix {
			ix[i], src[i] = float64(r.IntN(size)), r.NormFloat64()
		}
		for i := range want {
			want[i] = r.NormFloat64()
		}
		dstInit := append([]float64(nil), want...)
		// The serial reference, in row-major order of index.
		for i := range n {
			co := [3]int{i / (c.idx[1] * c.idx[2]), i / c.idx[2] % c.idx[1], i % c.idx[2]}
			co[c.axis] = int(ix[i])
			want[(co[0]*c.dst[1]+co[1])*c.dst[2]+co[2]] += src[i]
		}
		dst := h.view(hal.Float64, dstInit, c.dst...)
		require.NoError(t, h.dev.ScatterAdd(dst, h.view(hal.Int32, ix, c.idx...), h.view(hal.Float64, src, c.idx...), c.axis))
		assert.Equal(t, want, h.read(dst), "axis %d, index %v", c.axis, c.idx)
	}

	// The first bad index in row-major order is reported, whichever
	// block meets its own first.
	ix := make([]float64, 7*5000)
	ix[6*5000+3], ix[1*5000+4999], ix[4*5000] = 9, -2, 8
	dst := h.zeros(hal.Float32, 7, 2)
	err := h.dev.ScatterAdd(dst, h.view(hal.Int32, ix, 7, 5000), h.view(hal.Float32, make([]float64, 7*5000), 7, 5000), 1)
	assert.EqualError(t, err, "cpu: scatter_add: index -2 is out of range for axis 1 of size 2: index out of range")
}

// TestScatterAddRows scatters contiguous runs along the last axis (the
// row path, as max pooling's gradient) with Int32 and Int64 indices into
// float32 rows, repeated indices included, against a serial float32
// reference bit for bit, and the same values through a transposed source
// (the strided path) alike; an out-of-range index is skipped and the first
// one reported.
func TestScatterAddRows(t *testing.T) {
	h := newHarness(t)
	r := newRand()
	const rows, runs, width = 5, 37, 11 // index [rows, runs], dst [rows, width]
	for _, it := range []hal.DType{hal.Int32, hal.Int64} {
		ix, src := make([]float64, rows*runs), make([]float64, rows*runs)
		for i := range ix {
			ix[i], src[i] = float64(r.IntN(width)), float64(float32(r.NormFloat64()))
		}
		init := randn(r, rows*width)
		want := make([]float32, rows*width)
		for i, v := range init {
			want[i] = float32(v)
			init[i] = float64(want[i])
		}
		for i := range ix {
			want[i/runs*width+int(ix[i])] += float32(src[i])
		}
		wantF := make([]float64, len(want))
		for i, v := range want {
			wantF[i] = float64(v)
		}
		row := h.view(hal.Float32, init, rows, width)
		require.NoError(t, h.dev.ScatterAdd(row, h.view(it, ix, rows, runs), h.view(hal.Float32, src, rows, runs), 1))
		assert.Equal(t, wantF, h.read(row), "%v rows", it)

		strided := h.view(hal.Float32, init, rows, width)
		// src[i, j] at j*rows + i: the same values, not contiguous along the run.
		tsrc := h.transposed(hal.Float32, src, rows, runs)
		require.NoError(t, h.dev.ScatterAdd(strided, h.view(it, ix, rows, runs), tsrc, 1))
		assert.Equal(t, wantF, h.read(strided), "%v strided", it)

		bad := append([]float64(nil), ix...)
		bad[2*runs+5], bad[3*runs] = width, -1
		dst := h.zeros(hal.Float32, rows, width)
		err := h.dev.ScatterAdd(dst, h.view(it, bad, rows, runs), h.view(hal.Float32, src, rows, runs), 1)
		require.ErrorIs(t, err, hal.ErrIndexOutOfRange, "%v", it)
		assert.Contains(t, err.Error(), fmt.Sprintf("index %d is out of range", width))
		got := h.read(dst)
		exp := make([]float32, rows*width)
		for i := range bad {
			if k := int(bad[i]); k >= 0 && k < width {
				exp[i/runs*width+k] += float32(src[i])
			}
		}
		for i := range exp {
			require.Equal(t, float64(exp[i]), got[i], "%v element %d after bad indices", it, i)
		}
	}
}
