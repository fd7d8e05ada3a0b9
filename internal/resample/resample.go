// Package resample computes, on the host, the source positions and weights
// of torch.nn.functional.interpolate along one axis: for each output
// position, the input positions it reads ("taps") and how much each
// contributes. Interpolation is separable, so package tensor resamples an
// image one axis at a time with hal.Device.Resample, applying the taps as
// a CSR table (Taps.Forward), and its gradient is the same map transposed
// in gather form (Taps.Transposed, cut by Split where a row is too long
// for one kernel loop).
//
// The formulas are PyTorch 1.13's (aten/src/ATen/native/UpSample.h),
// including where it rounds: for float32 and float16 tensors the scale and
// source coordinate are float32 (opmath_t), for float64 tensors float64;
// nearest always computes in float32, as PyTorch does. When a scale factor
// is given (and not recomputed), the source coordinate uses 1/scale, not
// in/out.
package resample

import "math"

// Mode is the interpolation kernel along one axis.
type Mode int

const (
	Nearest Mode = iota // one tap: floor(dst·scale), PyTorch's legacy "nearest"
	Linear              // two taps
	Cubic               // four taps, Keys' kernel with A = −0.75, indices clamped to the border
)

// Axis describes the resampling of one axis.
type Axis struct {
	In, Out      int
	Mode         Mode
	AlignCorners bool
	// Scale is the user's scale factor for this axis, or 0 when the size
	// was given (or the scale is recomputed from the sizes).
	Scale float64
	// Double computes in float64 (float64 tensors), else in float32.
	Double bool
}

// Taps are, for tap k and output position o, the input position
// Index[k][o] and its weight Weight[k][o].
type Taps struct {
	Index  [][]int32
	Weight [][]float64
}

// f rounds to the computation's precision (float32 unless double).
func (a Axis) f(v float64) float64 {
	if a.Double {
		return v
	}
	return float64(float32(v))
}

// scalesValue is compute_scales_value: 1/scale when a scale was given,
// else in/out.
func (a Axis) scalesValue() float64 {
	if a.Scale > 0 {
		return a.f(1.0 / a.Scale)
	}
	return a.f(a.f(float64(a.In)) / float64(a.Out))
}

// pixelScale is area_pixel_compute_scale.
func (a Axis) pixelScale() float64 {
	if a.AlignCorners {
		if a.Out > 1 {
			return a.f(a.f(float64(a.In-1)) / float64(a.Out-1))
		}
		return 0
	}
	return a.scalesValue()
}

// sourceIndex is area_pixel_compute_source_index.
func (a Axis) sourceIndex(scale float64, dst int, cubic bool) float64 {
	if a.AlignCorners {
		return a.f(scale * a.f(float64(dst)))
	}
	// scale·(dst + 0.5) − 0.5 is evaluated in double and then rounded.
	src := a.f(float64(scale*(float64(dst)+0.5)) - 0.5)
	if !cubic && src < 0 {
		return 0
	}
	return src
}

// Compute returns the taps of the axis.
func Compute(a Axis) Taps {
	switch a.Mode {
	case Nearest:
		idx := make([]int32, a.Out)
		w := make([]float64, a.Out)
		// nearest_idx: exact for out = in and out = 2·in, else
		// floorf(dst·scale) in float32.
		scale := float64(float32(Axis{In: a.In, Out: a.Out, Scale: a.Scale}.scalesValue()))
		for o := range a.Out {
			var i int
			switch {
			case a.Out == a.In:
				i = o
			case a.Out == 2*a.In:
				i = o >> 1
			default:
				i = min(int(math.Floor(float64(float32(float32(o)*float32(scale))))), a.In-1)
			}
			idx[o], w[o] = int32(i), 1
		}
		return Taps{Index: [][]int32{idx}, Weight: [][]float64{w}}
	case Linear:
		t := Taps{Index: [][]int32{make([]int32, a.Out), make([]int32, a.Out)}, Weight: [][]float64{make([]float64, a.Out), make([]float64, a.Out)}}
		scale := a.pixelScale()
		for o := range a.Out {
			real := a.sourceIndex(scale, o, false)
			i0 := int(real) // real ≥ 0: truncation is floor
			off := 0
			if i0 < a.In-1 {
				off = 1
			}
			l1 := min(max(a.f(real-float64(i0)), 0), 1)
			l0 := a.f(1 - l1)
			t.Index[0][o], t.Index[1][o] = int32(i0), int32(i0+off)
			t.Weight[0][o], t.Weight[1][o] = l0, l1
		}
		return t
	default:
		t := Taps{Index: make([][]int32, 4), Weight: make([][]float64, 4)}
		for k := range 4 {
			t.Index[k], t.Weight[k] = make([]int32, a.Out), make([]float64, a.Out)
		}
		scale := a.pixelScale()
		for o := range a.Out {
			real := a.sourceIndex(scale, o, true)
			i := int(math.Floor(real))
			c := a.cubicCoefficients(a.f(real - float64(i)))
			for k := range 4 {
				t.Index[k][o] = int32(min(max(i-1+k, 0), a.In-1))
				t.Weight[k][o] = c[k]
			}
		}
		return t
	}
}

// cubicA is the A of PyTorch's (and OpenCV's) cubic convolution kernel.
const cubicA = -0.75

// cubicCoefficients is get_cubic_upsample_coefficients at fraction t.
func (a Axis) cubicCoefficients(t float64) [4]float64 {
	f := a.f
	conv1 := func(x float64) float64 { // |x| ≤ 1
		return f(f(f(f(f(f((cubicA+2)*x)-(cubicA+3))*x)*x)) + 1)
	}
	conv2 := func(x float64) float64 { // 1 < |x| < 2
		return f(f(f(f(f(f(f(cubicA*x)-5*cubicA)*x)+8*cubicA)*x)) - 4*cubicA)
	}
	x1 := t
	x2 := f(1 - t)
	return [4]float64{conv2(f(x1 + 1)), conv1(x1), conv1(x2), conv2(f(x2 + 1))}
}
