package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// wideRows uploads vals [n, c, h, w] with every row extra elements longer
// than w (NaN there, so a read past a row's end shows), after 2 leading
// NaNs: rows contiguous, planes not.
func wideRows(hr harness, dt hal.DType, vals []float64, n, c, h, w, extra int) hal.View {
	const off = 2
	rw := w + extra
	store := make([]float64, off+n*c*h*rw)
	for i := range store {
		store[i] = math.NaN()
	}
	for p := range n * c * h {
		copy(store[off+p*rw:off+p*rw+w], vals[p*w:(p+1)*w])
	}
	return hal.View{Buf: hr.buffer(dt, store), DType: dt, Offset: off, Shape: []int{n, c, h, w},
		Strides: []int{c * h * rw, h * rw, rw, 1}}
}

// TestConv2DDirectPaths checks convDirect (tiny K) and convKernelGradient
// (a tiny-K layer's weight gradient) against refConv, in float32 and
// float64, with every GEMM microkernel: odd sizes, padding wider than the
// window's reach, dilation, uneven windows, more output channels than
// two A panels, channel-major and row-padded inputs, and the permuted
// gradient as the weight. Each case asserts that it takes the path it is
// meant to test.
func TestConv2DDirectPaths(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(29, 30))
	nchw, cnhw := []int{0, 1, 2, 3}, []int{1, 0, 2, 3}
	win := func(kh, kw, sh, sw, ph, pw, dh, dw, hh, ww int) hal.Window {
		return hal.Window{KH: kh, KW: kw, StrideH: sh, StrideW: sw, PadH: ph, PadW: pw, DilationH: dh, DilationW: dw,
			OutH: hal.OutputSize(hh, kh, sh, ph, dh, false), OutW: hal.OutputSize(ww, kw, sw, pw, dw, false)}
	}
	type pathCase struct {
		convTestCase
		wperm  []int // storage order of the weight [cout, c, kh, kw]
		extra  int   // elements past each input row (0: use perm)
		direct bool  // convDirect, else convKernelGradient
	}
	var cases []pathCase
	add := func(direct bool, n, c, hh, ww, cout int, perm, wperm []int, extra int, w hal.Window) {
		cases = append(cases, pathCase{convTestCase{n, c, hh, ww, cout, 1, w, perm}, wperm, extra, direct})
	}
	add(true, 3, 1, 28, 28, 16, nchw, nchw, 0, win(3, 3, 1, 1, 1, 1, 1, 1, 28, 28))     // the demo's first layer
	add(true, 2, 1, 5, 9, 17, nchw, nchw, 0, win(3, 3, 1, 1, 1, 1, 1, 1, 5, 9))         // odd, three A panels
	add(true, 2, 3, 7, 11, 5, cnhw, nchw, 0, win(3, 3, 1, 1, 2, 2, 2, 2, 7, 11))        // RGB, dilated, channel-major
	add(true, 1, 2, 9, 6, 7, nchw, nchw, 3, win(2, 3, 1, 1, 0, 1, 1, 1, 9, 6))          // uneven window, padded rows
	add(true, 2, 1, 12, 13, 6, nchw, cnhw, 0, win(5, 5, 1, 1, 0, 0, 1, 1, 12, 13))      // K = 25, no padding, strided weight
	add(true, 1, 1, 3, 3, 2, nchw, nchw, 0, win(3, 3, 1, 1, 3, 3, 1, 1, 3, 3))          // padding past the window's reach
	add(true, 1, 1, 1, 40, 3, nchw, nchw, 1, win(1, 3, 1, 1, 0, 1, 1, 1, 1, 40))        // one row
	add(false, 1, 64, 28, 28, 16, cnhw, cnhw, 0, win(28, 28, 1, 1, 1, 1, 1, 1, 28, 28)) // the demo's first weight gradient
	add(false, 3, 5, 9, 13, 7, cnhw, cnhw, 0, win(8, 11, 1, 1, 1, 2, 1, 1, 9, 13))      // odd, uneven padding
	add(false, 2, 3, 11, 12, 4, nchw, cnhw, 2, win(5, 9, 2, 2, 1, 1, 1, 1, 11, 12))     // a strided layer's gradient
	add(false, 1, 1, 8, 8, 1, nchw, nchw, 0, win(8, 8, 1, 1, 0, 0, 1, 1, 8, 8))         // one output pixel
	withKernels(t, func(t *testing.T) {
		for _, tc := range cases {
			wst := hal.RowMajorStrides([]int{tc.cout, tc.c, tc.win.KH, tc.win.KW})
			g := convGeom{n: tc.n, c: tc.c, h: tc.h, wd: tc.w, cout: tc.cout, groups: 1, cinG: tc.c, coutG: tc.cout,
				kg: tc.c * tc.win.KH * tc.win.KW, l: tc.win.OutH * tc.win.OutW, win: tc.win}
			if tc.direct {
				require.True(t, useDirect(g, []int{0, 0, 0, 1}), "%v does not take convDirect", tc)
			} else {
				if tc.wperm[0] != 0 {
					wst = []int{tc.win.KH * tc.win.KW, tc.cout * tc.win.KH * tc.win.KW, tc.win.KW, 1}
				}
				// The portable kernel's B panels are 4 wide: from 2 images
				// on, the pixelwise orientation fills them.
				if nr := gemmKernelFor[float32]().nr; 2*tc.n < nr {
					require.True(t, useKernelGradient(g, []int{0, 0, 0, 1}, wst, nr), "%v does not take convKernelGradient", tc)
				}
			}
			for _, dt := range []hal.DType{hal.Float32, hal.Float64} {
				t.Run(fmt.Sprintf("%v/%v", dt, tc), func(t *testing.T) {
					xv := randn(rng, tc.n*tc.c*tc.h*tc.w)
					wv := randn(rng, tc.cout*tc.c*tc.win.KH*tc.win.KW)
					var x hal.View
					if tc.extra > 0 {
						x = wideRows(h, dt, xv, tc.n, tc.c, tc.h, tc.w, tc.extra)
					} else {
						x = h.strided(dt, xv, []int{tc.n, tc.c, tc.h, tc.w}, tc.perm, 1, 3)
					}
					wt := h.strided(dt, wv, []int{tc.cout, tc.c, tc.win.KH, tc.win.KW}, tc.wperm, 1, 1)
					dst := h.zeros(dt, tc.n, tc.cout, tc.win.OutH, tc.win.OutW)
					require.NoError(t, h.dev.Conv2D(dst, x, wt, tc.win, 1))
					requireConv(t, dt, tc.convTestCase, xv, wv, h.read(dst))
				})
			}
		}
	})
}
