package tensor

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/x448/float16"
)

// Float16 variants of the golden cases. The golden files hold float16
// cases for a few ops only (PyTorch 1.13 runs few float16 ops on the CPU);
// every float32 case whose inputs and outputs fit float16 runs again here
// with its inputs rounded to float16, wherever the op runs in float16.
// The expected outputs stay PyTorch's for the float32 inputs, so the
// tolerance adds what rounding the inputs moves them by: each input moves
// by at most u = 2⁻¹¹ relative, which moves an output by at most u times
// its scale (the sum of |xⱼ·∂f/∂xⱼ| that gen.py writes for every rounded
// result; for sums and products, the op applied to absolute values):
//
//	|got − want| ≤ atol + eps·(ulps·|want| + k·√n·scale) + 2u·scale
//
// with the family's ulps and k (goldenTolOn) and float16's eps and atol.
// Exact families move or select values, so their outputs are the float16
// roundings of PyTorch's. Integer outputs (argmax, indices, comparisons)
// are not compared: rounding the inputs may create or break ties.

// f16Fits reports whether every finite value of xs survives a round trip
// through float16 as a normal number or zero: no overflow, and nothing
// that rounding would flush or make subnormal, where relative rounding no
// longer bounds the change.
func f16Fits(xs []float64) bool {
	for _, x := range xs {
		a := math.Abs(x)
		if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
			continue
		}
		if a > 65504 || a < 0x1p-14 {
			return false
		}
	}
	return true
}

func f16Of(x float64) float64 { return float64(float16.Fromfloat32(float32(x)).Float32()) }

// halfCase is c with float16 inputs, or nil with the reason it has no
// float16 variant.
func halfCase(c *goldenCase, op goldenOp) (*goldenCase, string) {
	switch {
	case c.Error != "":
		return nil, "an error case"
	case !c.required():
		return nil, "not a float32 case"
	case goldenConversions[c.Op]:
		return nil, "a conversion"
	case !c.Args.isNull("dtype"):
		return nil, "a creation op of its own dtype"
	}
	h := *c
	h.Inputs = make([]*goldenTensor, len(c.Inputs))
	floats := 0
	for i, in := range c.Inputs {
		if in == nil || in.DType != "float32" {
			h.Inputs[i] = in
			continue
		}
		if !f16Fits(in.Data) {
			return nil, "inputs outside float16's normal range"
		}
		g := *in
		g.DType = "float16"
		g.Data = make([]float64, len(in.Data))
		for j, v := range in.Data {
			g.Data[j] = f16Of(v)
		}
		h.Inputs[i] = &g
		floats++
	}
	if floats == 0 {
		return nil, "no float input"
	}
	h.Outputs = make([]goldenTensor, len(c.Outputs))
	for k, o := range c.Outputs {
		if o.DType == "float32" {
			if !f16Fits(o.Data) {
				return nil, "outputs outside float16's normal range"
			}
			o.DType = "float16"
		}
		h.Outputs[k] = o
	}
	return &h, ""
}

func TestGoldenFloat16(t *testing.T) {
	files := loadGolden(t)
	forEachDevice(t, func(t *testing.T, dev *Device) {
		if !dev.caps().Supports(hal.KernelCopy, Float16) {
			err := Catch(func() { Full(dev, Float16, 1, 2).Release() })
			require.True(t, errors.Is(err, hal.ErrUnsupported), "no float16 declared, so it must be refused: %v", err)
			t.Skipf("%v holds no float16", dev)
		}
		ran, skipped := 0, map[string]int{}
		for _, f := range files {
			t.Run(f.Family, func(t *testing.T) {
				for i := range f.Cases {
					c := &f.Cases[i]
					op := goldenOps[c.Op]
					h, why := halfCase(c, op)
					if h == nil {
						skipped[why]++
						continue
					}
					if name := c.opName(op); !Supports(dev, name, Float16) {
						skipped["no float16 "+name]++
						continue
					}
					ran++
					t.Run(c.Name, func(t *testing.T) { runHalfCase(t, dev, h, op) })
				}
			})
		}
		t.Logf("%v: %d float32 cases run in float16; not run: %v", dev, ran, skipped)
	})
}

// runHalfCase runs a float16 variant and compares its float outputs.
func runHalfCase(t *testing.T, dev *Device, c *goldenCase, op goldenOp) {
	var made []*Tensor
	defer func() {
		for _, x := range made {
			x.Release()
		}
	}()
	track := func(x *Tensor) *Tensor {
		if x != nil {
			made = append(made, x)
		}
		return x
	}
	var outs []*Tensor
	err := Catch(func() {
		in := make([]*Tensor, len(c.Inputs))
		for i, g := range c.Inputs {
			if g != nil {
				in[i] = buildGoldenInput(t, dev, g, track)
			}
		}
		outs = op.run(dev, c.Args, in)
		for _, o := range outs {
			track(o)
		}
	})
	require.NoError(t, err, "%s in float16", c.Op)
	require.Len(t, outs, len(c.Outputs))
	for k, want := range c.Outputs {
		if want.DType != "float16" {
			continue
		}
		require.Equal(t, Float16, outs[k].DType(), "output %d", k)
		got, err := outs[k].Float64s()
		require.NoError(t, err)
		tol := goldenTolOn(dev, c, op, Float16)
		if n, bad := halfMismatches(got, want, tol); n > 0 {
			t.Errorf("output %d (float16 from float16 inputs): %d of %d elements differ: %s", k, n, len(want.Data), strings.Join(bad, "; "))
		}
	}
}

// halfMismatches is goldenFloatMismatches for float16 variants: the
// float16 bound plus the inputs' rounding (see TestGoldenFloat16).
func halfMismatches(got []float64, want goldenTensor, tol goldenTol) (int, []string) {
	e := goldenEps[Float16]
	const u = 0x1p-11
	n := math.Sqrt(float64(max(want.N, 1)))
	var bad []string
	count := 0
	for i, w := range want.Data {
		g := got[i]
		s := 0.0
		switch len(want.Scale) {
		case 0:
		case 1:
			s = want.Scale[0]
		default:
			s = want.Scale[i]
		}
		var ok bool
		var bound float64
		switch {
		case math.IsNaN(w):
			ok = math.IsNaN(g)
		case math.IsInf(w, 0):
			ok = g == w
		case tol.exact:
			ok = g == f16Of(w) || g == 0 && math.Abs(w) < e.atol
		default:
			bound = e.atol + tol.flush + e.eps*(tol.ulps*math.Abs(w)+tol.k*n*s) + 2*u*s
			ok = math.Abs(g-w) <= bound
		}
		if !ok {
			count++
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("[%d] got %v, want %v (float16 %v, |diff| %.3g > tol %.3g)", i, g, w, f16Of(w), math.Abs(g-w), bound))
			}
		}
	}
	return count, bad
}
