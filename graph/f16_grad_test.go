package graph

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// Float16 gradients: every gradient check's case, run in float16 on each
// device that runs float16 kernels (the CPU backend, and WebGPU adapters
// with shader-f16), against the same case in float64 on the CPU with its
// inputs and seed rounded to float16 first, so that only the float16
// evaluation's own rounding counts.
//
// Tolerance: |f16 − f64| ≤ f16GradTol·(|f64| + max|f64|), scaled as the
// case's float32 tolerance is (c.tol/2e-4). Every kernel stores its result
// in float16 (u = 2⁻¹¹ ≈ 4.9e-4), and a gradient goes through a few of
// them forward and back, so a handful of u relative to the largest
// gradient element; a wrong rule is off by O(1). Measured: a fifth of it
// at worst over every case, on the CPU backend and on lavapipe.
const f16GradTol = 1e-2

// f16Round rounds float64s to float16 values, on the host.
func f16Round(dev *tensor.Device, xs []float64) []float64 {
	f32 := make([]float32, len(xs))
	for i, v := range xs {
		f32[i] = float32(v)
	}
	t := tensor.FromFloat32(dev, f32, len(f32))
	defer t.Release()
	h := t.Cast(tensor.Float16)
	defer h.Release()
	back := h.Cast(tensor.Float32)
	defer back.Release()
	out, err := back.Float32s()
	if err != nil {
		panic(err)
	}
	r := make([]float64, len(out))
	for i, v := range out {
		r[i] = float64(v)
	}
	return r
}

func TestGradsFloat16(t *testing.T) {
	cpu := cpuDevice(t)
	run := func(t *testing.T, dev *tensor.Device) {
		if !tensor.Supports(dev, "Cast", tensor.Float16) {
			err := tensor.Catch(func() { tensor.Full(dev, tensor.Float16, 0, 2).Release() })
			require.True(t, errors.Is(err, hal.ErrUnsupported), "no float16 declared, so float16 must be refused: %v", err)
			t.Skipf("%v runs no float16", dev)
		}
		worst := 0.0
		for _, c := range gradCases {
			t.Run(c.name, func(t *testing.T) {
				floats, ints := c.draw()
				for i := range floats {
					if floats[i] != nil {
						floats[i] = f16Round(cpu, floats[i])
					}
				}
				n, _ := outputSize(t, c, cpu, floats, ints)
				seed := f16Round(cpu, randomLike(caseRNG(c.name+"/seed"), n))
				_, want := c.vjp(t, cpu, tensor.Float64, floats, ints, seed)
				var got [][]float64
				err := tensor.Catch(func() { _, got = c.vjp(t, dev, tensor.Float16, floats, ints, seed) })
				if errors.Is(err, hal.ErrUnsupported) {
					t.Skipf("not in float16 on %v: %v", dev, err)
				}
				require.NoError(t, err)
				tol := f16GradTol
				if c.tol != 0 {
					tol *= c.tol / 2e-4
				}
				for k := range want {
					scale := 0.0
					for _, v := range want[k] {
						scale = math.Max(scale, math.Abs(v))
					}
					for j := range want[k] {
						d := math.Abs(got[k][j] - want[k][j])
						bound := tol * (math.Abs(want[k][j]) + scale)
						if scale == 0 {
							bound = tol
						}
						worst = math.Max(worst, d/bound)
						if !(d <= bound) {
							t.Fatalf("gradient %d [%d]: float16 %.6g, float64 %.8g (|Δ| = %.3g > %.3g)", k, j, got[k][j], want[k][j], d, bound)
						}
					}
				}
			})
		}
		t.Logf("%v: worst float16 gradient error %.2g of the tolerance", dev, worst)
	}
	t.Run("cpu", func(t *testing.T) { run(t, cpu) })
	forEachWebGPU(t, run)
}
