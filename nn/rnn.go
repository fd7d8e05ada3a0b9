package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// RNNOptions configures LSTM and GRU with PyTorch's names. The zero value
// is PyTorch's default (one layer, with biases, time-major, no dropout,
// one direction); NoBias is PyTorch's bias=False. PyTorch's LSTM
// proj_size is not offered.
type RNNOptions struct {
	NumLayers int // 0 means 1
	NoBias    bool
	// BatchFirst makes the input and output [N, T, feature] instead of
	// [T, N, feature]; the states stay [layers·directions, N, H], as in
	// PyTorch.
	BatchFirst bool
	// Dropout is the probability of dropping each element of every
	// layer's output but the last, in training.
	Dropout       float64
	Bidirectional bool
}

// rnn is what LSTM and GRU share, as the loop over layers, directions
// and time steps sees it: the options and the module's registry, where the
// parameters are looked up by name at each run (so that a parameter
// registered again under its name, or loaded, takes effect).
type rnn struct {
	op                    string
	inputSize, hiddenSize int
	o                     RNNOptions
	gen                   *tensor.Generator
	base                  *Base
}

// rnnWeights are one layer and direction's parameters; the biases are nil
// with NoBias.
type rnnWeights struct{ ih, hh, bih, bhh *graph.Value }

// cellStep advances one time step: xProj is this step's input projection
// W_ih·x + b_ih [N, gates·H], h (and c, for LSTM; nil for GRU) the state.
type cellStep func(xProj, h, c *graph.Value, w *rnnWeights) (hNext, cNext *graph.Value)

// checkRNN validates a constructor's arguments and returns the options
// with NumLayers resolved.
func checkRNN(op string, inputSize, hiddenSize int, o RNNOptions, gen *tensor.Generator) RNNOptions {
	if inputSize <= 0 || hiddenSize <= 0 || o.NumLayers < 0 {
		misuse("New"+op, "input_size %d, hidden_size %d and num_layers %d must be positive", inputSize, hiddenSize, o.NumLayers)
	}
	if !(o.Dropout >= 0 && o.Dropout <= 1) {
		misuse("New"+op, "dropout %v is outside [0, 1]", o.Dropout)
	}
	if o.Dropout > 0 && o.Dropout < 1 && gen == nil {
		misuse("New"+op, "dropout %v needs a generator", o.Dropout)
	}
	o.NumLayers = max(o.NumLayers, 1)
	return o
}

// register creates and registers every parameter of r's module under
// PyTorch's state-dict names, in PyTorch's order, drawn from U(±1/√hidden)
// as PyTorch's reset_parameters.
func (r rnn) register(m Composite, dev *tensor.Device, gates int) {
	bound := 1 / math.Sqrt(float64(r.hiddenSize))
	gh := gates * r.hiddenSize
	for layer := range r.o.NumLayers {
		in := r.inputSize
		if layer > 0 {
			in = r.hiddenSize * r.directions()
		}
		for dir := range r.directions() {
			ns := r.names(layer*r.directions() + dir)
			AddParam(m, ns.ih, uniformParam(dev, bound, r.gen, gh, in))
			AddParam(m, ns.hh, uniformParam(dev, bound, r.gen, gh, r.hiddenSize))
			if !r.o.NoBias {
				AddParam(m, ns.bih, uniformParam(dev, bound, r.gen, gh))
				AddParam(m, ns.bhh, uniformParam(dev, bound, r.gen, gh))
			}
		}
	}
}

// rnnNames are one layer and direction's parameter names; the bias names
// are "" with NoBias.
type rnnNames struct{ ih, hh, bih, bhh string }

// names returns the parameter names of layer and direction k (k = layer ·
// directions + direction): "weight_ih_l1_reverse" and so on.
func (r rnn) names(k int) rnnNames {
	suffix := fmt.Sprintf("_l%d", k/r.directions())
	if k%r.directions() == 1 {
		suffix += "_reverse"
	}
	ns := rnnNames{ih: "weight_ih" + suffix, hh: "weight_hh" + suffix}
	if !r.o.NoBias {
		ns.bih, ns.bhh = "bias_ih"+suffix, "bias_hh"+suffix
	}
	return ns
}

// weights returns the parameters of layer and direction k.
func (r rnn) weights(k int) *rnnWeights {
	ns := r.names(k)
	return &rnnWeights{ih: r.param(ns.ih), hh: r.param(ns.hh), bih: r.param(ns.bih), bhh: r.param(ns.bhh)}
}

// param returns the parameter registered as name, or nil for "".
func (r rnn) param(name string) *graph.Value {
	if name == "" {
		return nil
	}
	for _, e := range r.base.entries {
		if e.name == name && e.child == nil && !e.buffer {
			return e.value
		}
	}
	misuse(r.op, "parameter %q is not registered", name)
	return nil
}

func (r rnn) directions() int {
	if r.o.Bidirectional {
		return 2
	}
	return 1
}

// run checks the shapes and brings x and the states to the time-major
// batched layout, runs every layer and brings the results back. h0 and c0
// (nil: zeros; c0 only for LSTM) are [layers·directions, N, H], or
// [layers·directions, H] for an unbatched x [T, InputSize].
func (r rnn) run(x, h0, c0 *graph.Value, withC bool, step cellStep) (out, hN, cN *graph.Value) {
	xs := x.Shape()
	if (len(xs) != 2 && len(xs) != 3) || xs[len(xs)-1] != r.inputSize {
		misuse(r.op, "input %v is not [T, N, %d], [N, T, %d] (batch_first) or unbatched [T, %d]", xs, r.inputSize, r.inputSize, r.inputSize)
	}
	var owned []*graph.Value
	defer func() { releaseAll(owned) }()
	keep := func(v *graph.Value) *graph.Value { owned = append(owned, v); return v }
	batched := len(xs) == 3
	seq := x
	if !batched {
		seq = keep(x.Unsqueeze(1))
	} else if r.o.BatchFirst {
		seq = keep(keep(x.Transpose(0, 1)).Contiguous())
	}
	if seq.Shape()[0] == 0 {
		misuse(r.op, "input %v has no time steps", xs)
	}
	n := seq.Shape()[1]
	want := []int{r.o.NumLayers * r.directions(), n, r.hiddenSize}
	if !batched {
		want = []int{want[0], want[2]}
	}
	states := [2]*graph.Value{h0, c0}
	for i, s := range states {
		if s == nil {
			continue
		}
		if ss := s.Shape(); len(ss) != len(want) || ss[0] != want[0] || ss[len(ss)-1] != want[len(want)-1] || (batched && ss[1] != want[1]) {
			misuse(r.op, "initial state %v does not match the input %v: want %v", ss, xs, want)
		}
		if !batched {
			states[i] = keep(s.Unsqueeze(1))
		}
	}
	out, hN, cN = r.layers(seq, states[0], states[1], withC, step)
	switch {
	case !batched:
		out = squeezeOwned(out, 1)
		hN = squeezeOwned(hN, 1)
		if cN != nil {
			cN = squeezeOwned(cN, 1)
		}
	case r.o.BatchFirst:
		t := out.Transpose(0, 1)
		out.Release()
		out = t.Contiguous()
		t.Release()
	}
	return out, hN, cN
}

// squeezeOwned returns v without axis dim and releases v.
func squeezeOwned(v *graph.Value, dim int) *graph.Value {
	defer v.Release()
	return v.Squeeze(dim)
}

// layers runs every layer over seq [T, N, in], time-major, with states
// [layers·directions, N, H] or nil, and returns the last layer's output
// [T, N, directions·H] and the final states in the states' layout.
func (r rnn) layers(seq, h0, c0 *graph.Value, withC bool, step cellStep) (out, hN, cN *graph.Value) {
	n := seq.Shape()[1]
	var zeros *graph.Value
	initial := func(all *graph.Value, k int) *graph.Value {
		if all == nil {
			if zeros == nil {
				zeros = graph.Constant(tensor.Full(seq.Device(), seq.DType(), 0, n, r.hiddenSize))
			}
			return zeros.Reshape(n, r.hiddenSize)
		}
		s := all.Slice(0, k, k+1, 1)
		defer s.Release()
		return s.Squeeze(0)
	}
	var finalH, finalC []*graph.Value
	input := seq
	for layer := range r.o.NumLayers {
		if layer > 0 && r.o.Dropout > 0 && r.base.Training() {
			dropped := graph.Dropout(input, r.o.Dropout, true, r.gen)
			input.Release()
			input = dropped
		}
		var dirOuts []*graph.Value
		for dir := range r.directions() {
			k := layer*r.directions() + dir
			h, c := initial(h0, k), (*graph.Value)(nil)
			if withC {
				c = initial(c0, k)
			}
			o, hk, ck := r.direction(input, h, c, dir == 1, r.weights(k), step)
			dirOuts = append(dirOuts, o)
			finalH = append(finalH, hk)
			if withC {
				finalC = append(finalC, ck)
			}
		}
		if input != seq {
			input.Release()
		}
		if len(dirOuts) == 1 {
			input = dirOuts[0]
		} else {
			input = graph.Concat(2, dirOuts...)
			releaseAll(dirOuts)
		}
	}
	if zeros != nil {
		zeros.Release()
	}
	hN = graph.Stack(0, finalH...)
	releaseAll(finalH)
	if withC {
		cN = graph.Stack(0, finalC...)
		releaseAll(finalC)
	}
	return input, hN, cN
}

// direction runs one layer in one direction over seq [T, N, in] from the
// states h and c (which it takes over) and returns the outputs
// [T, N, H] and the final states. The input projection of every step is
// one matrix product; each step then adds its hidden projection.
func (r rnn) direction(seq, h, c *graph.Value, reverse bool, w *rnnWeights, step cellStep) (out, hN, cN *graph.Value) {
	proj := linear(r.op, seq, w.ih, w.bih)
	defer proj.Release()
	steps := seq.Shape()[0]
	outs := make([]*graph.Value, steps)
	for i := range steps {
		t := i
		if reverse {
			t = steps - 1 - i
		}
		slice := proj.Slice(0, t, t+1, 1)
		xProj := slice.Squeeze(0)
		slice.Release()
		hNext, cNext := step(xProj, h, c, w)
		xProj.Release()
		// h is kept in outs (as the previous step's output) except the
		// initial state, which is released here.
		if i == 0 {
			h.Release()
		}
		if c != nil {
			c.Release()
		}
		h, c = hNext, cNext
		outs[t] = h
	}
	out = graph.Stack(0, outs...)
	hN = h.Reshape(h.Shape()...)
	releaseAll(outs)
	return out, hN, c
}

// hiddenProjection is W_hh·h + b_hh for a batch of states h [N, H].
func hiddenProjection(h *graph.Value, w *rnnWeights) *graph.Value {
	if w.bhh == nil {
		return graph.Gemm(1, h, false, w.hh, true, 0, nil)
	}
	return graph.Gemm(1, h, false, w.hh, true, 1, w.bhh)
}

func releaseAll(vs []*graph.Value) {
	for _, v := range vs {
		v.Release()
	}
}
