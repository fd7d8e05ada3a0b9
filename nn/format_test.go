package nn_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// Block is the custom module of gen_print.py's "custom_block": children
// and a parameter registered on nn.Base.
type Block struct {
	nn.Base
	Conv  *nn.Conv2d
	Norm  *nn.BatchNorm
	Scale *graph.Value
}

func NewBlock(dev *tensor.Device, gen *tensor.Generator) *Block {
	b := &Block{}
	b.Conv = nn.Add(b, "conv", nn.NewConv2d(dev, 16, 16, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, false, gen))
	b.Norm = nn.Add(b, "bn", nn.NewBatchNorm2d(dev, 16))
	b.Scale = nn.AddParam(b, "scale", graph.Param(tensor.Ones(dev, 16, 1, 1)))
	return b
}

func (b *Block) Forward(x *graph.Value) *graph.Value {
	h := b.Conv.Forward(x)
	defer h.Release()
	n := b.Norm.Forward(h)
	defer n.Release()
	return graph.Mul(n, b.Scale)
}

// TestFormatModulesGolden builds the modules of
// testdata/golden/nn/print.json (written by testdata/golden/gen_print.py)
// from this package's layers and prints them: the text must be PyTorch's
// repr, except for the two type names that differ on purpose (the Go
// name MultiHeadAttention, and PyTorch's internal
// NonDynamicallyQuantizableLinear, which is a Linear).
func TestFormatModulesGolden(t *testing.T) {
	raw, err := os.ReadFile("../testdata/golden/nn/print.json")
	require.NoError(t, err)
	var file struct {
		Modules []struct{ Name, Repr string } `json:"modules"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	dev := testdevice.CPU(t)
	gen := tensor.NewGenerator(16)
	pool2 := tensor.PoolOptions{Kernel: [2]int{2, 2}}
	build := map[string]func() nn.Module{
		"mlp": func() nn.Module {
			return nn.NewSequential(nn.NewLinear(dev, 784, 512, true, gen), nn.ReLU{}, nn.NewLinear(dev, 512, 10, false, gen))
		},
		"cnn": func() nn.Module {
			return nn.NewSequential(
				nn.NewConv2d(dev, 1, 8, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen),
				nn.NewBatchNorm2d(dev, 8), nn.ReLU{}, nn.NewMaxPool2d(pool2),
				nn.NewConv2d(dev, 8, 16, [2]int{3, 5}, tensor.ConvOptions{Stride: [2]int{2, 2}, Dilation: [2]int{1, 2}, Groups: 2}, false, gen),
				nn.NewAvgPool2d(pool2, true), nn.NewAdaptiveAvgPool2d(1, 1), nn.NewFlatten(), nn.NewDropout(0.25, gen),
				nn.NewLinear(dev, 16, 4, true, gen))
		},
		"transposed": func() nn.Module {
			return nn.NewSequential(
				nn.NewConvTranspose2d(dev, 4, 2, [2]int{3, 3}, tensor.ConvTransposeOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 1}}, true, gen),
				nn.Tanh{}, nn.Sigmoid{}, nn.GELU{}, nn.GELU{Approximate: true}, nn.SiLU{}, nn.LeakyReLU{Alpha: 0.2})
		},
		"norms": func() nn.Module {
			return nn.NewSequential(nn.NewEmbedding(dev, 100, 16, gen), nn.NewLayerNorm(dev, []int{16}), nn.NewBatchNorm1d(dev, 16))
		},
		"nested": func() nn.Module {
			return nn.NewSequential(nn.NewSequential(nn.NewLinear(dev, 3, 4, true, gen), nn.ReLU{}), nn.NewLinear(dev, 4, 2, true, gen))
		},
		"attention": func() nn.Module {
			return nn.NewMultiHeadAttention(dev, 8, 2, nn.MultiHeadAttentionConfig{BatchFirst: true}, gen)
		},
		"empty_sequential": func() nn.Module { return nn.NewSequential() },
		"custom_block":     func() nn.Module { return nn.NewSequential(NewBlock(dev, gen), nn.ReLU{}) },
		"sequence_layers": func() nn.Module {
			return nn.NewSequential(
				nn.NewGroupNorm(dev, 3, 6, 1e-5, true), nn.NewGroupNorm(dev, 2, 4, 1e-3, false),
				nn.NewConv1d(dev, 4, 6, 3, nn.Conv1dOptions{Stride: 2, Padding: 1, Dilation: 2, Groups: 2}, false, gen),
				nn.NewConv1d(dev, 3, 5, 1, nn.Conv1dOptions{}, true, gen),
				nn.NewLSTM(dev, 10, 20, nn.RNNOptions{NumLayers: 2, BatchFirst: true, Bidirectional: true}, gen),
				nn.NewLSTM(dev, 4, 6, nn.RNNOptions{}, gen),
				nn.NewGRU(dev, 5, 7, nn.RNNOptions{NoBias: true, Dropout: 0.5, NumLayers: 2}, gen))
		},
		"encoder_layer": func() nn.Module {
			return nn.NewTransformerEncoderLayer(dev, 12, 3, nn.TransformerLayerConfig{DimFeedforward: 20, BatchFirst: true}, gen)
		},
	}
	rename := strings.NewReplacer("MultiheadAttention", "MultiHeadAttention", "NonDynamicallyQuantizableLinear", "Linear")
	require.Len(t, file.Modules, len(build))
	for _, c := range file.Modules {
		t.Run(c.Name, func(t *testing.T) {
			mk, ok := build[c.Name]
			require.True(t, ok, "no Go build for %q", c.Name)
			m := mk()
			defer nn.Release(m)
			want := rename.Replace(c.Repr)
			assert.Equal(t, want, nn.Format(m))
			assert.Equal(t, want, fmt.Sprint(m), "String is Format")
		})
	}
}

// A module on Base prints under its own type name, even before it is put
// in a container, and a Base with nothing registered says so.
func TestFormatBase(t *testing.T) {
	b := NewBlock(testdevice.CPU(t), tensor.NewGenerator(1))
	defer nn.Release(b)
	assert.True(t, strings.HasPrefix(b.String(), "Block(\n  (conv): Conv2d(16, 16,"), b.String())
	assert.Equal(t, "Base()", (&nn.Base{}).String())
}
