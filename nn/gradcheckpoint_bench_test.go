package nn

import (
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkCheckpointTransformer times one forward and backward pass of
// a 12-layer encoder stack with and without checkpointing every layer,
// side by side, and reports each one's peak of live bytes (peak-B/op):
// checkpointing trades one more forward pass for the memory.
func BenchmarkCheckpointTransformer(b *testing.B) {
	dev := cpuDevice(b)
	const blocks, n, l, emb, heads, ffn = 12, 8, 32, 32, 4, 64
	gen := tensor.NewGenerator(3)
	layer := NewTransformerEncoderLayer(dev, emb, heads, TransformerLayerConfig{DimFeedforward: ffn, Dropout: 0.1, BatchFirst: true}, gen)
	enc := NewTransformerEncoder(layer, blocks, nil)
	Release(layer)
	defer Release(enc)
	x := graph.Constant(tensor.NewGenerator(9).Randn(dev, n, l, emb))
	defer x.Release()
	for _, ckpt := range []bool{false, true} {
		name := "plain"
		if ckpt {
			name = "checkpointed"
		}
		b.Run(name, func(b *testing.B) {
			enc.Checkpoint = ckpt
			var peak int64
			for b.Loop() {
				dev.ResetPeakLiveBytes()
				base := dev.Stats().LiveBytes
				y := enc.Forward(x)
				sq := y.Square()
				y.Release()
				loss := sq.MeanAll()
				sq.Release()
				if err := graph.Backward(loss); err != nil {
					b.Fatal(err)
				}
				loss.Release()
				ZeroGrad(enc)
				peak = dev.Stats().PeakLiveBytes - base
			}
			b.ReportMetric(float64(peak), "peak-B/op")
		})
	}
}
