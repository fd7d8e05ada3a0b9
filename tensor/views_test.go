package tensor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostView reads a row-major host array through shape/strides/offset, the
// reference for what a view must contain.
func hostView(values []float64, shape, strides []int, offset int) []float64 {
	out := make([]float64, product(shape))
	for i := range out {
		at, rest := offset, i
		for d := len(shape) - 1; d >= 0; d-- {
			at += (rest % shape[d]) * strides[d]
			rest /= shape[d]
		}
		out[i] = values[at]
	}
	return out
}

func TestViews(t *testing.T) { forEachDevice(t, testViews) }

func testViews(t *testing.T, dev *Device) {
	values := randomValues(newRand(t), Float32, 2*3*4, -8, 8)
	x := upload(dev, Float32, values, 2, 3, 4)
	defer x.Release()

	for _, tc := range []struct {
		name    string
		view    func() *Tensor
		shape   []int
		strides []int
		offset  int
	}{
		{"Reshape", func() *Tensor { return x.Reshape(6, -1) }, []int{6, 4}, []int{4, 1}, 0},
		{"Reshape scalar-like", func() *Tensor { return x.Reshape(1, 24, 1) }, []int{1, 24, 1}, []int{24, 1, 1}, 0},
		{"Flatten", func() *Tensor { return x.Flatten(1, -1) }, []int{2, 12}, []int{12, 1}, 0},
		{"Flatten all", func() *Tensor { return x.Flatten(0, -1) }, []int{24}, []int{1}, 0},
		{"Unsqueeze front", func() *Tensor { return x.Unsqueeze(0) }, []int{1, 2, 3, 4}, []int{24, 12, 4, 1}, 0},
		{"Unsqueeze end", func() *Tensor { return x.Unsqueeze(-1) }, []int{2, 3, 4, 1}, []int{12, 4, 1, 1}, 0},
		{"Transpose", func() *Tensor { return x.Transpose(0, 2) }, []int{4, 3, 2}, []int{1, 4, 12}, 0},
		{"Permute", func() *Tensor { return x.Permute(1, -1, 0) }, []int{3, 4, 2}, []int{4, 1, 12}, 0},
		{"Slice", func() *Tensor { return x.Slice(2, 1, 4, 2) }, []int{2, 3, 2}, []int{12, 4, 2}, 1},
		{"Slice negative", func() *Tensor { return x.Slice(-2, -2, 100, 1) }, []int{2, 2, 4}, []int{12, 4, 1}, 4},
		{"Slice clamped empty", func() *Tensor { return x.Slice(1, 5, 9, 1) }, []int{2, 0, 4}, []int{12, 4, 1}, 0},
		{"Slice reversed bounds", func() *Tensor { return x.Slice(1, 2, 1, 1) }, []int{2, 0, 4}, []int{12, 4, 1}, 0},
		{"Slice step past end", func() *Tensor { return x.Slice(0, -100, 100, 5) }, []int{1, 3, 4}, []int{60, 4, 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.view()
			defer v.Release()
			assert.Same(t, x.st, v.st, "a view shares its input's buffer")
			assert.Equal(t, tc.shape, v.Shape())
			assert.Equal(t, tc.strides, v.Strides())
			assert.Equal(t, hostView(values, tc.shape, tc.strides, tc.offset), read64(t, v))
		})
	}

	// Views of views, and ops on them, read the right elements.
	tr := x.Transpose(0, 1)
	s := tr.Slice(2, 0, 4, 3)
	e := s.Unsqueeze(0).Expand(5, -1, -1, -1)
	sum := e.Sum([]int{0}, false)
	defer releaseAll(tr, s, e, sum)
	assert.Equal(t, []int{5, 3, 2, 2}, e.Shape())
	assert.Equal(t, 0, e.Strides()[0])
	want := hostView(values, []int{3, 2, 2}, []int{4, 12, 3}, 0)
	for i := range want {
		want[i] *= 5
	}
	checkClose(t, want, read64(t, sum), familyTol(Float32, familyExact, want))
}

func TestReshapeCopiesWhenItMust(t *testing.T) { forEachDevice(t, testReshapeCopiesWhenItMust) }

func testReshapeCopiesWhenItMust(t *testing.T, dev *Device) {
	values := randomValues(newRand(t), Float32, 12, -8, 8)
	x := upload(dev, Float32, values, 3, 4)
	tr := x.T()
	flat := tr.Reshape(-1)        // a transpose cannot be flattened in place
	split := tr.Reshape(2, 2, 3)  // splitting the (non-contiguous) leading axis is a view
	merged := split.Reshape(4, 3) // and merging it back too
	defer releaseAll(x, tr, flat, split, merged)

	assert.NotSame(t, x.st, flat.st)
	assert.Equal(t, transpose2(values, 3, 4), read64(t, flat))
	assert.Same(t, x.st, split.st)
	assert.Equal(t, []int{2, 1, 4}, split.Strides())
	assert.Same(t, x.st, merged.st)
	assert.Equal(t, transpose2(values, 3, 4), read64(t, merged))

	// A stride-0 (expanded) tensor reshapes without copying where the
	// broadcast axis stays whole.
	row := upload(dev, Float32, values[:4], 1, 4)
	wide := row.Expand(3, 4)
	stacked := wide.Reshape(3, 2, 2)
	defer releaseAll(row, wide, stacked)
	assert.Same(t, row.st, stacked.st)
	assert.Equal(t, []int{0, 2, 1}, stacked.Strides())
}

func TestSqueezeUnsqueezeExpand(t *testing.T) { forEachDevice(t, testSqueezeUnsqueezeExpand) }

func testSqueezeUnsqueezeExpand(t *testing.T, dev *Device) {
	x := Zeros(dev, 1, 3, 1, 2)
	all, one, kept, neg := x.Squeeze(), x.Squeeze(0), x.Squeeze(1), x.Squeeze(-2, 0)
	defer releaseAll(x, all, one, kept, neg)
	assert.Equal(t, []int{3, 2}, all.Shape())
	assert.Equal(t, []int{3, 1, 2}, one.Shape())
	assert.Equal(t, []int{1, 3, 1, 2}, kept.Shape(), "a non-1 dim is left alone, as torch")
	assert.Equal(t, []int{3, 2}, neg.Shape())

	s := Zeros(dev)
	u := s.Unsqueeze(0)
	back := u.Squeeze()
	b := s.BroadcastTo(2, 3)
	defer releaseAll(s, u, back, b)
	assert.Equal(t, []int{1}, u.Shape())
	assert.Equal(t, []int{}, back.Shape())
	assert.Equal(t, []int{0, 0}, b.Strides())

	col := FromFloat32(dev, []float32{1, 2, 3}, 3, 1)
	e := col.Expand(2, 3, 4)
	z := col.Expand(3, 0)
	defer releaseAll(col, e, z)
	assert.Equal(t, []int{0, 1, 0}, e.Strides())
	got := read(t, e)
	require.Len(t, got, 24)
	assert.Equal(t, []float32{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, got[12:])
	assert.Equal(t, []int{3, 0}, z.Shape())
	assert.Empty(t, read(t, z))
}

func TestSplitChunk(t *testing.T) { forEachDevice(t, testSplitChunk) }

func testSplitChunk(t *testing.T, dev *Device) {
	values := randomValues(newRand(t), Float32, 7*2, -8, 8)
	x := upload(dev, Float32, values, 7, 2)
	defer x.Release()
	for _, tc := range []struct {
		name  string
		parts func() []*Tensor
		sizes []int
	}{
		{"Split 3", func() []*Tensor { return x.Split(0, 3) }, []int{3, 3, 1}},
		{"Split 7", func() []*Tensor { return x.Split(0, 7) }, []int{7}},
		{"Split 100", func() []*Tensor { return x.Split(-2, 100) }, []int{7}},
		{"Chunk 3", func() []*Tensor { return x.Chunk(0, 3) }, []int{3, 3, 1}},
		{"Chunk 4", func() []*Tensor { return x.Chunk(0, 4) }, []int{2, 2, 2, 1}},
		{"Chunk 6", func() []*Tensor { return x.Chunk(0, 6) }, []int{2, 2, 2, 1}},
		{"Chunk 10", func() []*Tensor { return x.Chunk(0, 10) }, []int{1, 1, 1, 1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := tc.parts()
			defer releaseAll(parts...)
			require.Len(t, parts, len(tc.sizes))
			at := 0
			for i, p := range parts {
				assert.Equal(t, []int{tc.sizes[i], 2}, p.Shape())
				assert.Same(t, x.st, p.st)
				assert.Equal(t, values[at*2:(at+tc.sizes[i])*2], read64(t, p))
				at += tc.sizes[i]
			}
		})
	}
	halves := x.Chunk(1, 2)
	defer releaseAll(halves...)
	assert.Equal(t, hostView(values, []int{7, 1}, []int{2, 1}, 1), read64(t, halves[1]))
}

// The buffer goes back to the device only when its last view is released.
func TestViewsShareRefcountedStorage(t *testing.T) {
	dev, _ := newFaultyDevice()
	live := func() int64 { return dev.Stats().LiveBytes }
	x := FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	size := live() // 24 bytes rounded up to the backend's size class
	require.GreaterOrEqual(t, size, int64(24))
	v := x.T()
	w := v.Slice(0, 1, 3, 1)
	assert.Equal(t, size, live(), "views allocate nothing")
	x.Release()
	assert.Equal(t, size, live())
	assert.Equal(t, []float32{2, 5, 3, 6}, read(t, w)) // reading packs into a temporary, freed again
	v.Release()
	v.Release() // idempotent: one reference only
	assert.Equal(t, size, live())
	assert.Equal(t, []float32{2, 5, 3, 6}, read(t, w))
	w.Release()
	assert.Equal(t, int64(0), live())
}

func TestViewErrors(t *testing.T) {
	dev := openCPU(t)
	x := Zeros(dev, 2, 3)
	defer x.Release()
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { x.Reshape(4, 2) }, "tensor: Reshape: shape [4 2] is invalid for [2 3] (6 elements)"},
		{func() { x.Reshape(-1, -1) }, "tensor: Reshape: invalid shape [-1 -1]: at most one −1, no other negative dimension"},
		{func() { x.Reshape(4, -1) }, "tensor: Reshape: shape [4 -1] is invalid for [2 3] (6 elements)"},
		{func() { x.Reshape(1, 1, 1, 1, 1, 1, 1, 2, 3) }, "tensor: Reshape: shape [1 1 1 1 1 1 1 2 3] has rank 9, more than the maximum 8"},
		{func() { x.Flatten(1, 0) }, "tensor: Flatten: start dim 1 comes after end dim 0"},
		{func() { x.Squeeze(2) }, "tensor: Squeeze: dim 2 is out of range for rank 2 (want -2 … 1)"},
		{func() { x.Unsqueeze(3) }, "tensor: Unsqueeze: dim 3 is out of range for rank 2 (want -3 … 2)"},
		{func() { x.Expand(3) }, "tensor: Expand: shape [3] has fewer axes than the tensor's [2 3]"},
		{func() { x.Expand(4, 3) }, "tensor: Expand: cannot expand [2 3] to [4 3]: axis 0 has size 2, not 1"},
		{func() { x.Expand(-1, 2, 3) }, "tensor: Expand: −1 in new leading axis 0 of [-1 2 3]"},
		{func() { x.Slice(0, 0, 1, 0) }, "tensor: Slice: step 0 must be ≥ 1"},
		{func() { x.Slice(-3, 0, 1, 1) }, "tensor: Slice: dim -3 is out of range for rank 2 (want -2 … 1)"},
		{func() { x.Split(0, 0) }, "tensor: Split: split size 0 must be ≥ 1"},
		{func() { x.Chunk(1, 0) }, "tensor: Chunk: chunk count 0 must be ≥ 1"},
		{func() { Zeros(dev, 1, 1, 1, 1, 1, 1, 1, 1).Unsqueeze(0) }, "tensor: Unsqueeze: shape [1 1 1 1 1 1 1 1 1] has rank 9, more than the maximum 8"},
	} {
		t.Run(fmt.Sprint(tc.want), func(t *testing.T) {
			assert.Equal(t, tc.want, panicMessage(t, tc.f))
		})
	}
}
