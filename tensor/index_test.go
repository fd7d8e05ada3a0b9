package tensor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// coords and flat convert between row-major indices and coordinates.
func coords(shape []int, i int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		c[d] = i % shape[d]
		i /= shape[d]
	}
	return c
}

func flat(shape, c []int) int {
	i := 0
	for d := range shape {
		i = i*shape[d] + c[d]
	}
	return i
}

func randomIndices(t *testing.T, n, size int) []float64 {
	rng := newRand(t)
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(rng.IntN(size))
	}
	return out
}

func TestGather(t *testing.T) { forEachDevice(t, testGather) }

func testGather(t *testing.T, dev *Device) {
	forEachDType(t, dev, "Gather", probeUnary(dev, func(x *Tensor) *Tensor {
		i := FromInt32(dev, []int32{0})
		defer i.Release()
		return x.Gather(0, i)
	}), func(t *testing.T, dtype DType) {
		for _, tc := range []struct {
			shape, indexShape []int
			dim               int
		}{
			{[]int{7}, []int{1000}, 0}, {[]int{3, 5}, []int{3, 7}, 1}, {[]int{4, 3, 2}, []int{2, 3, 2}, 0},
			{[]int{4, 3, 2}, []int{1, 2, 5}, -1}, {[]int{1025}, []int{1}, 0}, {[]int{3, 4}, []int{0, 4}, 0},
		} {
			t.Run(fmt.Sprintf("%v/%v/%d", tc.shape, tc.indexShape, tc.dim), func(t *testing.T) {
				a := (tc.dim + len(tc.shape)) % len(tc.shape)
				values := randomValues(newRand(t), dtype, product(tc.shape), -8, 8)
				idx := randomIndices(t, product(tc.indexShape), tc.shape[a])
				x := uploadAs(dev, dtype, values, tc.shape, transposed)
				index := uploadAs(dev, Int32, idx, tc.indexShape, strided)
				got := x.Gather(tc.dim, index)
				defer releaseAll(x, index, got)
				want := make([]float64, len(idx))
				for i := range want {
					c := coords(tc.indexShape, i)
					c[a] = int(idx[i])
					want[i] = values[flat(tc.shape, c)]
				}
				assert.Equal(t, tc.indexShape, got.Shape())
				assert.Equal(t, want, read64(t, got))
			})
		}
	})
}

func TestIndexSelect(t *testing.T) { forEachDevice(t, testIndexSelect) }

func testIndexSelect(t *testing.T, dev *Device) {
	forEachDType(t, dev, "IndexSelect", probeUnary(dev, func(x *Tensor) *Tensor {
		i := FromInt32(dev, []int32{0})
		defer i.Release()
		return x.IndexSelect(0, i)
	}), func(t *testing.T, dtype DType) {
		// An embedding lookup: rows of a [vocab, dim] table.
		vocab, dim := 50, 7
		table := randomValues(newRand(t), dtype, vocab*dim, -8, 8)
		ids := randomIndices(t, 1025, vocab)
		x := upload(dev, dtype, table, vocab, dim)
		index := upload(dev, Int32, ids)
		colIDs := []float64{6, 0, 6}
		colIndex := uploadAs(dev, Int32, colIDs, []int{3}, strided)
		rows := x.IndexSelect(0, index)
		cols := x.IndexSelect(-1, colIndex)
		defer releaseAll(x, index, colIndex, rows, cols)
		require.Equal(t, []int{1025, dim}, rows.Shape())
		got := read64(t, rows)
		for i, id := range ids {
			require.Equal(t, table[int(id)*dim:int(id+1)*dim], got[i*dim:(i+1)*dim], "row %d", i)
		}
		assert.Equal(t, []int{vocab, 3}, cols.Shape())
		gotCols := read64(t, cols)
		for r := range vocab {
			for j := range 3 {
				require.Equal(t, table[r*dim+int(colIDs[j])], gotCols[r*3+j])
			}
		}
	})
}

func TestScatterAdd(t *testing.T) { forEachDevice(t, testScatterAdd) }

func testScatterAdd(t *testing.T, dev *Device) {
	forEachDType(t, dev, "ScatterAdd", probeUnary(dev, func(x *Tensor) *Tensor {
		i := FromInt32(dev, []int32{0})
		defer i.Release()
		return x.ScatterAdd(0, i, x)
	}), func(t *testing.T, dtype DType) {
		for _, tc := range []struct {
			shape, indexShape, srcShape []int
			dim                         int
		}{
			{[]int{7}, []int{1000}, []int{1000}, 0}, {[]int{3, 5}, []int{3, 7}, []int{4, 8}, 1},
			{[]int{4, 3, 2}, []int{2, 3, 2}, []int{2, 3, 2}, 0}, {[]int{5, 2}, []int{0, 2}, []int{1, 2}, 0},
		} {
			t.Run(fmt.Sprintf("%v/%v/%d", tc.shape, tc.indexShape, tc.dim), func(t *testing.T) {
				a := (tc.dim + len(tc.shape)) % len(tc.shape)
				rng := newRand(t)
				base := randomValues(rng, dtype, product(tc.shape), -8, 8)
				src := randomValues(rng, dtype, product(tc.srcShape), -8, 8)
				idx := randomIndices(t, product(tc.indexShape), tc.shape[a])
				x := upload(dev, dtype, base, tc.shape...)
				index := upload(dev, Int32, idx, tc.indexShape...)
				s := uploadAs(dev, dtype, src, tc.srcShape, transposed)
				got := x.ScatterAdd(tc.dim, index, s)
				defer releaseAll(x, index, s, got)
				want := slices.Clone(base)
				magnitude := make([]float64, len(want))
				for i := range want {
					magnitude[i] = abs(want[i])
				}
				for i := range idx {
					c := coords(tc.indexShape, i)
					v := src[flat(tc.srcShape, c)]
					c[a] = int(idx[i])
					want[flat(tc.shape, c)] += v
					magnitude[flat(tc.shape, c)] += abs(v)
				}
				assert.Equal(t, tc.shape, got.Shape())
				n := len(idx)/max(1, tc.shape[a]) + 1
				checkClose(t, want, read64(t, got), func(i int) float64 { return sumTol(dtype, n, magnitude[i], want[i]) })
				assert.Equal(t, base, read64(t, x), "ScatterAdd returns a new tensor")
			})
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestOneHot(t *testing.T) { forEachDevice(t, testOneHot) }

func testOneHot(t *testing.T, dev *Device) {
	if !Supports(dev, "OneHot", Int32) {
		t.Skipf("%v lacks OneHot", dev)
	}
	idx := randomIndices(t, 2*7, 5)
	index := uploadAs(dev, Int32, idx, []int{2, 7}, transposed)
	got := OneHot(index, 5)
	defer releaseAll(index, got)
	assert.Equal(t, []int{2, 7, 5}, got.Shape())
	assert.Equal(t, Int32, got.DType())
	want := make([]float64, 2*7*5)
	for i, c := range idx {
		want[i*5+int(c)] = 1
	}
	assert.Equal(t, want, read64(t, got))
}

// An out-of-range index is not checked on the host: the kernel gives a
// defined result and the failure surfaces from the read (and Sync).
func TestIndexOutOfRange(t *testing.T) {
	forEachDevice(t, func(t *testing.T, parent *Device) {
		// A private device, so that the sticky failure stays in this test.
		dev := privateDevice(t, parent)
		if !Supports(dev, "Gather", Float32) || !Supports(dev, "ScatterAdd", Float32) || !Supports(dev, "OneHot", Int32) {
			t.Skipf("%v lacks indexing kernels", dev)
		}
		x := FromFloat32(dev, []float32{1, 2, 3})
		bad := FromInt32(dev, []int32{0, 3, -1})
		defer releaseAll(x, bad)
		for _, tc := range []struct {
			op string
			f  func() *Tensor
		}{
			{"Gather", func() *Tensor { return x.Gather(0, bad) }},
			{"IndexSelect", func() *Tensor { return x.IndexSelect(0, bad) }},
			{"ScatterAdd", func() *Tensor { return x.ScatterAdd(0, bad, x) }},
			{"OneHot", func() *Tensor { return OneHot(bad, 3) }},
		} {
			t.Run(tc.op, func(t *testing.T) {
				got := tc.f()
				defer got.Release()
				_, err := got.Float32s()
				require.ErrorIs(t, err, hal.ErrIndexOutOfRange)
				assert.Contains(t, err.Error(), "tensor: ")
				assert.Contains(t, err.Error(), "index 3", "the message names the bad index")
				assert.Contains(t, err.Error(), "size 3", "and the axis size")
			})
		}
		assert.NoError(t, dev.Sync(), "each fault was reported once, by its read")
	})
}

// privateDevice opens parent's adapter again as a separate Device, with its
// own sticky error.
func privateDevice(t *testing.T, parent *Device) *Device {
	t.Helper()
	backend, index, err := parseDeviceName(parent.Name())
	require.NoError(t, err)
	b, ok := hal.Lookup(backend)
	require.True(t, ok)
	hd, err := b.Open(index)
	require.NoError(t, err)
	t.Cleanup(func() { _ = hd.Close() })
	return newDevice(parent.Name()+"-private", hd)
}

func TestIndexErrors(t *testing.T) {
	dev := openCPU(t)
	x := Zeros(dev, 2, 3)
	fi := Zeros(dev, 2, 3)
	i23, i13, i2, i33 := Full(dev, Int32, 0, 2, 3), Full(dev, Int32, 0, 1, 3), Full(dev, Int32, 0, 2), Full(dev, Int32, 0, 3, 3)
	defer releaseAll(x, fi, i23, i13, i2, i33)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { x.Gather(0, fi) }, "tensor: Gather: index must be int32 or int64, got float32"},
		{func() { x.Gather(0, i2) }, "tensor: Gather: index [2] must have the rank of [2 3]"},
		{func() { x.Gather(2, i23) }, "tensor: Gather: dim 2 is out of range for rank 2 (want -2 … 1)"},
		{func() { x.Gather(0, Full(dev, Int32, 0, 1, 4)) }, "tensor: Gather: index [1 4] is larger than [2 3] on axis 1"},
		{func() { x.IndexSelect(0, i23) }, "tensor: IndexSelect: index must be 1-D, got [2 3]"},
		{func() { x.ScatterAdd(0, i23, i23) }, "tensor: ScatterAdd: dtype mismatch: float32 vs int32"},
		{func() { x.ScatterAdd(0, i33, x) }, "tensor: ScatterAdd: index [3 3] does not fit src [2 3] and [2 3] on axis 0"},
		{func() { OneHot(fi, 3) }, "tensor: OneHot: index must be int32 or int64, got float32"},
		{func() { OneHot(i2, -1) }, "tensor: OneHot: negative class count -1"},
	} {
		assert.Equal(t, tc.want, panicMessage(t, tc.f))
	}
}
