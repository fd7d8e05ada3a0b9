package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// Checkpointing each layer of a transformer stack keeps only the layers'
// inputs through the forward pass; the backward pass recomputes each
// layer, redrawing its dropout masks from the restored generator, and the
// gradients are the plain stack's. The peak of live bytes drops.
func ExampleCheckpoint() {
	dev, _ := tensor.Open("cpu")
	gen := tensor.NewGenerator(1)
	layer := nn.NewTransformerEncoderLayer(dev, 16, 2, nn.TransformerLayerConfig{DimFeedforward: 32, Dropout: 0.1, BatchFirst: true}, gen)
	enc := nn.NewTransformerEncoder(layer, 12, nil)
	nn.Release(layer)
	defer nn.Release(enc)
	x := graph.Constant(tensor.NewGenerator(2).Randn(dev, 4, 32, 16))
	defer x.Release()
	start := gen.Offset()

	var peaks []int64
	var grads [][]float32
	for _, checkpoint := range []bool{false, true} {
		enc.Checkpoint = checkpoint // or wrap any module: nn.Checkpoint(m)
		gen.SetOffset(start)        // the same dropout masks in both runs
		dev.ResetPeakLiveBytes()
		base := dev.Stats().LiveBytes
		y := enc.Forward(x)
		sq := y.Square()
		loss := sq.MeanAll()
		sq.Release()
		if err := graph.Backward(loss); err != nil {
			panic(err)
		}
		peaks = append(peaks, dev.Stats().PeakLiveBytes-base)
		g, _ := enc.Layers[0].Linear1.Weight.Grad().Float32s()
		grads = append(grads, g)
		nn.ZeroGrad(enc)
		loss.Release()
		y.Release()
	}
	fmt.Println("same gradients:", fmt.Sprint(grads[0]) == fmt.Sprint(grads[1]))
	fmt.Println("peak at least halved:", 2*peaks[1] < peaks[0])
	// Output:
	// same gradients: true
	// peak at least halved: true
}
