package optim

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// ClipGradNorm scales the gradients of params so that their global L2
// norm (of all gradients taken as one vector) is at most maxNorm, as
// torch.nn.utils.clip_grad_norm_: each gradient is multiplied by
// min(1, maxNorm/(norm + 1e-6)). It returns the norm before clipping, a
// scalar tensor the caller owns, in the first gradient's dtype.
//
// Everything runs on the device, the coefficient included: nothing is
// read back, so clipping does not stall a training loop. The gradients
// are replaced (Value.SetGrad) rather than written in place, since a
// gradient may be a view shared with something else. Parameters without a
// gradient are skipped; with none at all the norm is 0, and with no
// parameters the result is nil. All gradients must be on one device.
func ClipGradNorm(params []nn.Named, maxNorm float64) *tensor.Tensor {
	if len(params) == 0 {
		return nil
	}
	var with []*graph.Value
	for _, p := range params {
		if p.Value.Grad() != nil {
			with = append(with, p.Value)
		}
	}
	if len(with) == 0 {
		v := params[0].Value
		return tensor.Full(v.Device(), v.DType(), 0)
	}
	first := with[0].Grad().Tensor()
	dev, dtype := first.Device(), first.DType()
	sums := make([]*tensor.Tensor, len(with))
	defer func() {
		for _, s := range sums {
			if s != nil {
				s.Release()
			}
		}
	}()
	for i, v := range with {
		g := v.Grad().Tensor()
		if g.Device() != dev {
			misuse("ClipGradNorm", "gradients on %v and %v", dev, g.Device())
		}
		sq := g.Square()
		s := sq.Sum(nil, false)
		sq.Release()
		if s.DType() != dtype {
			c := s.Cast(dtype)
			s.Release()
			s = c
		}
		sums[i] = s
	}
	stacked := tensor.Stack(0, sums...)
	total := stacked.Sum(nil, false)
	stacked.Release()
	norm := total.Sqrt()
	total.Release()

	// coef = min(maxNorm/(norm + 1e-6), 1), divided (not multiplied by a
	// reciprocal) as PyTorch does, so the rounding matches.
	den := norm.AddScalar(1e-6)
	limit := tensor.Full(dev, dtype, maxNorm)
	ratio := tensor.Div(limit, den)
	den.Release()
	limit.Release()
	coef := ratio.MinimumScalar(1)
	ratio.Release()
	defer coef.Release()
	for _, v := range with {
		g := v.Grad().Tensor()
		c := coef
		if g.DType() != dtype {
			c = coef.Cast(g.DType())
		}
		v.SetGrad(tensor.Mul(g, c))
		if c != coef {
			c.Release()
		}
	}
	return norm
}
