package nn

// GroupNorm, Conv1d, LSTM, GRU and Conv3d against PyTorch 1.13:
// testdata/golden/nn/layers.json (written by testdata/golden/gen_layers.py)
// holds each case's state dict, input, initial states, outputs and the
// float64 gradients of sum(out·r) [+ sum(h_n·r_h) + sum(c_n·r_c)] with
// respect to the input, the states and every parameter.
//
//	CI=true go test ./nn -run 'Golden/lstm_2layer_bidir_state' -v

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

const layersGoldenPath = "../testdata/golden/nn/layers.json"

type goldenTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type layersGoldenCase struct {
	Name       string                  `json:"name"`
	Layer      string                  `json:"layer"`
	Config     map[string]any          `json:"config"`
	Training   bool                    `json:"training"`
	State      map[string]goldenTensor `json:"state"`
	StateOrder []string                `json:"state_order"`
	X          *goldenTensor           `json:"x"`
	H0         *goldenTensor           `json:"h0"`
	C0         *goldenTensor           `json:"c0"`
	R          *goldenTensor           `json:"r"`
	RH         *goldenTensor           `json:"r_h"`
	RC         *goldenTensor           `json:"r_c"`
	Out        *goldenTensor           `json:"out"`
	HN         *goldenTensor           `json:"h_n"`
	CN         *goldenTensor           `json:"c_n"`
	Grads      map[string]goldenTensor `json:"grads"`
}

var layersGolden = sync.OnceValues(func() ([]layersGoldenCase, error) {
	raw, err := os.ReadFile(layersGoldenPath)
	if err != nil {
		return nil, err
	}
	var f struct {
		Cases []layersGoldenCase `json:"cases"`
	}
	return f.Cases, json.Unmarshal(raw, &f)
})

func (c *layersGoldenCase) intOf(key string, def int) int {
	if v, ok := c.Config[key]; ok {
		return int(v.(float64))
	}
	return def
}

// tripleOf reads a torch size argument given as one int or a 3-tuple.
func (c *layersGoldenCase) tripleOf(key string, def int) [3]int {
	v, ok := c.Config[key]
	if !ok {
		return [3]int{def, def, def}
	}
	if list, ok := v.([]any); ok {
		return [3]int{int(list[0].(float64)), int(list[1].(float64)), int(list[2].(float64))}
	}
	n := int(v.(float64))
	return [3]int{n, n, n}
}

func (c *layersGoldenCase) floatOf(key string, def float64) float64 {
	if v, ok := c.Config[key]; ok {
		return v.(float64)
	}
	return def
}

func (c *layersGoldenCase) boolOf(key string, def bool) bool {
	if v, ok := c.Config[key]; ok {
		return v.(bool)
	}
	return def
}

func (c *layersGoldenCase) rnnOptions() RNNOptions {
	return RNNOptions{
		NumLayers:     c.intOf("num_layers", 1),
		NoBias:        !c.boolOf("bias", true),
		BatchFirst:    c.boolOf("batch_first", false),
		Dropout:       c.floatOf("dropout", 0),
		Bidirectional: c.boolOf("bidirectional", false),
	}
}

// build makes the case's layer with PyTorch's arguments, in e's dtype.
func (c *layersGoldenCase) build(e env) Module {
	gen := tensor.NewGenerator(1)
	var m Module
	switch c.Layer {
	case "GroupNorm":
		m = NewGroupNorm(e.dev, c.intOf("num_groups", 0), c.intOf("num_channels", 0), c.floatOf("eps", 1e-5), c.boolOf("affine", true))
	case "Conv1d":
		o := Conv1dOptions{Stride: c.intOf("stride", 1), Padding: c.intOf("padding", 0), Dilation: c.intOf("dilation", 1), Groups: c.intOf("groups", 1)}
		m = NewConv1d(e.dev, c.intOf("in_channels", 0), c.intOf("out_channels", 0), c.intOf("kernel_size", 0), o, c.boolOf("bias", true), gen)
	case "Conv3d":
		o := tensor.Conv3dOptions{Stride: c.tripleOf("stride", 1), Padding: c.tripleOf("padding", 0),
			Dilation: c.tripleOf("dilation", 1), Groups: c.intOf("groups", 1)}
		m = NewConv3d(e.dev, c.intOf("in_channels", 0), c.intOf("out_channels", 0), c.tripleOf("kernel_size", 0), o, c.boolOf("bias", true), gen)
	case "LSTM":
		m = NewLSTM(e.dev, c.intOf("input_size", 0), c.intOf("hidden_size", 0), c.rnnOptions(), gen)
	case "GRU":
		m = NewGRU(e.dev, c.intOf("input_size", 0), c.intOf("hidden_size", 0), c.rnnOptions(), gen)
	default:
		panic("unknown layer " + c.Layer)
	}
	castLayer(e, m)
	m.SetTraining(c.Training)
	return m
}

// castLayer makes every parameter of m (built in Float32) e's dtype.
func castLayer(e env, m Module) {
	cast := func(p *graph.Value) *graph.Value {
		if p == nil {
			return nil
		}
		defer p.Release()
		return graph.Param(p.Tensor().Cast(e.dt))
	}
	switch m := m.(type) {
	case *GroupNorm:
		m.Weight, m.Bias = cast(m.Weight), cast(m.Bias)
	case *RMSNorm:
		m.Weight = cast(m.Weight)
	case *Conv1d:
		m.Weight, m.Bias = cast(m.Weight), cast(m.Bias)
	case *Conv3d:
		m.Weight, m.Bias = cast(m.Weight), cast(m.Bias)
	case Composite:
		for _, p := range m.Parameters() {
			AddParam(m, p.Name, cast(p.Value))
		}
	}
}

func (e env) golden(g *goldenTensor, requiresGrad bool) *graph.Value {
	if g == nil {
		return nil
	}
	if requiresGrad {
		return e.param(g.Data, g.Shape...)
	}
	return e.constant(g.Data, g.Shape...)
}

// weightedSum returns sum(y·r) as a graph value.
func weightedSum(e env, y *graph.Value, r *goldenTensor) *graph.Value {
	rv := e.golden(r, false)
	defer rv.Release()
	p := y.Mul(rv)
	defer p.Release()
	return p.Sum(nil, false)
}

func testLayersGolden(t *testing.T, layer string) {
	cases, err := layersGolden()
	require.NoError(t, err)
	ran := 0
	for i := range cases {
		c := &cases[i]
		if c.Layer != layer {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			forEachDevice(t, func(t *testing.T, e env) { runLayersGolden(t, e, c) })
		})
	}
	require.NotZero(t, ran, "no %s case in %s", layer, layersGoldenPath)
}

func runLayersGolden(t *testing.T, e env, c *layersGoldenCase) {
	m := c.build(e)
	defer Release(m)
	require.Equal(t, c.StateOrder, names(m.Parameters()), "parameters in PyTorch's state-dict order")
	sd := map[string]*tensor.Tensor{}
	for name, g := range c.State {
		sd[name] = e.tensorOf(g.Data, g.Shape...)
	}
	require.NoError(t, LoadStateDict(m, sd))
	for _, v := range sd {
		v.Release()
	}

	x, h0, c0 := e.golden(c.X, true), e.golden(c.H0, true), e.golden(c.C0, true)
	inputs := map[string]*graph.Value{"x": x, "h0": h0, "c0": c0}
	defer func() {
		for _, v := range inputs {
			if v != nil {
				v.Release()
			}
		}
	}()
	var out, hN, cN *graph.Value
	switch m := m.(type) {
	case *LSTM:
		var st *LSTMState
		if h0 != nil {
			st = &LSTMState{H: h0, C: c0}
		}
		var fin LSTMState
		out, fin = m.Run(x, st)
		hN, cN = fin.H, fin.C
	case *GRU:
		out, hN = m.Run(x, h0)
	default:
		out = m.Forward(x)
	}
	results := []struct {
		name string
		v    *graph.Value
		want *goldenTensor
		r    *goldenTensor
	}{{"out", out, c.Out, c.R}, {"h_n", hN, c.HN, c.RH}, {"c_n", cN, c.CN, c.RC}}
	var loss *graph.Value
	for _, res := range results {
		if res.want == nil {
			require.Nil(t, res.v, res.name)
			continue
		}
		require.NotNil(t, res.v, res.name)
		defer res.v.Release()
		require.Equal(t, res.want.Shape, res.v.Shape(), res.name)
		near(t, res.want.Data, read(t, res.v), e.tol, res.name)
		term := weightedSum(e, res.v, res.r)
		if loss == nil {
			loss = term
		} else {
			next := loss.Add(term)
			loss.Release()
			term.Release()
			loss = next
		}
	}
	defer loss.Release()
	require.NoError(t, graph.Backward(loss))

	for _, p := range m.Parameters() {
		inputs[p.Name] = p.Value
	}
	wantGrads := len(m.Parameters())
	for _, v := range []*graph.Value{x, h0, c0} {
		if v != nil {
			wantGrads++
		}
	}
	require.Len(t, c.Grads, wantGrads, "a golden gradient for the input, each state and each parameter")
	gradNames := make([]string, 0, len(c.Grads))
	for name := range c.Grads {
		gradNames = append(gradNames, name)
	}
	slices.Sort(gradNames)
	for _, name := range gradNames {
		want := c.Grads[name]
		v := inputs[name]
		require.NotNil(t, v, "no input or parameter %q", name)
		g := v.Grad()
		require.NotNil(t, g, "no gradient for %s", name)
		require.Equal(t, want.Shape, g.Shape(), name)
		near(t, want.Data, read(t, g), e.tol, fmt.Sprintf("gradient of %s", name))
	}
	for _, p := range m.Parameters() {
		delete(inputs, p.Name) // released with the module
	}
}

func TestGroupNormGolden(t *testing.T) { testLayersGolden(t, "GroupNorm") }
func TestConv1dGolden(t *testing.T)    { testLayersGolden(t, "Conv1d") }
func TestLSTMGolden(t *testing.T)      { testLayersGolden(t, "LSTM") }
func TestGRUGolden(t *testing.T)       { testLayersGolden(t, "GRU") }
func TestConv3dGolden(t *testing.T)    { testLayersGolden(t, "Conv3d") }
