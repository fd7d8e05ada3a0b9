package data

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// The devices every test runs on (internal/testdevice).
var (
	ci            = testdevice.CI
	cpuDevice     = testdevice.CPU
	webgpuDevice  = testdevice.WebGPU
	forEachDevice = testdevice.ForEach
)

func flatten(batches [][]int) []int {
	var out []int
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

func sizes(batches [][]int) []int {
	var out []int
	for _, b := range batches {
		out = append(out, len(b))
	}
	return out
}

func TestBatchesInOrder(t *testing.T) {
	b := Batches(10, 4, false, 0, false)
	require.Equal(t, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}, b)
	require.Equal(t, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, Batches(10, 4, false, 0, true))
	require.Equal(t, [][]int{{0, 1}, {2, 3}}, Batches(4, 2, false, 0, true), "dropLast keeps a full last batch")
	require.Empty(t, Batches(0, 3, true, 1, false))
	require.Empty(t, Batches(2, 3, false, 0, true), "one short batch, dropped")
	require.Equal(t, [][]int{{0, 1}}, Batches(2, 3, false, 0, false))
}

func TestBatchesShuffle(t *testing.T) {
	const n = 1000
	a := Batches(n, 64, true, 7, false)
	require.Equal(t, []int{64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 40}, sizes(a))
	perm := flatten(a)
	require.NotEqual(t, identity(n), perm, "shuffled")
	sorted := slices.Clone(perm)
	slices.Sort(sorted)
	require.Equal(t, identity(n), sorted, "a permutation")

	require.Equal(t, a, Batches(n, 64, true, 7, false), "same seed, same order")
	require.NotEqual(t, perm, flatten(Batches(n, 64, true, 8, false)), "another seed, another order")

	dropped := Batches(n, 64, true, 7, true)
	require.Len(t, dropped, 15)
	require.Equal(t, perm[:15*64], flatten(dropped), "dropLast drops the tail of the same order")

	// The order is pinned: it must not change with the Go version.
	require.Equal(t, []int{4, 2, 0, 3, 1}, flatten(Batches(5, 5, true, 42, false)))
}

func TestBatchesUniform(t *testing.T) {
	// Each of 4 positions should receive each of 4 items about equally
	// often over many seeds; a biased shuffle (such as swapping with any
	// position instead of a lower one) fails this.
	const n, trials = 4, 8000
	var counts [n][n]int
	for seed := range uint64(trials) {
		for pos, item := range flatten(Batches(n, n, true, seed, false)) {
			counts[pos][item]++
		}
	}
	for pos := range counts {
		for item := range counts[pos] {
			require.InDelta(t, trials/n, counts[pos][item], 150, "position %d item %d", pos, item)
		}
	}
}

func TestBatchesMisuse(t *testing.T) {
	require.Error(t, tensor.Catch(func() { Batches(3, 0, false, 0, false) }))
	require.Error(t, tensor.Catch(func() { Batches(-1, 2, false, 0, false) }))
}

func testDataset() *Dataset {
	// 5 samples of shape [2, 3]; sample i holds 10·i + j.
	d := &Dataset{Shape: []int{2, 3}}
	for i := range 5 {
		for j := range 6 {
			d.X = append(d.X, float32(10*i+j))
		}
		d.Y = append(d.Y, int32(100+i))
	}
	return d
}

func TestBatch(t *testing.T) { forEachDevice(t, testBatch) }

func testBatch(t *testing.T, dev *tensor.Device) {
	d := testDataset()
	require.Equal(t, 5, d.Len())
	x, y := d.Batch(dev, []int{3, 0})
	defer x.Release()
	defer y.Release()
	require.Equal(t, []int{2, 2, 3}, x.Shape())
	require.Equal(t, tensor.Float32, x.DType())
	require.Equal(t, []int{2}, y.Shape())
	require.Equal(t, tensor.Int32, y.DType())
	xs, err := x.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{30, 31, 32, 33, 34, 35, 0, 1, 2, 3, 4, 5}, xs)
	ys, err := y.Int32s()
	require.NoError(t, err)
	require.Equal(t, []int32{103, 100}, ys)

	require.Error(t, tensor.Catch(func() { d.Batch(dev, []int{5}) }))
	require.Error(t, tensor.Catch(func() { d.Batch(dev, []int{-1}) }))
	bad := &Dataset{X: []float32{1, 2, 3}, Y: []int32{0, 1}, Shape: []int{2}}
	require.Error(t, tensor.Catch(func() { bad.Batch(dev, []int{0}) }), "len(X) disagrees with len(Y)·size")
}

func TestSplit(t *testing.T) {
	d := testDataset()
	train, test := d.Split(0.4, 3)
	require.Equal(t, 3, train.Len())
	require.Equal(t, 2, test.Len())
	require.Equal(t, []int{2, 3}, train.Shape)
	require.Equal(t, []int{2, 3}, test.Shape)

	// Every sample lands in exactly one half, with its features.
	var labels []int32
	for _, part := range []*Dataset{train, test} {
		for k, y := range part.Y {
			i := int(y - 100)
			require.Equal(t, d.X[6*i:6*i+6], part.X[6*k:6*k+6])
			labels = append(labels, y)
		}
	}
	slices.Sort(labels)
	require.Equal(t, d.Y, labels)

	train2, test2 := d.Split(0.4, 3)
	require.Equal(t, train, train2, "same seed, same split")
	require.Equal(t, test, test2)

	train.X[0] = -1
	require.Equal(t, float32(10*(train.Y[0]-100)), d.X[6*(train.Y[0]-100)], "copies, not views")

	all, none := d.Split(0, 1)
	require.Equal(t, 5, all.Len())
	require.Equal(t, 0, none.Len())
	require.Error(t, tensor.Catch(func() { d.Split(1.5, 0) }))
}

func TestSplitDiffersBySeed(t *testing.T) {
	d := &Dataset{Shape: []int{}}
	for i := range 100 {
		d.X = append(d.X, float32(i))
		d.Y = append(d.Y, int32(i))
	}
	_, a := d.Split(0.2, 1)
	_, b := d.Split(0.2, 2)
	require.Equal(t, 20, a.Len())
	require.NotEqual(t, a.Y, b.Y)
}
