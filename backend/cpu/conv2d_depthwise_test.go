package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// depthwiseCases are 3×3 depthwise convolutions (groups = channels) at odd
// plane sizes (1×1 to 13×17, widths not multiples of 8), strides 1 and 2
// (and mixed), padding 0 to 2, dilation, channel multiplier 2, on
// contiguous, channel-major and channels-last inputs, plus one stride 3
// that takes the general loop.
func depthwiseCases() []convTestCase {
	nchw, cnhw, nhwc := []int{0, 1, 2, 3}, []int{1, 0, 2, 3}, []int{0, 2, 3, 1}
	dw := func(n, c, h, w, mult, s, p, d int, perm []int) convTestCase {
		return convTestCase{n, c, h, w, c * mult, c, hal.Window{KH: 3, KW: 3, StrideH: s, StrideW: s, PadH: p, PadW: p,
			DilationH: d, DilationW: d, OutH: hal.OutputSize(h, 3, s, p, d, false), OutW: hal.OutputSize(w, 3, s, p, d, false)}, perm}
	}
	var cases []convTestCase
	for _, hw := range [][2]int{{1, 1}, {2, 3}, {7, 7}, {13, 17}, {10, 10}, {20, 33}} {
		for _, s := range []int{1, 2} {
			for _, p := range []int{0, 1, 2} {
				if hal.OutputSize(hw[0], 3, s, p, 1, false) < 1 || hal.OutputSize(hw[1], 3, s, p, 1, false) < 1 {
					continue
				}
				cases = append(cases, dw(2, 3, hw[0], hw[1], 1, s, p, 1, nchw))
			}
		}
	}
	cases = append(cases,
		dw(3, 5, 13, 17, 2, 1, 1, 1, nchw), // channel multiplier 2
		dw(2, 4, 13, 17, 2, 2, 1, 1, nhwc), // ×2, stride 2, channels-last
		dw(2, 6, 9, 14, 1, 1, 1, 1, cnhw),  // channel-major
		dw(1, 3, 16, 16, 1, 2, 1, 1, nhwc), // stride 2, even size, channels-last
		dw(2, 3, 11, 19, 1, 1, 2, 2, nchw), // dilation 2
		dw(2, 3, 15, 12, 1, 2, 2, 2, cnhw), // dilation 2, stride 2: one phase per axis
		dw(2, 3, 11, 11, 1, 3, 1, 1, nchw), // stride 3: the general loop
		dw(32, 8, 5, 5, 1, 1, 1, 1, nchw),  // many small planes
	)
	c := dw(2, 3, 9, 13, 1, 1, 1, 1, nchw) // strides 2×1, padding 2×0
	c.win.StrideH, c.win.PadW = 2, 0
	c.win.OutH, c.win.OutW = hal.OutputSize(9, 3, 2, 1, 1, false), hal.OutputSize(13, 3, 1, 0, 1, false)
	return append(cases, c)
}

// TestConv2DDepthwise checks depthwise3x3 (and the general loop for what
// it does not take) through Conv2D against refConv, with checkConv's
// bounds, in float32, float16 and float64, on one and three workers, with
// the assembly kernels and with the portable loops.
func TestConv2DDepthwise(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(61, 62))
	taps, split := depthwiseTapsAsm, depthwiseSplitAsm
	defer func() { depthwiseTapsAsm, depthwiseSplitAsm = taps, split }()
	for _, path := range []string{"asm", "portable"} {
		t.Run(path, func(t *testing.T) {
			depthwiseTapsAsm, depthwiseSplitAsm = nil, nil
			if path == "asm" {
				if taps == nil || split == nil {
					t.Skip("no AVX2 and FMA")
				}
				depthwiseTapsAsm, depthwiseSplitAsm = taps, split
			}
			for _, workers := range []int{1, 3} {
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
					for _, tc := range depthwiseCases() {
						for _, dt := range []hal.DType{hal.Float32, hal.Float16, hal.Float64} {
							t.Run(fmt.Sprintf("w%d/%v/%v", workers, dt, tc), func(t *testing.T) {
								checkConv(t, h, rng, tc, dt)
							})
						}
					}
				}()
			}
		})
	}
}

// TestDepthwiseTaps checks the taps kernel on its own against float64 sums:
// lengths from 8 to 72 (the 32-wide loop, the 8-wide loop and both) and
// ones not a multiple of 8 (which fall back to the portable loop), with
// taps anywhere in the input, for the assembly and the portable loop.
func TestDepthwiseTaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	kernels := map[string]func(out, in []float32, offs *[9]int, w *[9]float32){"portable": depthwiseTaps}
	if depthwiseTapsAsm != nil {
		kernels["asm"] = depthwiseTapsAsm
	}
	for name, taps := range kernels {
		for _, n := range []int{8, 16, 24, 32, 40, 64, 72, 5, 37} {
			in := make([]float32, 200)
			for i := range in {
				in[i] = float32(rng.NormFloat64())
			}
			var offs [9]int
			var w [9]float32
			for t := range 9 {
				offs[t] = rng.IntN(len(in) - n + 1)
				w[t] = float32(rng.NormFloat64())
			}
			out := make([]float32, n)
			taps(out, in, &offs, &w)
			for j := range out {
				var want, mag float64
				for t := range 9 {
					p := float64(w[t]) * float64(in[offs[t]+j])
					want += p
					mag += math.Abs(p)
				}
				require.InDeltaf(t, want, float64(out[j]), 1e-6*mag, "%s n=%d: element %d", name, n, j)
			}
		}
	}
}

// TestDepthwiseSplit checks the stride-2 column split, with and without
// its assembly, at lengths around the 8-wide kernel's (and an even phase
// one longer than the odd one, as in a row of odd width).
func TestDepthwiseSplit(t *testing.T) {
	defer func(asm func(even, odd, src []float32) int) { depthwiseSplitAsm = asm }(depthwiseSplitAsm)
	asm := depthwiseSplitAsm
	for _, a := range []func(even, odd, src []float32) int{asm, nil} {
		depthwiseSplitAsm = a
		for _, n := range [][2]int{{1, 0}, {7, 7}, {8, 8}, {9, 8}, {16, 16}, {17, 17}, {33, 32}, {2, 1}} {
			src := make([]float32, n[0]+n[1])
			for i := range src {
				src[i] = float32(i + 1)
			}
			even, odd := make([]float32, n[0]), make([]float32, n[1])
			depthwiseSplit(even, odd, src)
			for k := range even {
				require.Equalf(t, float32(2*k+1), even[k], "asm %v, %v: even[%d]", a != nil, n, k)
			}
			for k := range odd {
				require.Equalf(t, float32(2*k+2), odd[k], "asm %v, %v: odd[%d]", a != nil, n, k)
			}
		}
	}
}
