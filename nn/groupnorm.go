package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// GroupNorm normalizes each group of NumGroups consecutive channel groups
// (axis 1) of each sample over the group's channels and every following
// axis, as torch.nn.GroupNorm, then applies a per-channel affine
// transform. Inputs are [N, C, *] ([N, C], [N, C, L], [N, C, H, W], …).
//
// It is composed of graph ops — a reshape to [N, G, C/G·∏*], LayerNorm
// over the last axis without affine, a reshape back and the per-channel
// scale and shift — so its gradients come from the graph engine and it
// runs wherever LayerNorm does.
type GroupNorm struct {
	Weight, Bias *graph.Value // [C]; nil for affine=False
	NumGroups    int
	NumChannels  int
	Eps          float64
	mode
}

// NewGroupNorm returns a GroupNorm with PyTorch's arguments
// (num_groups, num_channels, eps, affine; PyTorch's defaults are eps 1e-5
// and affine true): weight 1 and bias 0.
func NewGroupNorm(dev *tensor.Device, numGroups, numChannels int, eps float64, affine bool) *GroupNorm {
	if numGroups <= 0 || numChannels <= 0 || numChannels%numGroups != 0 {
		misuse("NewGroupNorm", "num_channels %d must be a positive multiple of num_groups %d", numChannels, numGroups)
	}
	if !(eps >= 0) {
		misuse("NewGroupNorm", "eps %v must not be negative", eps)
	}
	g := &GroupNorm{NumGroups: numGroups, NumChannels: numChannels, Eps: eps, mode: mode{true}}
	if affine {
		g.Weight = fullParam(dev, 1, numChannels)
		g.Bias = fullParam(dev, 0, numChannels)
	}
	return g
}

// Forward normalizes x [N, C, *].
func (g *GroupNorm) Forward(x *graph.Value) *graph.Value {
	xs := x.Shape()
	if len(xs) < 2 || xs[1] != g.NumChannels {
		misuse("GroupNorm", "input %v is not [N, %d, *]", xs, g.NumChannels)
	}
	grouped := x.Reshape(xs[0], g.NumGroups, -1)
	defer grouped.Release()
	normed := graph.LayerNorm(grouped, []int{grouped.Shape()[2]}, nil, nil, g.Eps)
	y := normed.Reshape(xs...)
	normed.Release()
	if g.Weight == nil && g.Bias == nil {
		return y
	}
	// The per-channel parameters broadcast as [C, 1, …, 1] against
	// [N, C, *].
	perChannel := make([]int, len(xs)-1)
	for i := range perChannel {
		perChannel[i] = 1
	}
	perChannel[0] = g.NumChannels
	if g.Weight != nil {
		w := g.Weight.Reshape(perChannel...)
		scaled := y.Mul(w)
		w.Release()
		y.Release()
		y = scaled
	}
	if g.Bias != nil {
		b := g.Bias.Reshape(perChannel...)
		shifted := y.Add(b)
		b.Release()
		y.Release()
		y = shifted
	}
	return y
}

// Parameters returns "weight" and "bias".
func (g *GroupNorm) Parameters() []Named { return named("weight", g.Weight, "bias", g.Bias) }

// Buffers returns nothing: GroupNorm keeps no running statistics.
func (g *GroupNorm) Buffers() []Named { return nil }
