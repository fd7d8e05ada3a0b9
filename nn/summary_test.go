package nn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// TestSummary runs Summary on a network with every kind of slot it sees
// into (Sequential, a Base module whose Forward calls its fields, an
// interface field) on every device, and checks the shapes and counts
// against arithmetic on the layer sizes, that the model is left as it was
// (slots, modes, running statistics) and that no device memory is kept.
func TestSummary(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		gen := tensor.NewGenerator(5)
		const n, h, w = 3, 7, 5
		block := NewBlock(dev, gen) // 16 → 16 channels, own param "scale" [16,1,1]
		// An approximate GELU is a child module in PyTorch too (ReLU{}
		// and GELU{} are activation="relu"/"gelu", functions, not listed).
		enc := nn.NewTransformerEncoderLayer(dev, 6, 2, nn.TransformerLayerConfig{
			DimFeedforward: 11, Dropout: 0.1, BatchFirst: true, NormFirst: true, Activation: nn.GELU{Approximate: true}}, gen)
		model := nn.NewSequential(
			nn.NewConv2d(dev, 2, 16, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen),
			block,
			nn.ReLU{},
			nn.NewMaxPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}), // 7×5 → 3×2
			nn.NewFlatten(), // 16·3·2 = 96
			nn.NewLinear(dev, 96, 12, true, gen),
		)
		defer nn.Release(model)
		defer nn.Release(enc)
		slots := append([]nn.Module(nil), model.Modules...)
		block.Conv.SetTraining(false) // a child in its own mode, to be kept; the BatchNorm trains
		mean0 := testdevice.Float64s(t, block.Norm.RunningMean.Tensor())

		x := graph.Constant(tensor.Ones(dev, n, 2, h, w))
		defer x.Release()
		testdevice.QuietGC(t, dev)
		before := dev.Stats().LiveBytes
		s, err := nn.Summary(model, x)
		require.NoError(t, err)
		assert.Equal(t, before, dev.Stats().LiveBytes, "Summary keeps no device memory")

		type row struct {
			path, typ string
			depth     int
			shape     []int
			params    int
		}
		want := []row{
			{"", "Sequential", 0, []int{n, 12}, 0},
			{"0", "Conv2d", 1, []int{n, 16, h, w}, 16*2*3*3 + 16},
			{"1", "Block", 1, []int{n, 16, h, w}, 16},
			{"1.conv", "Conv2d", 2, nil, 16 * 16 * 3 * 3}, // called through a concrete field: unseen
			{"1.bn", "BatchNorm2d", 2, nil, 2 * 16},
			{"2", "ReLU", 1, []int{n, 16, h, w}, 0},
			{"3", "MaxPool2d", 1, []int{n, 16, 3, 2}, 0},
			{"4", "Flatten", 1, []int{n, 96}, 0},
			{"5", "Linear", 1, []int{n, 12}, 96*12 + 12},
		}
		require.Len(t, s.Rows, len(want))
		total := 0
		for i, r := range want {
			got := s.Rows[i]
			assert.Equal(t, r.path, got.Path, i)
			assert.Equal(t, r.typ, got.Type, r.path)
			assert.Equal(t, r.depth, got.Depth, r.path)
			assert.Equal(t, r.shape, got.OutputShape, r.path)
			assert.Equal(t, r.params, got.Params, r.path)
			total += r.params
		}
		assert.Equal(t, total, s.Params)
		assert.Equal(t, int64(4*total), s.ParamBytes)
		buffers := 0
		for _, b := range block.Norm.Buffers() {
			buffers += b.Value.Len()
		}
		assert.Equal(t, buffers, s.Buffers, "BatchNorm's running statistics")
		assert.Equal(t, []int{n, 2, h, w}, s.InputShape)

		// The model is as it was.
		assert.Equal(t, slots, model.Modules)
		assert.True(t, model.Training())
		assert.False(t, block.Conv.Training())
		assert.True(t, block.Norm.Training())
		assert.Equal(t, mean0, testdevice.Float64s(t, block.Norm.RunningMean.Tensor()), "the pass updated no running statistics")

		// An interface field (the encoder's Activation) is seen into.
		es, err := nn.SummaryOfShape(enc, dev, 2, 5, 6)
		require.NoError(t, err)
		var act *nn.SummaryRow
		for i := range es.Rows {
			if es.Rows[i].Path == "activation" {
				act = &es.Rows[i]
			}
		}
		require.NotNil(t, act)
		assert.Equal(t, []int{2, 5, 11}, act.OutputShape)
		assert.Equal(t, 1, act.Calls)
		assert.Equal(t, nn.GELU{Approximate: true}, enc.Activation, "the field is restored")

		// A wrong input is returned as the error, and the slots are restored.
		bad := graph.Constant(tensor.Ones(dev, n, 3, h, w))
		defer bad.Release()
		_, err = nn.Summary(model, bad)
		var te *tensor.Error
		require.ErrorAs(t, err, &te)
		assert.Equal(t, slots, model.Modules)
	})
}

// A failure the pass's result carries is Summary's error: on the CPU an
// out-of-range embedding index fails when the gather runs.
func TestSummaryDeviceFailure(t *testing.T) {
	dev := testdevice.CPU(t)
	emb := nn.NewEmbedding(dev, 10, 4, tensor.NewGenerator(2))
	defer nn.Release(emb)
	idx := graph.Constant(tensor.FromInt32(dev, []int32{1, 12, 3}, 3))
	defer idx.Release()
	s, err := nn.Summary(emb, idx)
	assert.Nil(t, s)
	require.ErrorIs(t, err, hal.ErrIndexOutOfRange)
	assert.NoError(t, dev.Sync(), "the failure was reported once, by Summary")
}
