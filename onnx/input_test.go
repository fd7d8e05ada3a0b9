package onnx

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// RandomInput sets every open dimension to the batch, draws integer
// inputs in [0, intMax) and float inputs from N(0, 1).
func TestRandomInput(t *testing.T) {
	dev := testdevice.CPU(t)
	r := rand.New(rand.NewPCG(3, 4))

	ids := ValueInfo{Name: "ids", ElemType: "INT64", Shape: []int{-1, 7}}.RandomInput(dev, 5, r, 11)
	defer ids.Release()
	require.Equal(t, []int{5, 7}, ids.Shape())
	require.Equal(t, tensor.Int32, ids.DType())
	v, err := ids.Int32s()
	require.NoError(t, err)
	seen := map[int32]bool{}
	for _, x := range v {
		require.True(t, x >= 0 && x < 11, "id %d outside [0, 11)", x)
		seen[x] = true
	}
	require.Greater(t, len(seen), 5, "ids are drawn, not constant")

	x := ValueInfo{Name: "x", ElemType: "FLOAT", Shape: []int{-1, 3, -1}}.RandomInput(dev, 2, r, 0)
	defer x.Release()
	require.Equal(t, []int{2, 3, 2}, x.Shape())
	f, err := x.Float32s()
	require.NoError(t, err)
	mean := 0.0
	for _, y := range f {
		mean += float64(y) / float64(len(f))
	}
	require.NotZero(t, mean)

	fixed := ValueInfo{Name: "c", ElemType: "DOUBLE", Shape: []int{4}}.RandomInput(dev, 9, r, 0)
	defer fixed.Release()
	require.Equal(t, []int{4}, fixed.Shape(), "a fixed dimension stays")
	require.Equal(t, tensor.Float32, fixed.DType())
}
