package nn

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// With dropout 1 between layers in training, the second layer sees an
// all-zero input: the stack's output must equal a one-layer network with
// the second layer's weights run over zeros. In evaluation dropout is
// off (the golden cases with dropout check that).
func TestLSTMAndGRUDropoutBetweenLayers(t *testing.T) {
	const inSize, hidden, steps, batch = 3, 4, 5, 2
	for _, kind := range []string{"LSTM", "GRU"} {
		t.Run(kind, func(t *testing.T) {
			forEachDevice(t, func(t *testing.T, e env) {
				build := func(in int, o RNNOptions) Module {
					var m Module
					if kind == "LSTM" {
						m = NewLSTM(e.dev, in, hidden, o, tensor.NewGenerator(3))
					} else {
						m = NewGRU(e.dev, in, hidden, o, tensor.NewGenerator(3))
					}
					castLayer(e, m)
					return m
				}
				stack := build(inSize, RNNOptions{NumLayers: 2, Dropout: 1})
				defer Release(stack)
				top := build(hidden, RNNOptions{})
				defer Release(top)
				sd := map[string]*tensor.Tensor{}
				for _, p := range stack.Parameters() {
					if name, ok := strings.CutSuffix(p.Name, "_l1"); ok {
						sd[name+"_l0"] = p.Value.Tensor()
					}
				}
				require.NoError(t, LoadStateDict(top, sd))

				x := e.constant(randn(5, steps*batch*inSize, 1), steps, batch, inSize)
				defer x.Release()
				zeros := e.constant(make([]float64, steps*batch*hidden), steps, batch, hidden)
				defer zeros.Release()
				got := stack.Forward(x)
				defer got.Release()
				want := top.Forward(zeros)
				defer want.Release()
				near(t, read(t, want), read(t, got), e.tol)

				stack.SetTraining(false)
				eval := stack.Forward(x)
				defer eval.Release()
				require.NotEqual(t, read(t, want), read(t, eval), "dropout applied in evaluation")
			})
		})
	}
}

// PyTorch's initialization: every LSTM and GRU parameter uniform in
// ±1/√hidden, Conv1d's in ±1/√(Cin/groups·K); GroupNorm and RMSNorm
// start at weight 1 and bias 0.
func TestLSTMGRUConv1dGroupNormRMSNormInit(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(9)
	within := func(m Module, bound float64) {
		for _, p := range m.Parameters() {
			vs := read(t, p.Value)
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range vs {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			require.True(t, lo >= -bound && hi <= bound, "%s in [%v, %v], bound %v", p.Name, lo, hi, bound)
			require.Greater(t, hi-lo, bound/2, "%s is not spread over ±%v", p.Name, bound)
		}
	}
	lstm := NewLSTM(dev, 5, 7, RNNOptions{NumLayers: 2, Bidirectional: true}, gen)
	defer Release(lstm)
	require.Equal(t, []string{
		"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
		"weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
		"weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
		"weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse",
	}, names(lstm.Parameters()))
	require.Equal(t, []int{28, 14}, lstm.Parameters()[8].Value.Shape())
	within(lstm, 1/math.Sqrt(7))
	gru := NewGRU(dev, 5, 6, RNNOptions{NoBias: true}, gen)
	defer Release(gru)
	require.Equal(t, []string{"weight_ih_l0", "weight_hh_l0"}, names(gru.Parameters()))
	require.Equal(t, []int{18, 5}, gru.Parameters()[0].Value.Shape())
	within(gru, 1/math.Sqrt(6))
	conv := NewConv1d(dev, 6, 4, 3, Conv1dOptions{Groups: 2}, true, gen)
	defer Release(conv)
	require.Equal(t, []int{4, 3, 3}, conv.Weight.Shape())
	within(conv, 1/math.Sqrt(9))

	gn := NewGroupNorm(dev, 3, 6, 1e-5, true)
	defer Release(gn)
	require.Equal(t, []float64{1, 1, 1, 1, 1, 1}, read(t, gn.Weight))
	require.Equal(t, []float64{0, 0, 0, 0, 0, 0}, read(t, gn.Bias))
	rms := NewRMSNorm(dev, []int{2, 3}, 0, true)
	defer Release(rms)
	require.Equal(t, []float64{1, 1, 1, 1, 1, 1}, read(t, rms.Weight))
}

func TestLSTMGRUConv1dGroupNormMisuse(t *testing.T) {
	dev := cpuDevice(t)
	gen := tensor.NewGenerator(1)
	fails := func(f func(), words ...string) {
		t.Helper()
		err := tensor.Catch(f)
		var terr *tensor.Error
		require.ErrorAs(t, err, &terr)
		for _, w := range words {
			require.Contains(t, err.Error(), w)
		}
	}
	lstm := NewLSTM(dev, 3, 4, RNNOptions{NumLayers: 2}, gen)
	defer Release(lstm)
	gru := NewGRU(dev, 3, 4, RNNOptions{BatchFirst: true}, gen)
	defer Release(gru)
	x := graph.Constant(tensor.Zeros(dev, 5, 2, 3))
	defer x.Release()
	bad := graph.Constant(tensor.Zeros(dev, 5, 2, 4))
	defer bad.Release()
	state := graph.Constant(tensor.Zeros(dev, 2, 3, 4))
	defer state.Release()

	fails(func() { lstm.Forward(bad).Release() }, "LSTM", "[5 2 4]")
	fails(func() { lstm.Run(x, &LSTMState{H: state}) }, "LSTM", "H and C")
	fails(func() { lstm.Run(x, &LSTMState{H: state, C: state}) }, "LSTM", "[2 3 4]", "[2 2 4]")
	fails(func() { gru.Run(x, state) }, "GRU", "[2 3 4]", "[1 5 4]")
	fails(func() { NewGRU(dev, 3, 4, RNNOptions{Dropout: 0.5}, nil) }, "NewGRU", "generator")
	fails(func() { NewLSTM(dev, 0, 4, RNNOptions{}, gen) }, "NewLSTM", "input_size 0")

	gn := NewGroupNorm(dev, 2, 4, 1e-5, true)
	defer Release(gn)
	fails(func() { gn.Forward(x).Release() }, "GroupNorm", "[5 2 3]")
	fails(func() { NewGroupNorm(dev, 3, 4, 1e-5, true) }, "NewGroupNorm", "num_groups 3")

	conv := NewConv1d(dev, 4, 2, 3, Conv1dOptions{}, true, gen)
	defer Release(conv)
	fails(func() { conv.Forward(x).Release() }, "Conv1d", "[5 2 3]")
	fails(func() { NewConv1d(dev, 3, 2, 3, Conv1dOptions{Groups: 2}, true, gen) }, "NewConv1d", "groups")
}

// Forward and backward free every intermediate: after the results and
// gradients are released, the device holds what it held before.
func TestLSTMGRUConv1dGroupNormRMSNormFreeMemory(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		gen := tensor.NewGenerator(4)
		rnnOpts := RNNOptions{NumLayers: 2, BatchFirst: true, Bidirectional: true, Dropout: 0.3}
		models := []struct {
			name  string
			m     Module
			shape []int
		}{
			{"lstm", NewLSTM(e.dev, 3, 4, rnnOpts, gen), []int{2, 5, 3}},
			{"gru", NewGRU(e.dev, 3, 4, rnnOpts, gen), []int{2, 5, 3}},
			{"groupnorm", NewGroupNorm(e.dev, 3, 6, 1e-5, true), []int{2, 6, 5}},
			{"conv1d", NewConv1d(e.dev, 4, 6, 3, Conv1dOptions{Stride: 2, Padding: 1, Groups: 2}, true, gen), []int{2, 4, 9}},
			{"rmsnorm", NewRMSNorm(e.dev, []int{5}, 0, true), []int{2, 3, 5}},
		}
		for i, c := range models {
			t.Run(c.name, func(t *testing.T) {
				defer Release(c.m)
				castLayer(e, c.m)
				quietGC(t, e.dev)
				n := 1
				for _, d := range c.shape {
					n *= d
				}
				x := e.param(randn(uint64(40+i), n, 1), c.shape...)
				defer x.Release()
				base := e.dev.Stats().LiveBytes
				for range 2 {
					var y *graph.Value
					if l, ok := c.m.(*LSTM); ok {
						h0 := e.constant(randn(50, 4*2*4, 1), 4, 2, 4)
						var fin LSTMState
						y, fin = l.Run(x, &LSTMState{H: h0, C: h0})
						h0.Release()
						fin.H.Release()
						fin.C.Release()
					} else {
						y = c.m.Forward(x)
					}
					sq := y.Square()
					loss := sq.Mean(nil, false)
					require.NoError(t, graph.Backward(loss))
					y.Release()
					sq.Release()
					loss.Release()
					ZeroGrad(c.m)
					x.ZeroGrad()
					require.Equal(t, base, e.dev.Stats().LiveBytes)
				}
				c.m.SetTraining(false)
				eval := graph.NewScope(graph.NoGrad)
				require.False(t, c.m.Forward(eval.Use(x.Detach())).RequiresGrad())
				eval.Close()
				require.Equal(t, base, e.dev.Stats().LiveBytes)
			})
		}
	})
}
