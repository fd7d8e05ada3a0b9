package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// LSTM is a multi-layer long short-term memory network, as torch.nn.LSTM,
// with PyTorch's gate order (input, forget, cell, output) in its weights:
//
//	i = σ(W_ii x + b_ii + W_hi h + b_hi)
//	f = σ(W_if x + b_if + W_hf h + b_hf)
//	g = tanh(W_ig x + b_ig + W_hg h + b_hg)
//	o = σ(W_io x + b_io + W_ho h + b_ho)
//	c' = f·c + i·g,  h' = o·tanh(c')
//
// Its parameters are PyTorch's: "weight_ih_l0" [4H, in], "weight_hh_l0"
// [4H, H], "bias_ih_l0" and "bias_hh_l0" [4H], with "_reverse" for the
// backward direction, per layer. The loop over time is made of graph ops
// (one matrix product for every step's input projection, then each step's
// hidden projection and gates), so gradients through time come from the
// graph engine.
type LSTM struct {
	Base
	InputSize, HiddenSize int
	Options               RNNOptions // NumLayers resolved (at least 1)
	// Gen draws the dropout masks between layers (nil without dropout).
	Gen *tensor.Generator
}

// LSTMState is an LSTM's hidden and cell state, each
// [layers·directions, N, H] ([layers·directions, H] for unbatched input).
type LSTMState struct{ H, C *graph.Value }

// NewLSTM returns an LSTM with PyTorch's arguments (input_size,
// hidden_size and the options), every parameter drawn from U(±1/√H) as
// PyTorch's. gen draws the weights and, with dropout, the dropout masks.
func NewLSTM(dev *tensor.Device, inputSize, hiddenSize int, o RNNOptions, gen *tensor.Generator) *LSTM {
	o = checkRNN("LSTM", inputSize, hiddenSize, o, gen)
	l := &LSTM{InputSize: inputSize, HiddenSize: hiddenSize, Options: o, Gen: gen}
	l.core().register(l, dev, 4)
	return l
}

func (l *LSTM) core() rnn {
	return rnn{op: "LSTM", inputSize: l.InputSize, hiddenSize: l.HiddenSize, o: l.Options, gen: l.Gen, base: &l.Base}
}

// Forward runs the LSTM from zero states over x — [T, N, InputSize]
// ([N, T, InputSize] with BatchFirst, or unbatched [T, InputSize]) — and
// returns the output sequence of the last layer, [T, N, directions·H] in
// x's layout. Run also returns the final states.
func (l *LSTM) Forward(x *graph.Value) *graph.Value {
	out, final := l.Run(x, nil)
	final.H.Release()
	final.C.Release()
	return out
}

// Run runs the LSTM over x (as Forward) from state (nil: zeros; else both
// H and C), and returns the output sequence and the final states h_n and
// c_n, all owned by the caller.
func (l *LSTM) Run(x *graph.Value, state *LSTMState) (out *graph.Value, final LSTMState) {
	var h0, c0 *graph.Value
	if state != nil {
		if state.H == nil || state.C == nil {
			misuse("LSTM", "an initial state needs both H and C")
		}
		h0, c0 = state.H, state.C
	}
	out, final.H, final.C = l.core().run(x, h0, c0, true, lstmStep)
	return out, final
}

func lstmStep(xProj, h, c *graph.Value, w *rnnWeights) (hNext, cNext *graph.Value) {
	hp := hiddenProjection(h, w)
	gates := xProj.Add(hp)
	hp.Release()
	parts := gates.Chunk(1, 4)
	gates.Release()
	i, f, g, o := parts[0].Sigmoid(), parts[1].Sigmoid(), parts[2].Tanh(), parts[3].Sigmoid()
	releaseAll(parts)
	fc, ig := f.Mul(c), i.Mul(g)
	cNext = fc.Add(ig)
	tc := cNext.Tanh()
	hNext = o.Mul(tc)
	releaseAll([]*graph.Value{i, f, g, o, fc, ig, tc})
	return hNext, cNext
}
