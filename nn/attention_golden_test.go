package nn

// Attention and Transformer layers against PyTorch 1.13:
// testdata/golden/nn/attention.json, written by
// testdata/golden/gen_attention.py (its docstring gives the format). Every
// case loads PyTorch's weights by state-dict name and compares the output,
// the attention weights and the gradients of sum(out·r) + sum(weights·rw)
// with respect to every input and parameter, on cpu (float64, float32)
// and every WebGPU adapter (float32).

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

const attentionGoldenPath = "../testdata/golden/nn/attention.json"

type attnGoldenTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
	Kind  string    `json:"kind"` // masks: "float" or "bool"
}

// f32 returns the data rounded to float32: the file holds float32 inputs
// and weights as their shortest decimals.
func (g *attnGoldenTensor) f32() []float64 {
	out := make([]float64, len(g.Data))
	for i, v := range g.Data {
		out[i] = float64(float32(v))
	}
	return out
}

type attnGoldenCase struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Config struct {
		Embed          int     `json:"embed"`
		Heads          int     `json:"heads"`
		BatchFirst     bool    `json:"batch_first"`
		SelfAttention  bool    `json:"self_attention"`
		KDim           int     `json:"kdim"`
		VDim           int     `json:"vdim"`
		Bias           bool    `json:"bias"`
		AddBiasKV      bool    `json:"add_bias_kv"`
		AddZeroAttn    bool    `json:"add_zero_attn"`
		DimFeedforward int     `json:"dim_feedforward"`
		NormFirst      bool    `json:"norm_first"`
		Activation     string  `json:"activation"`
		LayerNormEps   float64 `json:"layer_norm_eps"`
		NumLayers      int     `json:"num_layers"`
		FinalNorm      bool    `json:"final_norm"`
	} `json:"config"`
	Keys    []string                     `json:"keys"`
	State   map[string]*attnGoldenTensor `json:"state"`
	Inputs  map[string]*attnGoldenTensor `json:"inputs"`
	Masks   map[string]*attnGoldenTensor `json:"masks"`
	Options struct {
		NeedWeights bool `json:"need_weights"`
		Average     bool `json:"average_attn_weights"`
	} `json:"options"`
	R       *attnGoldenTensor            `json:"r"`
	RW      *attnGoldenTensor            `json:"rw"`
	Out     *attnGoldenTensor            `json:"out"`
	Weights *attnGoldenTensor            `json:"weights"`
	Grads   map[string]*attnGoldenTensor `json:"grads"`
}

func loadAttentionGolden(t *testing.T) []*attnGoldenCase {
	t.Helper()
	raw, err := os.ReadFile(attentionGoldenPath)
	require.NoError(t, err, "golden data: run /usr/bin/python3 testdata/golden/gen_attention.py")
	var f struct {
		Cases []*attnGoldenCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Cases)
	return f.Cases
}

func TestAttentionGolden(t *testing.T) {
	cases := loadAttentionGolden(t)
	forEachDevice(t, func(t *testing.T, e env) {
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) { attentionGoldenCase(t, e, c) })
		}
	})
}

// attnGoldenModule builds c's module in e's dtype, with its typed call.
func attnGoldenModule(e env, c *attnGoldenCase) (Module, func(in, masks map[string]*graph.Value) (out, weights *graph.Value)) {
	gen := tensor.NewGenerator(3)
	cf := c.Config
	var act Module = ReLU{}
	if cf.Activation == "gelu" {
		act = GELU{}
	}
	lc := TransformerLayerConfig{DimFeedforward: cf.DimFeedforward, Activation: act, LayerNormEps: cf.LayerNormEps,
		BatchFirst: cf.BatchFirst, NormFirst: cf.NormFirst, DType: e.dt}
	finalNorm := func() *LayerNorm {
		if !cf.FinalNorm {
			return nil
		}
		return newLayerNormEps(e.dev, cf.Embed, cf.LayerNormEps, e.dt)
	}
	encMasks := func(ms map[string]*graph.Value) EncoderMasks {
		return EncoderMasks{Mask: ms["mask"], KeyPaddingMask: ms["src_key_padding_mask"]}
	}
	decMasks := func(ms map[string]*graph.Value) DecoderMasks {
		return DecoderMasks{TgtMask: ms["tgt_mask"], MemoryMask: ms["memory_mask"],
			TgtKeyPaddingMask: ms["tgt_key_padding_mask"], MemoryKeyPaddingMask: ms["memory_key_padding_mask"]}
	}
	switch c.Kind {
	case "mha":
		m := NewMultiHeadAttention(e.dev, cf.Embed, cf.Heads, MultiHeadAttentionConfig{NoBias: !cf.Bias, AddBiasKV: cf.AddBiasKV,
			AddZeroAttn: cf.AddZeroAttn, KDim: cf.KDim, VDim: cf.VDim, BatchFirst: cf.BatchFirst, DType: e.dt}, gen)
		return m, func(in, ms map[string]*graph.Value) (*graph.Value, *graph.Value) {
			q, k, v := in["q"], in["k"], in["v"]
			if cf.SelfAttention {
				k, v = q, q
			}
			return m.Attend(q, k, v, AttentionOptions{AttnMask: ms["attn_mask"], KeyPaddingMask: ms["key_padding_mask"],
				NeedWeights: c.Options.NeedWeights, PerHeadWeights: !c.Options.Average})
		}
	case "encoder_layer":
		l := NewTransformerEncoderLayer(e.dev, cf.Embed, cf.Heads, lc, gen)
		return l, func(in, ms map[string]*graph.Value) (*graph.Value, *graph.Value) {
			return l.Encode(in["src"], encMasks(ms)), nil
		}
	case "encoder":
		layer := NewTransformerEncoderLayer(e.dev, cf.Embed, cf.Heads, lc, gen)
		defer Release(layer)
		s := NewTransformerEncoder(layer, cf.NumLayers, finalNorm())
		return s, func(in, ms map[string]*graph.Value) (*graph.Value, *graph.Value) {
			return s.Encode(in["src"], encMasks(ms)), nil
		}
	case "decoder_layer":
		l := NewTransformerDecoderLayer(e.dev, cf.Embed, cf.Heads, lc, gen)
		return l, func(in, ms map[string]*graph.Value) (*graph.Value, *graph.Value) {
			return l.Decode(in["tgt"], in["memory"], decMasks(ms)), nil
		}
	case "decoder":
		layer := NewTransformerDecoderLayer(e.dev, cf.Embed, cf.Heads, lc, gen)
		defer Release(layer)
		s := NewTransformerDecoder(layer, cf.NumLayers, finalNorm())
		return s, func(in, ms map[string]*graph.Value) (*graph.Value, *graph.Value) {
			return s.Decode(in["tgt"], in["memory"], decMasks(ms)), nil
		}
	}
	panic("unknown kind " + c.Kind)
}

func attentionGoldenCase(t *testing.T, e env, c *attnGoldenCase) {
	m, call := attnGoldenModule(e, c)
	defer Release(m)
	require.Equal(t, c.Keys, names(append(m.Parameters(), m.Buffers()...)), "state-dict names and order")

	sd := map[string]*tensor.Tensor{}
	for name, v := range c.State {
		sd[name] = e.tensorOf(v.f32(), v.Shape...)
	}
	defer func() {
		for _, v := range sd {
			v.Release()
		}
	}()
	require.NoError(t, LoadStateDict(m, sd))
	m.SetTraining(false)

	in := map[string]*graph.Value{}
	for name, v := range c.Inputs {
		in[name] = e.param(v.f32(), v.Shape...)
	}
	masks := map[string]*graph.Value{}
	for name, v := range c.Masks {
		if v.Kind == "bool" {
			ints := make([]int32, len(v.Data))
			for i, b := range v.Data {
				ints[i] = int32(b)
			}
			masks[name] = e.labels(ints, v.Shape...)
		} else {
			masks[name] = e.constant(v.f32(), v.Shape...)
		}
	}
	defer func() {
		for _, v := range in {
			v.Release()
		}
		for _, v := range masks {
			v.Release()
		}
	}()

	out, w := call(in, masks)
	defer releaseValues(out, w)
	// The nn tests' tolerances hold even through stacks of softmaxes and
	// layer norms.
	tol := e.tol
	require.Equal(t, c.Out.Shape, out.Shape())
	near(t, c.Out.Data, read(t, out), tol, "output")
	if c.Weights == nil {
		require.Nil(t, w)
	} else {
		require.NotNil(t, w)
		require.Equal(t, c.Weights.Shape, w.Shape())
		near(t, c.Weights.Data, read(t, w), tol, "weights")
	}

	r := e.constant(c.R.f32(), c.R.Shape...)
	defer r.Release()
	prod := graph.Mul(out, r)
	loss := prod.Sum(nil, false)
	prod.Release()
	if w != nil {
		rw := e.constant(c.RW.f32(), c.RW.Shape...)
		pw := graph.Mul(w, rw)
		sw := pw.Sum(nil, false)
		total := graph.Add(loss, sw)
		releaseValues(rw, pw, sw, loss)
		loss = total
	}
	require.NoError(t, graph.Backward(loss))
	loss.Release()

	params := map[string]*graph.Value{}
	for _, p := range m.Parameters() {
		params[p.Name] = p.Value
	}
	gradNames := make([]string, 0, len(c.Grads))
	for name := range c.Grads {
		gradNames = append(gradNames, name)
	}
	slices.Sort(gradNames)
	for _, name := range gradNames {
		want := c.Grads[name]
		v := in[name]
		if v == nil {
			v = params[name]
		}
		require.NotNil(t, v, "no input or parameter %q", name)
		g := v.Grad()
		require.NotNil(t, g, "no gradient for %s", name)
		require.Equal(t, want.Shape, g.Shape(), name)
		near(t, want.Data, read(t, g), tol, "gradient of "+name)
	}
}
