package haltest

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// conv2dCase is one Conv2D: src [n, c, h, w], weight [cout, c/groups,
// KH, KW], the window (OutH, OutW filled in by hal.OutputSize) and the
// layouts of src and weight.
type conv2dCase struct {
	name          string
	n, c, h, w    int
	cout, groups  int
	win           hal.Window
	lsrc, lweight layout
}

// conv2dCases cover groups (1, 2, depthwise, depthwise with a channel
// multiplier), stride, padding and dilation alone and together, non-square
// kernels and images, batches, odd channel counts, sizes that give 1×1 and
// empty outputs, no input channels, pointwise kernels (the in-place GEMM
// of a contiguous input and the unfolded one of a permuted input), output
// channels past one tile of 64 and K past several steps of 16, few
// outputs with K in the hundreds, and src and
// weight as permuted, stepped and offset views.
func conv2dCases() []conv2dCase {
	c4, w4 := contiguous, contiguous
	permutedW := layout{name: "permuted", order: []int{1, 2, 3, 0}, offset: 1}
	steppedSrc := layout{name: "stepped", step: []int{1, 2, 1, 2}, offset: 3}
	cases := []conv2dCase{
		{"1x3x7x9/k3-p1/cout5", 1, 3, 7, 9, 5, 1, window(3, 3, 1, 1, 1, 1, 1, 1), c4, w4},
		{"2x4x8x6/k3x2-s2x1-p1x0/g2", 2, 4, 8, 6, 6, 2, window(3, 2, 2, 1, 1, 0, 1, 1), nhwc, w4},
		{"2x6x9x7/k3-p1/depthwise", 2, 6, 9, 7, 6, 6, window(3, 3, 1, 1, 1, 1, 1, 1), withOffset(2), permutedW},
		{"1x3x6x5/k3-s2-p1/depthwise-x2", 1, 3, 6, 5, 6, 3, window(3, 3, 2, 2, 1, 1, 1, 1), steppedSrc, w4},
		{"1x5x6x8/k2x3-p1-d2x1/odd", 1, 5, 6, 8, 7, 1, window(2, 3, 1, 1, 1, 1, 2, 1), c4, withOffset(4)},
		{"2x3x10x7/k3-s3x2-p2x1-d2", 2, 3, 10, 7, 4, 1, window(3, 3, 3, 2, 2, 1, 2, 2), nhwc, permutedW},
		{"1x4x5x5/k5/1x1-out", 1, 4, 5, 5, 3, 1, window(5, 5, 1, 1, 0, 0, 1, 1), c4, w4},
		{"2x2x4x4/k5/empty-out", 2, 2, 4, 4, 3, 1, window(5, 5, 1, 1, 0, 0, 1, 1), c4, w4},
		{"1x0x4x4/k3/no-channels", 1, 0, 4, 4, 2, 1, window(3, 3, 1, 1, 1, 1, 1, 1), c4, w4},
		{"0x3x4x4/k3/empty-batch", 0, 3, 4, 4, 2, 1, window(3, 3, 1, 1, 1, 1, 1, 1), c4, w4},
		{"2x8x6x5/k1/pointwise", 2, 8, 6, 5, 3, 1, window(1, 1, 1, 1, 0, 0, 1, 1), withOffset(1), w4},
		{"2x8x6x5/k1/pointwise-g2", 2, 8, 6, 5, 6, 2, window(1, 1, 1, 1, 0, 0, 1, 1), c4, permutedW},
		{"2x8x6x5/k1/pointwise-nhwc", 2, 8, 6, 5, 3, 1, window(1, 1, 1, 1, 0, 0, 1, 1), nhwc, w4},
		{"2x4x5x6/k1-s2", 2, 4, 5, 6, 5, 1, window(1, 1, 2, 2, 0, 0, 1, 1), c4, w4},
		{"1x1x1x1/k1", 1, 1, 1, 1, 1, 1, window(1, 1, 1, 1, 0, 0, 1, 1), c4, w4},
		{"3x16x11x12/k3-p1/cout20", 3, 16, 11, 12, 20, 1, window(3, 3, 1, 1, 1, 1, 1, 1), c4, w4},
		{"1x7x5x5/k3-p1/cout70", 1, 7, 5, 5, 70, 1, window(3, 3, 1, 1, 1, 1, 1, 1), nhwc, w4},
		// Few outputs and a long K, the shape of a weight gradient (a
		// kernel as large as the image): a backend may split K.
		{"3x5x13x13/k11-p1/long-k", 3, 5, 13, 13, 4, 1, window(11, 11, 1, 1, 1, 1, 1, 1), c4, w4},
		{"2x48x9x11/k5-s2x1-p2-d2x1/g2/long-k", 2, 48, 9, 11, 6, 2, window(5, 5, 2, 1, 2, 2, 2, 1), nhwc, permutedW},
	}
	for i := range cases {
		cases[i].win = sized(cases[i].win, cases[i].h, cases[i].w)
	}
	return cases
}

// refConv2D is torch.nn.functional.conv2d without bias, directly in
// float64, with each element's allowed error (the dot product's bound).
func refConv2D(dt hal.DType, x, wt []float64, c conv2dCase) (want, tol []float64) {
	win := c.win
	cinG, coutG := c.c/c.groups, c.cout/c.groups
	k := cinG * win.KH * win.KW
	want = make([]float64, c.n*c.cout*win.OutH*win.OutW)
	tol = make([]float64, len(want))
	i := 0
	for b := range c.n {
		for co := range c.cout {
			g := co / coutG
			for oh := range win.OutH {
				for ow := range win.OutW {
					var sum, mag float64
					for ci := range cinG {
						for kh := range win.KH {
							for kw := range win.KW {
								y := oh*win.StrideH - win.PadH + kh*win.DilationH
								xx := ow*win.StrideW - win.PadW + kw*win.DilationW
								if y < 0 || y >= c.h || xx < 0 || xx >= c.w {
									continue
								}
								p := x[((b*c.c+g*cinG+ci)*c.h+y)*c.w+xx] * wt[((co*cinG+ci)*win.KH+kh)*win.KW+kw]
								sum += p
								mag += math.Abs(p)
							}
						}
					}
					want[i], tol[i] = sum, unitRoundoff(dt)*perTerm*float64(k)*mag
					i++
				}
			}
		}
	}
	return want, tol
}

func testConv2D(t *testing.T, s *suite, dt hal.DType) {
	for i, c := range conv2dCases() {
		t.Run(c.name+"/"+c.lsrc.name+"-"+c.lweight.name, func(t *testing.T) {
			rng := newRand(t.Name())
			g := logUniform(-4, 1, true)
			src := s.operand(t, dt, []int{c.n, c.c, c.h, c.w}, c.lsrc, bind(g, rng, dt))
			wt := s.operand(t, dt, []int{c.cout, c.c / c.groups, c.win.KH, c.win.KW}, c.lweight, bind(g, rng, dt))
			dst := s.output(t, dt, []int{c.n, c.cout, c.win.OutH, c.win.OutW}, withOffset(i%2))
			require.NoError(t, s.dev.Conv2D(dst.View, src.View, wt.View, c.win, c.groups))
			want, tol := refConv2D(dt, src.values(), wt.values(), c)
			checkWithin(t, s.arith, dt, s.result(t, dst), want, tol, nil)
		})
	}
	if dt == hal.Float32 {
		t.Run("misuse", func(t *testing.T) { testConv2DMisuse(t, s) })
	}
}

// testConv2DMisuse checks that calls breaking Conv2D's contract fail with
// hal.ErrInvalid and a message naming the op, and leave the device usable.
func testConv2DMisuse(t *testing.T, s *suite) {
	f32 := hal.Float32
	z := func(dt hal.DType, shape ...int) hal.View { return s.exact(t, dt, shape...) }
	win := window(3, 3, 1, 1, 1, 1, 1, 1)
	win.OutH, win.OutW = 5, 5
	src, wt, dst := z(f32, 2, 4, 5, 5), z(f32, 6, 2, 3, 3), z(f32, 2, 6, 5, 5)
	require.NoError(t, s.dev.Conv2D(dst, src, wt, win, 2), "the valid call the misuses start from")
	strideless := win
	strideless.StrideW = 0
	tall := win
	tall.OutH = 6
	otherType := hal.Int32
	if s.has(hal.KernelConv2D, hal.Float64) {
		otherType = hal.Float64
	}
	cases := map[string]func() error{
		"groups-0":           func() error { return s.dev.Conv2D(dst, src, wt, win, 0) },
		"groups-not-divisor": func() error { return s.dev.Conv2D(dst, src, wt, win, 3) },
		"weight-channels":    func() error { return s.dev.Conv2D(dst, src, wt, win, 1) },
		"weight-kernel":      func() error { return s.dev.Conv2D(dst, src, z(f32, 6, 2, 3, 2), win, 2) },
		"weight-rank":        func() error { return s.dev.Conv2D(dst, src, z(f32, 6, 2, 9), win, 2) },
		"src-rank":           func() error { return s.dev.Conv2D(dst, z(f32, 4, 5, 5), wt, win, 2) },
		"dst-channels":       func() error { return s.dev.Conv2D(z(f32, 2, 5, 5, 5), src, wt, win, 2) },
		"dst-window":         func() error { return s.dev.Conv2D(dst, src, wt, tall, 2) },
		"dst-batch":          func() error { return s.dev.Conv2D(z(f32, 1, 6, 5, 5), src, wt, win, 2) },
		"window-stride-0":    func() error { return s.dev.Conv2D(dst, src, wt, strideless, 2) },
		"weight-dtype":       func() error { return s.dev.Conv2D(dst, src, z(otherType, 6, 2, 3, 3), win, 2) },
		"dst-is-src":         func() error { return s.dev.Conv2D(src, src, z(f32, 4, 2, 3, 3), win, 2) },
		"dst-not-contiguous": func() error {
			v := z(f32, 2, 5, 5, 6)
			v.Shape, v.Strides = []int{2, 6, 5, 5}, []int{150, 1, 30, 6}
			return s.dev.Conv2D(v, src, wt, win, 2)
		},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			err := call()
			if assert.Error(t, err) {
				assert.True(t, errors.Is(err, hal.ErrInvalid), "want ErrInvalid, got %v", err)
				assert.True(t, strings.Contains(strings.ToLower(err.Error()), hal.KernelConv2D), "the message names the op: %v", err)
			}
		})
	}
	require.NoError(t, s.dev.Conv2D(dst, src, wt, win, 2), "the device stays usable")
}
