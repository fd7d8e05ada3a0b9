package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// scoreMask is what Attend does to the scores [N, H, L, S]: add add (a
// floating mask), then set the positions where masked (Int32) is nonzero
// to MaskedScore. Either may be nil; both broadcast to the scores.
type scoreMask struct{ add, masked *graph.Value }

// mask returns o's attn_mask and key_padding_mask as a scoreMask of the
// scores' dtype. The caller releases it.
func (m *MultiHeadAttention) mask(o AttentionOptions, n, l, s int, dtype tensor.DType) scoreMask {
	const op = "MultiHeadAttention"
	var sm scoreMask
	if o.AttnMask != nil {
		switch sh := o.AttnMask.Shape(); {
		case len(sh) == 2 && sh[0] == l && sh[1] == s:
			sm.include(op, "attn_mask", o.AttnMask, dtype, 1, 1, l, s)
		case len(sh) == 3 && sh[0] == n*m.NumHeads && sh[1] == l && sh[2] == s:
			sm.include(op, "attn_mask", o.AttnMask, dtype, n, m.NumHeads, l, s)
		default:
			misuse(op, "attn_mask %v is neither [L, S] = [%d, %d] nor [N·heads, L, S] = [%d, %d, %d]", sh, l, s, n*m.NumHeads, l, s)
		}
	}
	if o.KeyPaddingMask != nil {
		if sh := o.KeyPaddingMask.Shape(); len(sh) != 2 || sh[0] != n || sh[1] != s {
			misuse(op, "key_padding_mask %v is not [N, S] = [%d, %d]", sh, n, s)
		}
		sm.include(op, "key_padding_mask", o.KeyPaddingMask, dtype, n, 1, 1, s)
	}
	return sm
}

// include adds mask, reshaped to shape, to sm: a floating mask to the
// additive part (cast to dtype), an Int32 one (nonzero = masked) to the
// masked positions, as PyTorch's logical_or of bool masks.
func (sm *scoreMask) include(op, name string, mask *graph.Value, dtype tensor.DType, shape ...int) {
	r := mask.Reshape(shape...)
	defer r.Release()
	var part **graph.Value
	var v *graph.Value
	switch {
	case mask.DType() == tensor.Int32:
		part, v = &sm.masked, r.NeScalar(0)
	case mask.DType().IsFloat():
		part, v = &sm.add, r.Cast(dtype)
	default:
		misuse(op, "%s has dtype %v: want a floating (additive) or Int32 (nonzero = masked) mask", name, mask.DType())
	}
	if *part == nil {
		*part = v
		return
	}
	defer releaseValues(*part, v)
	*part = graph.Add(*part, v)
}

// pad appends extra never-masked keys (bias_k, zero attention) to the
// masks' last axis, as PyTorch pads its masks with 0.
func (sm *scoreMask) pad(extra int) {
	for _, p := range []**graph.Value{&sm.add, &sm.masked} {
		if *p != nil {
			padded := (*p).Pad([]int{0, extra}, tensor.PadConstant, 0)
			(*p).Release()
			*p = padded
		}
	}
}

// apply returns the masked scores and releases scores.
func (sm scoreMask) apply(scores *graph.Value) *graph.Value {
	if sm.add != nil {
		s := graph.Add(scores, sm.add)
		scores.Release()
		scores = s
	}
	if sm.masked != nil {
		fill := graph.Constant(tensor.Full(scores.Device(), scores.DType(), MaskedScore, 1))
		defer fill.Release()
		s := graph.Where(sm.masked, fill, scores)
		scores.Release()
		scores = s
	}
	return scores
}

func (sm scoreMask) release() { releaseValues(sm.add, sm.masked) }

// SquareSubsequentMask returns the [L, L] causal mask of
// torch.nn.Transformer.generate_square_subsequent_mask: 0 on and below the
// diagonal, MaskedScore above it (where PyTorch has −∞; see MaskedScore),
// of dtype on dev. Pass it as AttnMask (or a decoder's TgtMask) so that
// position i attends only to positions up to i.
func SquareSubsequentMask(dev *tensor.Device, dtype tensor.DType, l int) *tensor.Tensor {
	if l <= 0 {
		misuse("SquareSubsequentMask", "size %d is not positive", l)
	}
	data := make([]float32, l*l)
	for i := range l {
		for j := i + 1; j < l; j++ {
			data[i*l+j] = MaskedScore
		}
	}
	t := tensor.FromFloat32(dev, data, l, l) // MaskedScore is exact in float32
	if dtype == tensor.Float32 {
		return t
	}
	defer t.Release()
	return t.Cast(dtype)
}
