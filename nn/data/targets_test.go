package data

import (
	"strings"
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

func TestReadCSVTargets(t *testing.T) {
	in := "1,0.5,2,-3\n4,1.5,5,6.25\n7,2.5,8,9\n"
	d, err := ReadCSVTargets(strings.NewReader(in), []int{-1, 1}, nil)
	require.NoError(t, err)
	require.Equal(t, 3, d.Len())
	require.Equal(t, []int{2}, d.Shape)
	require.Equal(t, []float32{1, 2, 4, 5, 7, 8}, d.X)
	require.Equal(t, []int{2}, d.TargetShape)
	require.Equal(t, []float32{-3, 0.5, 6.25, 1.5, 9, 2.5}, d.Targets, "targets in the order the columns were given")
	require.Nil(t, d.Y)

	for name, tc := range map[string]struct {
		in   string
		cols []int
		want string
	}{
		"no columns":   {in, nil, "no target columns"},
		"out of range": {in, []int{4}, "out of range"},
		"twice":        {in, []int{3, -1}, "given twice"},
		"not a number": {"1,2\nx,3\n", []int{1}, "line 2, column 1"},
		"ragged":       {"1,2\n1,2,3\n", []int{1}, "wrong number of fields"},
		"empty":        {"", []int{0}, "no rows"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadCSVTargets(strings.NewReader(tc.in), tc.cols, nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err = ReadCSVTargets(strings.NewReader(in), []int{0}, []int{2, 2})
	require.ErrorContains(t, err, "sample shape [2 2] has 4 elements, the rows have 3 features")
}

// FuzzReadCSVTargets reads arbitrary text: an error or a consistent
// dataset, never a panic.
func FuzzReadCSVTargets(f *testing.F) {
	f.Add("1,0.5,2,-3\n4,1.5,5,6.25\n", int8(-1))
	f.Add("1,2\n", int8(0))
	f.Add("\"a\n", int8(3))
	f.Fuzz(func(t *testing.T, in string, col int8) {
		d, err := ReadCSVTargets(strings.NewReader(in), []int{int(col)}, nil)
		if err != nil {
			return
		}
		require.Equal(t, len(d.Targets), d.Len())
		require.Equal(t, len(d.X), d.Len()*d.Shape[0])
		x, y := d.Batch(cpuDevice(t), []int{d.Len() - 1})
		x.Release()
		y.Release()
	})
}
