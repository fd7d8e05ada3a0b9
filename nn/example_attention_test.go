package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

func ExampleMultiHeadAttention_Attend() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	// Embedding 8 split into 2 heads; keys and values of other sizes
	// (kdim=3, vdim=5) get separate projections, as in PyTorch.
	mha := nn.NewMultiHeadAttention(dev, 8, 2, nn.MultiHeadAttentionConfig{KDim: 3, VDim: 5, BatchFirst: true}, tensor.NewGenerator(1))
	defer nn.Release(mha)
	for _, p := range mha.Parameters() {
		fmt.Println(p.Name, p.Value.Shape())
	}

	gen := tensor.NewGenerator(2)
	q := graph.Constant(gen.Randn(dev, 2, 3, 8)) // [N, L, E]
	k := graph.Constant(gen.Randn(dev, 2, 4, 3)) // [N, S, kdim]
	v := graph.Constant(gen.Randn(dev, 2, 4, 5)) // [N, S, vdim]
	// The second sequence has 2 padding keys: nonzero means "masked".
	pad := graph.Constant(tensor.FromInt32(dev, []int32{0, 0, 0, 0, 0, 0, 1, 1}, 2, 4))
	defer func() {
		for _, x := range []*graph.Value{q, k, v, pad} {
			x.Release()
		}
	}()

	out, w := mha.Attend(q, k, v, nn.AttentionOptions{KeyPaddingMask: pad, NeedWeights: true})
	defer out.Release()
	defer w.Release()
	fmt.Println("out", out.Shape(), "weights", w.Shape()) // weights averaged over heads
	ws, err := w.Float32s()
	if err != nil {
		panic(err)
	}
	row := ws[3*4 : 4*4] // batch 1, query 0
	fmt.Printf("weights of padded keys: %v %v; row sum %.3f\n", row[2], row[3], row[0]+row[1]+row[2]+row[3])
	// Output:
	// q_proj_weight [8 8]
	// k_proj_weight [8 3]
	// v_proj_weight [8 5]
	// in_proj_bias [24]
	// out_proj.weight [8 8]
	// out_proj.bias [8]
	// out [2 3 8] weights [2 3 4]
	// weights of padded keys: 0 0; row sum 1.000
}

func ExampleTransformerEncoder() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	// PyTorch: TransformerEncoder(TransformerEncoderLayer(16, 4,
	// dim_feedforward=32, activation="gelu", batch_first=True,
	// norm_first=True), num_layers=2, norm=LayerNorm(16)).
	layer := nn.NewTransformerEncoderLayer(dev, 16, 4, nn.TransformerLayerConfig{
		DimFeedforward: 32, Activation: nn.GELU{}, BatchFirst: true, NormFirst: true}, tensor.NewGenerator(1))
	defer nn.Release(layer) // the stack holds copies
	enc := nn.NewTransformerEncoder(layer, 2, nn.NewLayerNorm(dev, []int{16}))
	defer nn.Release(enc)
	ps := enc.Parameters()
	fmt.Println(len(ps), "parameters:", ps[0].Name, "…", ps[len(ps)-1].Name)

	src := graph.Constant(tensor.NewGenerator(2).Randn(dev, 2, 5, 16)) // [N, L, E]
	defer src.Release()
	causal := graph.Constant(nn.SquareSubsequentMask(dev, tensor.Float32, 5))
	defer causal.Release()
	enc.SetTraining(false)
	y := enc.Encode(src, nn.EncoderMasks{Mask: causal})
	defer y.Release()
	fmt.Println("output", y.Shape())
	// Output:
	// 26 parameters: layers.0.self_attn.in_proj_weight … norm.bias
	// output [2 5 16]
}
