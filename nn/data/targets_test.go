package data

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// regressionDataset has 7 samples of shape [3] with targets of shape [2]:
// sample i holds 10·i + j and its target is (i + 0.5, −i).
func regressionDataset() *Dataset {
	d := &Dataset{Shape: []int{3}, TargetShape: []int{2}}
	for i := range 7 {
		for j := range 3 {
			d.X = append(d.X, float32(10*i+j))
		}
		d.Targets = append(d.Targets, float32(i)+0.5, -float32(i))
	}
	return d
}

func TestBatchTargets(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		d := regressionDataset()
		require.Equal(t, 7, d.Len())
		require.True(t, d.HasTargets())
		x, y := d.Batch(dev, []int{6, 2, 3})
		defer x.Release()
		defer y.Release()
		require.Equal(t, []int{3, 3}, x.Shape())
		require.Equal(t, []int{3, 2}, y.Shape())
		require.Equal(t, tensor.Float32, y.DType())
		ys, err := y.Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{6.5, -6, 2.5, -2, 3.5, -3}, ys)

		// One number per sample: a nil TargetShape gives y of shape [n].
		scalar := &Dataset{X: []float32{1, 2, 3}, Targets: []float32{0.25, -1, 4}, Shape: []int{1}}
		xs, ys1 := scalar.Batch(dev, []int{2, 0})
		defer xs.Release()
		defer ys1.Release()
		require.Equal(t, []int{2}, ys1.Shape())
		v, err := ys1.Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{4, 0.25}, v)
	})
}

func TestSplitTargets(t *testing.T) {
	d := regressionDataset()
	train, test := d.Split(0.3, 5)
	require.Equal(t, 5, train.Len())
	require.Equal(t, 2, test.Len())
	for _, part := range []*Dataset{train, test} {
		require.Nil(t, part.Y)
		require.Equal(t, []int{2}, part.TargetShape)
		for k := range part.Len() {
			// The sample's first feature is 10·i, which names its target.
			i := part.X[3*k] / 10
			require.Equal(t, []float32{i + 0.5, -i}, part.Targets[2*k:2*k+2])
		}
	}
}

func TestTargetsMisuse(t *testing.T) {
	dev := cpuDevice(t)
	both := &Dataset{X: []float32{1}, Y: []int32{0}, Targets: []float32{1}, Shape: []int{1}}
	require.ErrorContains(t, tensor.Catch(func() { both.Batch(dev, []int{0}) }), "one kind")
	ragged := &Dataset{X: []float32{1, 2}, Targets: []float32{1, 2, 3}, TargetShape: []int{2}, Shape: []int{1}}
	require.ErrorContains(t, tensor.Catch(func() { ragged.Batch(dev, []int{0}) }), "not a multiple")
	short := &Dataset{X: []float32{1, 2, 3}, Targets: []float32{1, 2}, Shape: []int{1}}
	require.ErrorContains(t, tensor.Catch(func() { short.Split(0.5, 1) }), "len(X) = 3")
}
