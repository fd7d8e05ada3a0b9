package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// Conv3d initializes as PyTorch (uniform in ±1/√(Cin/groups·KD·KH·KW)),
// prints as torch.nn.Conv3d does, and refuses bad channels, kernels and
// inputs with errors naming the layer. Its values and gradients against
// PyTorch's are TestConv3dGolden's.
func TestConv3dLayer(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(3)
	c := NewConv3d(dev, 4, 6, [3]int{3, 2, 2}, tensor.Conv3dOptions{Stride: [3]int{2, 1, 2}, Padding: [3]int{1, 0, 1},
		Dilation: [3]int{1, 2, 1}, Groups: 2}, false, gen)
	defer Release(c)
	require.Equal(t, []int{6, 2, 3, 2, 2}, c.Weight.Shape())
	require.Nil(t, c.Bias)
	bound := 1 / math.Sqrt(2*3*2*2)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range read(t, c.Weight) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	require.True(t, lo >= -bound && hi <= bound && hi-lo > bound/2, "weight in [%v, %v], bound %v", lo, hi, bound)
	require.Equal(t, "Conv3d(4, 6, kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2, bias=False)", c.String())
	plain := NewConv3d(dev, 2, 3, [3]int{3, 3, 3}, tensor.Conv3dOptions{}, true, gen)
	defer Release(plain)
	require.Equal(t, "Conv3d(2, 3, kernel_size=(3, 3, 3), stride=(1, 1, 1))", plain.String())
	require.Equal(t, []string{"weight", "bias"}, names(plain.Parameters()))

	x := graph.Constant(tensor.Zeros(dev, 1, 4, 5, 6, 5))
	defer x.Release()
	y := c.Forward(x)
	defer y.Release()
	require.Equal(t, []int{1, 6, 3, 4, 3}, y.Shape())

	fails := func(f func(), words ...string) {
		t.Helper()
		err := tensor.Catch(f)
		var terr *tensor.Error
		require.ErrorAs(t, err, &terr)
		for _, w := range words {
			require.Contains(t, err.Error(), w)
		}
	}
	fails(func() { NewConv3d(dev, 3, 4, [3]int{3, 3, 3}, tensor.Conv3dOptions{Groups: 2}, true, gen) }, "NewConv3d", "groups")
	fails(func() { NewConv3d(dev, 3, 4, [3]int{0, 3, 3}, tensor.Conv3dOptions{}, true, gen) }, "NewConv3d", "kernel")
	bad := graph.Constant(tensor.Zeros(dev, 1, 3, 5, 6, 5))
	defer bad.Release()
	fails(func() { plain.Forward(bad).Release() }, "Conv3d", "[1 3 5 6 5]")
}
