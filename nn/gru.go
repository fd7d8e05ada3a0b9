package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// GRU is a multi-layer gated recurrent unit network, as torch.nn.GRU,
// with PyTorch's gate order (reset, update, new) in its weights:
//
//	r = σ(W_ir x + b_ir + W_hr h + b_hr)
//	z = σ(W_iz x + b_iz + W_hz h + b_hz)
//	n = tanh(W_in x + b_in + r·(W_hn h + b_hn))
//	h' = (1 − z)·n + z·h
//
// Its parameters are PyTorch's: "weight_ih_l0" [3H, in], "weight_hh_l0"
// [3H, H], "bias_ih_l0" and "bias_hh_l0" [3H], with "_reverse" for the
// backward direction, per layer. As LSTM, its loop over time is made of
// graph ops, so gradients through time come from the graph engine.
type GRU struct {
	Base
	InputSize, HiddenSize int
	Options               RNNOptions // NumLayers resolved (at least 1)
	// Gen draws the dropout masks between layers (nil without dropout).
	Gen *tensor.Generator
}

// NewGRU returns a GRU with PyTorch's arguments (input_size, hidden_size
// and the options), every parameter drawn from U(±1/√H) as PyTorch's. gen
// draws the weights and, with dropout, the dropout masks.
func NewGRU(dev *tensor.Device, inputSize, hiddenSize int, o RNNOptions, gen *tensor.Generator) *GRU {
	o = checkRNN("GRU", inputSize, hiddenSize, o, gen)
	g := &GRU{InputSize: inputSize, HiddenSize: hiddenSize, Options: o, Gen: gen}
	g.core().register(g, dev, 3)
	return g
}

func (g *GRU) core() rnn {
	return rnn{op: "GRU", inputSize: g.InputSize, hiddenSize: g.HiddenSize, o: g.Options, gen: g.Gen, base: &g.Base}
}

// Forward runs the GRU from a zero state over x — [T, N, InputSize]
// ([N, T, InputSize] with BatchFirst, or unbatched [T, InputSize]) — and
// returns the output sequence of the last layer, [T, N, directions·H] in
// x's layout. Run also returns the final state.
func (g *GRU) Forward(x *graph.Value) *graph.Value {
	out, hN := g.Run(x, nil)
	hN.Release()
	return out
}

// Run runs the GRU over x (as Forward) from h0 [layers·directions, N, H]
// (nil: zeros) and returns the output sequence and the final state h_n,
// both owned by the caller.
func (g *GRU) Run(x, h0 *graph.Value) (out, hN *graph.Value) {
	out, hN, _ = g.core().run(x, h0, nil, false, gruStep)
	return out, hN
}

func gruStep(xProj, h, _ *graph.Value, w *rnnWeights) (hNext, _ *graph.Value) {
	hp := hiddenProjection(h, w)
	xs, hs := xProj.Chunk(1, 3), hp.Chunk(1, 3)
	hp.Release()
	defer releaseAll(xs)
	defer releaseAll(hs)
	rPre, zPre := xs[0].Add(hs[0]), xs[1].Add(hs[1])
	r, z := rPre.Sigmoid(), zPre.Sigmoid()
	rh := r.Mul(hs[2])
	nPre := xs[2].Add(rh)
	n := nPre.Tanh()
	// h' = (1 − z)·n + z·h = n + z·(h − n)
	diff := h.Sub(n)
	zd := z.Mul(diff)
	hNext = n.Add(zd)
	releaseAll([]*graph.Value{rPre, zPre, r, z, rh, nPre, n, diff, zd})
	return hNext, nil
}
