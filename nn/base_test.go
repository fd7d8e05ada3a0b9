package nn_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// block is a custom module written as Base's documentation shows.
type block struct {
	nn.Base
	Conv  *nn.Conv2d
	Norm  *nn.BatchNorm
	Scale *graph.Value
	Fixed *graph.Value
}

func newBlock(dev *tensor.Device, gen *tensor.Generator) *block {
	b := &block{}
	b.Conv = nn.Add(b, "conv", nn.NewConv2d(dev, 2, 3, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, false, gen))
	b.Norm = nn.Add(b, "bn", nn.NewBatchNorm2d(dev, 3))
	b.Scale = nn.AddParam(b, "scale", graph.Param(tensor.Ones(dev, 3, 1, 1)))
	b.Fixed = nn.AddBuffer(b, "fixed", graph.Constant(tensor.Zeros(dev, 3, 1, 1)))
	return b
}

func (b *block) Forward(x *graph.Value) *graph.Value {
	h := b.Conv.Forward(x)
	defer h.Release()
	n := b.Norm.Forward(h)
	defer n.Release()
	return graph.Mul(n, b.Scale)
}

func names(ns []nn.Named) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

func TestBaseNamesStateInRegistrationOrder(t *testing.T) {
	dev := testdevice.CPU(t)
	b := newBlock(dev, tensor.NewGenerator(1))
	defer nn.Release(b)
	require.Equal(t, []string{"conv.weight", "bn.weight", "bn.bias", "scale"}, names(b.Parameters()))
	require.Equal(t, []string{"bn.running_mean", "bn.running_var", "bn.num_batches_tracked", "fixed"}, names(b.Buffers()))
	require.Equal(t, []string{"conv", "bn"}, func() []string {
		var out []string
		for _, c := range b.Children() {
			out = append(out, c.Name)
		}
		return out
	}())

	require.True(t, b.Training() && b.Norm.Training(), "a new module trains")
	b.SetTraining(false)
	require.False(t, b.Training() || b.Norm.Training() || b.Conv.Training())

	// A child added to a module in evaluation joins in that mode.
	extra := nn.Add(b, "drop", nn.NewDropout(0.5, tensor.NewGenerator(2)))
	require.False(t, extra.Training())

	// Registering a name again replaces the entry in its place.
	old := b.Conv
	b.Conv = nn.Add(b, "conv", nn.NewConv2d(dev, 2, 3, [2]int{1, 1}, tensor.ConvOptions{}, true, tensor.NewGenerator(3)))
	nn.Release(old)
	require.Equal(t, []string{"conv.weight", "conv.bias", "bn.weight", "bn.bias", "scale"}, names(b.Parameters()))

	// The state dict round-trips through the registry.
	sd := nn.StateDict(b)
	require.Len(t, sd, 9)
	require.NoError(t, nn.CheckStateDict(b, sd))
}

func TestBaseRefusesMisuse(t *testing.T) {
	dev := testdevice.CPU(t)
	b := &block{}
	c := graph.Constant(tensor.Zeros(dev, 2))
	defer c.Release()
	err := tensor.Catch(func() { nn.AddParam(b, "w", c) })
	require.ErrorContains(t, err, `nn.AddParam`)
	require.ErrorContains(t, err, `"w" does not require a gradient`)
	err = tensor.Catch(func() { nn.AddBuffer(b, "", c) })
	require.ErrorContains(t, err, "empty name")
}

func ExampleAdd() {
	dev, _ := tensor.Open("cpu")
	b := newBlock(dev, tensor.NewGenerator(1))
	defer nn.Release(b)
	for _, p := range b.Parameters() {
		fmt.Println(p.Name, p.Value.Shape())
	}
	// Output:
	// conv.weight [3 2 3 3]
	// bn.weight [3]
	// bn.bias [3]
	// scale [3 1 1]
}
