package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// randomTaps is a CSR table of out rows over an axis of in, each row 0 to
// 4 random (index, weight) entries, repeated indices allowed.
func randomTaps(r *rand.Rand, in, out int) hal.ResampleTaps {
	taps := hal.ResampleTaps{Offsets: []int32{0}}
	for range out {
		for range r.IntN(5) {
			taps.Index = append(taps.Index, int32(r.IntN(in)))
			taps.Weight = append(taps.Weight, r.NormFloat64())
		}
		taps.Offsets = append(taps.Offsets, int32(len(taps.Index)))
	}
	return taps
}

// ResampleAlong against the sparse product in float64 on the host: random
// tables (empty rows, repeated indices, negative weights) along every axis
// of odd-sized inputs, on a transposed view (the strided path), in
// float32 and, where the device has it, float16, on every device.
func TestResampleAlongMatchesSparseProduct(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, shape := range [][]int{{7}, {3, 5}, {2, 3, 5}, {2, 1, 3, 4, 5}} {
			for axis := range shape {
				for _, dtype := range []tensor.DType{tensor.Float32, tensor.Float16} {
					if !tensor.Supports(dev, "ResampleAlong", dtype) {
						continue
					}
					t.Run(fmt.Sprintf("%v-axis%d-%v", shape, axis, dtype), func(t *testing.T) {
						out := 1 + r.IntN(9)
						taps := randomTaps(r, shape[axis], out)
						// x is base transposed on its last two axes.
						baseShape := append([]int(nil), shape...)
						n := len(shape)
						if n > 1 {
							baseShape[n-1], baseShape[n-2] = baseShape[n-2], baseShape[n-1]
						}
						g := tensor.NewGenerator(uint64(7 + axis))
						base32 := g.Randn(dev, baseShape...)
						defer base32.Release()
						base := base32.Cast(dtype)
						defer base.Release()
						x := base
						if n > 1 {
							x = base.Transpose(n-2, n-1)
							defer x.Release()
						}
						xs := testdevice.Float64s(t, x)
						y := tensor.ResampleAlong(x, axis, taps)
						defer y.Release()
						wantShape := append([]int(nil), shape...)
						wantShape[axis] = out
						require.Equal(t, wantShape, y.Shape())
						require.Equal(t, dtype, y.DType())
						outer, inner := 1, 1
						for k := range axis {
							outer *= shape[k]
						}
						for k := axis + 1; k < n; k++ {
							inner *= shape[k]
						}
						got := testdevice.Float64s(t, y)
						tol := 1e-5
						if dtype == tensor.Float16 {
							tol = 1e-2
						}
						for a := range outer {
							for j := range out {
								for b := range inner {
									want, scale := 0.0, 0.0
									for e := taps.Offsets[j]; e < taps.Offsets[j+1]; e++ {
										v := xs[(a*shape[axis]+int(taps.Index[e]))*inner+b]
										want += taps.Weight[e] * v
										scale += math.Abs(taps.Weight[e] * v)
									}
									k := (a*out+j)*inner + b
									require.InDelta(t, want, got[k], tol*(1+scale), "element %d", k)
								}
							}
						}
					})
				}
			}
		}
	})
}

// Bad tables and axes panic with an *Error naming the op and the input's
// shape, dtype and device.
func TestResampleAlongBadInput(t *testing.T) {
	dev := testdevice.CPU(t)
	x := tensor.Zeros(dev, 2, 3)
	defer x.Release()
	for _, c := range []struct {
		axis int
		taps hal.ResampleTaps
		want string
	}{
		{2, hal.ResampleTaps{Offsets: []int32{0}}, "axis 2"},
		{1, hal.ResampleTaps{Offsets: []int32{0, 1}, Index: []int32{3}, Weight: []float64{1}}, "position 3"},
		{1, hal.ResampleTaps{Offsets: []int32{0, 2}, Index: []int32{0}, Weight: []float64{1}}, "not a CSR table"},
	} {
		err := tensor.Catch(func() { tensor.ResampleAlong(x, c.axis, c.taps).Release() })
		var te *tensor.Error
		require.True(t, errors.As(err, &te), "%v", err)
		for _, s := range []string{"ResampleAlong", c.want, "[2 3]", "float32", "cpu"} {
			require.True(t, strings.Contains(err.Error(), s), "%q lacks %q", err, s)
		}
	}
}
