package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// mask returns the additive mask of o's attn_mask and key_padding_mask,
// broadcastable to the scores [N, H, L, S] and of their dtype, or nil
// without masks. The caller releases it.
func (m *MultiHeadAttention) mask(o AttentionOptions, n, l, s int, dtype tensor.DType) *graph.Value {
	const op = "MultiHeadAttention"
	var am, kpm *graph.Value
	if o.AttnMask != nil {
		switch sh := o.AttnMask.Shape(); {
		case len(sh) == 2 && sh[0] == l && sh[1] == s:
			am = additive(op, "attn_mask", o.AttnMask, dtype, 1, 1, l, s)
		case len(sh) == 3 && sh[0] == n*m.NumHeads && sh[1] == l && sh[2] == s:
			am = additive(op, "attn_mask", o.AttnMask, dtype, n, m.NumHeads, l, s)
		default:
			misuse(op, "attn_mask %v is neither [L, S] = [%d, %d] nor [N·heads, L, S] = [%d, %d, %d]", sh, l, s, n*m.NumHeads, l, s)
		}
	}
	if o.KeyPaddingMask != nil {
		if sh := o.KeyPaddingMask.Shape(); len(sh) != 2 || sh[0] != n || sh[1] != s {
			misuse(op, "key_padding_mask %v is not [N, S] = [%d, %d]", sh, n, s)
		}
		kpm = additive(op, "key_padding_mask", o.KeyPaddingMask, dtype, n, 1, 1, s)
	}
	switch {
	case am == nil:
		return kpm
	case kpm == nil:
		return am
	}
	defer releaseValues(am, kpm)
	// A position masked twice scores 2·MaskedScore: still weight 0.
	return graph.Add(am, kpm)
}

// additive returns mask reshaped to shape as an additive mask of dtype:
// a floating mask as it is (cast), an Int32 one as MaskedScore where it is
// nonzero and 0 elsewhere.
func additive(op, name string, mask *graph.Value, dtype tensor.DType, shape ...int) *graph.Value {
	var f *graph.Value
	switch mask.DType() {
	case tensor.Int32:
		nz := mask.NeScalar(0)
		c := nz.Cast(dtype)
		nz.Release()
		f = c.MulScalar(MaskedScore)
		c.Release()
	case tensor.Float32, tensor.Float64, tensor.Float16:
		f = mask.Cast(dtype)
	default:
		misuse(op, "%s has dtype %v: want a floating (additive) or Int32 (nonzero = masked) mask", name, mask.DType())
	}
	defer f.Release()
	return f.Reshape(shape...)
}

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
