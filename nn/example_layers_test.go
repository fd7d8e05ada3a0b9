package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

func ExampleLSTM() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	// torch.nn.LSTM(input_size=3, hidden_size=4, num_layers=2,
	// batch_first=True, bidirectional=True)
	lstm := nn.NewLSTM(dev, 3, 4, nn.RNNOptions{NumLayers: 2, BatchFirst: true, Bidirectional: true}, tensor.NewGenerator(0))
	defer nn.Release(lstm)
	for _, p := range lstm.Parameters()[:4] {
		fmt.Println(p.Name, p.Value.Shape())
	}

	// A batch of 2 sequences of 5 steps, and an initial state.
	x := graph.Constant(tensor.NewGenerator(1).Randn(dev, 2, 5, 3))
	defer x.Release()
	h0 := graph.Constant(tensor.Zeros(dev, 4, 2, 4))
	defer h0.Release()
	c0 := graph.Constant(tensor.Zeros(dev, 4, 2, 4))
	defer c0.Release()
	out, final := lstm.Run(x, &nn.LSTMState{H: h0, C: c0})
	defer out.Release()
	defer final.H.Release()
	defer final.C.Release()
	fmt.Println("output", out.Shape(), "h_n", final.H.Shape(), "c_n", final.C.Shape())

	// The forward direction's last output is its final hidden state.
	last := out.Slice(1, 4, 5, 1)
	defer last.Release()
	fwd := last.Slice(2, 0, 4, 1)
	defer fwd.Release()
	hTop := final.H.Slice(0, 2, 3, 1)
	defer hTop.Release()
	a, _ := fwd.Float32s()
	b, _ := hTop.Float32s()
	fmt.Println(a[0] == b[0] && a[7] == b[7])
	// Output:
	// weight_ih_l0 [16 3]
	// weight_hh_l0 [16 4]
	// bias_ih_l0 [16]
	// bias_hh_l0 [16]
	// output [2 5 8] h_n [4 2 4] c_n [4 2 4]
	// true
}

func ExampleGroupNorm() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	// torch.nn.GroupNorm(num_groups=2, num_channels=4): channels {0, 1}
	// and {2, 3} of each sample are normalized together.
	gn := nn.NewGroupNorm(dev, 2, 4, 1e-5, true)
	defer nn.Release(gn)
	x := graph.Constant(tensor.FromFloat32(dev, []float32{
		1, 2, 3, 4, // channels 0 and 1 of sample 0, 2 positions each
		10, 10, 20, 20, // channels 2 and 3
	}, 1, 4, 2))
	defer x.Release()
	y := gn.Forward(x)
	defer y.Release()
	out, err := y.Float32s()
	if err != nil {
		panic(err)
	}
	for _, v := range out {
		fmt.Printf("%.3f ", v)
	}
	fmt.Println()
	// Output:
	// -1.342 -0.447 0.447 1.342 -1.000 -1.000 1.000 1.000
}
