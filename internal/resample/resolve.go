package resample

import (
	"fmt"
	"math"
)

// Resolve checks torch.nn.functional.interpolate's arguments for an input
// of shape [N, C, spatial…] and returns each spatial axis's resampling.
// mode is PyTorch's name ("nearest", "linear", "bilinear", "bicubic",
// "trilinear"); size and scale are per spatial axis or one value for all;
// exactly one of them is given. double selects float64 arithmetic.
func Resolve(shape []int, size []int, scale []float64, mode string, alignCorners, recomputeScale, double bool) ([]Axis, error) {
	rank := len(shape)
	var m Mode
	switch mode {
	case "nearest":
		m = Nearest
		if rank < 3 || rank > 5 {
			return nil, fmt.Errorf("mode %q needs a 3-D, 4-D or 5-D input [N, C, …], got shape %v", mode, shape)
		}
		if alignCorners {
			return nil, fmt.Errorf("alignCorners can only be set with the interpolating modes linear, bilinear, bicubic and trilinear, not %q", mode)
		}
	case "linear", "bilinear", "trilinear", "bicubic":
		want := map[string]int{"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}[mode]
		if rank != want {
			return nil, fmt.Errorf("mode %q needs a %d-D input, got shape %v", mode, want, shape)
		}
		m = Linear
		if mode == "bicubic" {
			m = Cubic
		}
	default:
		return nil, fmt.Errorf("unknown mode %q (nearest, linear, bilinear, bicubic, trilinear)", mode)
	}
	spatial := rank - 2
	switch {
	case size == nil && scale == nil:
		return nil, fmt.Errorf("either a size or a scale factor is needed")
	case size != nil && scale != nil:
		return nil, fmt.Errorf("only one of size %v and scale factor %v may be given", size, scale)
	case size != nil && recomputeScale:
		return nil, fmt.Errorf("recomputing the scale factor is not meaningful with an explicit size %v", size)
	case size != nil && len(size) != 1 && len(size) != spatial:
		return nil, fmt.Errorf("size %v must have 1 or %d values for input shape %v", size, spatial, shape)
	case scale != nil && len(scale) != 1 && len(scale) != spatial:
		return nil, fmt.Errorf("scale factor %v must have 1 or %d values for input shape %v", scale, spatial, shape)
	}
	axes := make([]Axis, spatial)
	for i := range spatial {
		in := shape[2+i]
		a := Axis{In: in, Mode: m, AlignCorners: alignCorners, Double: double}
		if size != nil {
			a.Out = size[min(i, len(size)-1)]
		} else {
			s := scale[min(i, len(scale)-1)]
			if !(s > 0) || math.IsInf(s, 0) {
				return nil, fmt.Errorf("scale factor %v must be positive and finite", scale)
			}
			// Python's math.floor(float(in) * scale).
			out := math.Floor(float64(in) * s)
			if out > math.MaxInt32 {
				return nil, fmt.Errorf("scale factor %v makes axis %d of size %d too large", scale, 2+i, in)
			}
			a.Out = int(out)
			if !recomputeScale {
				a.Scale = s
			}
		}
		if in <= 0 || a.Out <= 0 {
			return nil, fmt.Errorf("input and output sizes must be greater than 0, got input %v and output size %d on axis %d", shape, a.Out, 2+i)
		}
		axes[i] = a
	}
	return axes, nil
}
