package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// convTestCase is one Conv2D checked against refConv: src [n, c, h, w]
// stored in the axis order perm (at offset 3 when it is channel-major, 0
// otherwise, so that a read before the first element panics), weight
// [cout, c/groups, kh, kw].
type convTestCase struct {
	n, c, h, w, cout, groups int
	win                      hal.Window
	perm                     []int
}

func (tc convTestCase) String() string {
	return fmt.Sprintf("%dx%dx%dx%d-cout%d-g%d-k%dx%d-s%dx%d-p%dx%d-d%dx%d-perm%v", tc.n, tc.c, tc.h, tc.w, tc.cout, tc.groups,
		tc.win.KH, tc.win.KW, tc.win.StrideH, tc.win.StrideW, tc.win.PadH, tc.win.PadW, tc.win.DilationH, tc.win.DilationW, tc.perm)
}

// convTestCases cover the implicit-GEMM path at odd sizes (channels 1, 3,
// 5, 17; images 1, 7, 33 wide), stride, padding, dilation and groups, and
// the pixelwise orientation (windows wider than the output, as in a weight
// gradient) with full and partial panels of images, on contiguous,
// channel-major and channels-last inputs.
func convTestCases() []convTestCase {
	nchw, cnhw, nhwc := []int{0, 1, 2, 3}, []int{1, 0, 2, 3}, []int{0, 2, 3, 1}
	win := func(kh, kw, sh, sw, ph, pw, dh, dw, h, w int) hal.Window {
		return hal.Window{KH: kh, KW: kw, StrideH: sh, StrideW: sw, PadH: ph, PadW: pw, DilationH: dh, DilationW: dw,
			OutH: hal.OutputSize(h, kh, sh, ph, dh, false), OutW: hal.OutputSize(w, kw, sw, pw, dw, false)}
	}
	var cases []convTestCase
	add := func(n, c, h, w, cout, groups int, perm []int, kh, kw, sh, sw, ph, pw, dh, dw int) {
		cases = append(cases, convTestCase{n, c, h, w, cout, groups, win(kh, kw, sh, sw, ph, pw, dh, dw, h, w), perm})
	}
	for _, c := range []int{1, 3, 5, 17} {
		for _, hw := range []int{1, 7, 33} {
			add(2, c, hw, hw, 7, 1, nchw, 3, 3, 1, 1, 1, 1, 1, 1)
			add(1, c, hw, hw+2, 17, 1, nhwc, 3, 3, 2, 2, 1, 1, 1, 1)
		}
	}
	add(3, 17, 33, 7, 5, 1, nchw, 3, 2, 1, 2, 2, 1, 2, 3)      // dilation, uneven padding and strides
	add(2, 6, 7, 33, 9, 3, nchw, 3, 3, 2, 1, 1, 1, 1, 1)       // groups
	add(2, 5, 33, 33, 5, 5, cnhw, 3, 3, 1, 1, 1, 1, 1, 1)      // depthwise
	add(2, 3, 33, 7, 6, 3, nhwc, 3, 3, 2, 2, 2, 1, 2, 1)       // depthwise ×2, strided, dilated, channels-last
	add(1, 17, 7, 7, 17, 17, nchw, 5, 5, 1, 3, 4, 4, 1, 2)     // depthwise, padding past the window's reach
	add(1, 4, 7, 7, 40, 1, nchw, 1, 1, 2, 2, 0, 0, 1, 1)       // 1×1 with stride: not pointwise
	add(1, 3, 33, 33, 70, 1, nchw, 7, 7, 2, 2, 3, 3, 1, 1)     // a stem: K past one block of rows
	add(33, 2, 5, 33, 4, 1, nchw, 5, 31, 1, 1, 1, 1, 1, 1)     // pixelwise, 32 images and one
	add(33, 3, 6, 34, 5, 1, cnhw, 4, 30, 1, 1, 1, 0, 1, 1)     // pixelwise on a weight gradient's layout
	add(7, 2, 7, 33, 3, 1, nhwc, 3, 14, 2, 2, 1, 1, 1, 2)      // pixelwise, dilated and channels-last
	add(40, 17, 9, 12, 6, 1, cnhw, 9, 12, 1, 1, 0, 0, 1, 1)    // pixelwise, one output pixel
	add(34, 4, 5, 9, 4, 2, nchw, 3, 8, 1, 1, 0, 0, 1, 1)       // pixelwise with groups
	add(9, 300, 3, 3, 3, 1, nchw, 1, 1, 1, 1, 0, 0, 1, 1)      // pointwise, K past one block
	add(2, 200, 3, 9, 13, 1, cnhw, 2, 2, 1, 1, 0, 0, 1, 1)     // K past one block, several groups of rows
	add(1, 1, 1, 1, 1, 1, nchw, 1, 1, 1, 1, 0, 0, 1, 1)        // one element
	add(2, 3, 1, 33, 4, 1, nchw, 1, 3, 1, 1, 0, 1, 1, 1)       // one row
	add(2, 3, 33, 1, 4, 1, nchw, 3, 1, 1, 1, 1, 0, 1, 1)       // one column
	add(24, 3, 6, 20, 5, 1, cnhw, 4, 18, 1, 1, 1, 1, 1, 1)     // pixelwise, a panel three quarters full
	add(1, 64, 28, 28, 16, 1, cnhw, 28, 28, 1, 1, 1, 1, 1, 1)  // a first layer's weight gradient: one image, wide window
	add(8, 8, 28, 28, 16, 1, nchw, 3, 3, 1, 1, 1, 1, 1, 1)     // columns spanning images in every panel
	add(64, 16, 14, 14, 32, 1, cnhw, 14, 14, 1, 1, 1, 1, 1, 1) // the weight gradient of the demo's second layer
	add(2, 2, 3, 1, 3, 1, nchw, 2, 3, 1, 1, 1, 3, 1, 3)        // padding past whole rows of the window
	add(2, 2, 6, 5, 2, 1, nchw, 3, 2, 1, 1, 1, 0, 2, 2)        // a strided convolution's weight gradient
	add(3, 5, 33, 35, 7, 1, nchw, 3, 3, 2, 2, 1, 1, 1, 1)      // stride 2, padding at both borders
	add(2, 3, 40, 41, 16, 1, nchw, 7, 7, 2, 2, 3, 3, 1, 1)     // a ResNet stem
	add(3, 6, 11, 13, 8, 2, nchw, 3, 3, 2, 2, 2, 1, 2, 2)      // stride 2, dilated, groups, uneven padding
	add(2, 5, 9, 34, 6, 1, nchw, 1, 1, 2, 2, 0, 0, 1, 1)       // a ResNet downsample: 1×1 at stride 2
	add(5, 40, 3, 3, 13, 1, nchw, 3, 3, 1, 1, 1, 1, 1, 1)      // images smaller than a panel, K past one block
	add(3, 260, 2, 2, 7, 1, nchw, 3, 3, 1, 1, 1, 1, 1, 1)      // tiny images, K past convKMax
	add(2, 3, 17, 19, 5, 1, nchw, 3, 3, 1, 1, 0, 0, 1, 1)      // no padding: the input read in place
	add(2, 4, 17, 17, 9, 1, nchw, 5, 5, 1, 2, 2, 2, 1, 1)      // stride 2 along rows only
	add(1, 3, 16, 70, 6, 1, nchw, 3, 3, 1, 1, 1, 1, 1, 3)      // dilated along rows: segments wider than a panel
	return cases
}

// refConv is Conv2D by its definition, in float64.
func refConv(tc convTestCase, x, wt []float64) (want, mag []float64) {
	w := tc.win
	cinG, coutG := tc.c/tc.groups, tc.cout/tc.groups
	want = make([]float64, tc.n*tc.cout*w.OutH*w.OutW)
	mag = make([]float64, len(want))
	for b := range tc.n {
		for co := range tc.cout {
			gi := co / coutG
			for oh := range w.OutH {
				for ow := range w.OutW {
					var s, m float64
					for ci := range cinG {
						for kh := range w.KH {
							for kw := range w.KW {
								y := oh*w.StrideH - w.PadH + kh*w.DilationH
								z := ow*w.StrideW - w.PadW + kw*w.DilationW
								if y < 0 || y >= tc.h || z < 0 || z >= tc.w {
									continue
								}
								p := x[((b*tc.c+gi*cinG+ci)*tc.h+y)*tc.w+z] * wt[((co*cinG+ci)*w.KH+kh)*w.KW+kw]
								s += p
								m += math.Abs(p)
							}
						}
					}
					i := ((b*tc.cout+co)*w.OutH+oh)*w.OutW + ow
					want[i], mag[i] = s, m
				}
			}
		}
	}
	return want, mag
}

// convVariants are the ways TestConv2DImplicit runs each case: on 1, 2
// and 3 workers (tasks split over columns, over rows, or not at all), and
// on two workers with the assembly packing off (the portable loops) or the
// zero-padded copy off (masked loads at the borders) or both.
var convVariants = []struct {
	name          string
	workers       int
	noAsm, noPads bool
}{
	{"w2", 2, false, false},
	{"w1", 1, false, false},
	{"w3", 3, false, false},
	{"portable", 2, true, false},
	{"unpadded", 2, false, true},
	{"portable-unpadded", 2, true, true},
}

// requireConv checks got, Conv2D's output for tc in dtype dt, against
// refConv element by element, relative to the sum of the terms'
// magnitudes (1e-5 for float32, which float16 computes in, plus one
// rounding of the result for float16; 1e-13 for float64).
func requireConv(t *testing.T, dt hal.DType, tc convTestCase, xv, wv, got []float64) {
	t.Helper()
	want, mag := refConv(tc, xv, wv)
	rel := 1e-5
	if dt == hal.Float64 {
		rel = 1e-13
	}
	for i := range want {
		bound := rel*mag[i] + 1e-30
		if dt == hal.Float16 {
			bound += eps(dt) * math.Abs(want[i])
		}
		if math.Abs(got[i]-want[i]) > bound {
			t.Fatalf("element %d: got %v, want %v (Σ|terms| %v)", i, got[i], want[i], mag[i])
		}
	}
}

// TestConv2DImplicit checks every path of Conv2D against refConv with
// each GEMM microkernel, in float32 and float64, in every convVariants.
func TestConv2DImplicit(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, v := range convVariants {
		t.Run(v.name, func(t *testing.T) {
			defer func(asm func(panel, src unsafe.Pointer, rows []convRow, segs []convSeg, h, wd, shift, rowBytes, stride int, inside bool) bool, padMax int) {
				convPackRowsAsm, convPadMax = asm, padMax
			}(convPackRowsAsm, convPadMax)
			if v.noAsm {
				convPackRowsAsm = nil
			}
			if v.noPads {
				convPadMax = 0
			}
			checkConv2D(t, h, rng, v.workers)
		})
	}
}

// checkConv2D runs every convTestCases case on the given number of workers.
func checkConv2D(t *testing.T, h harness, rng *rand.Rand, workers int) {
	withKernels(t, func(t *testing.T) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
		for i, tc := range convTestCases() {
			for _, dt := range []hal.DType{hal.Float32, hal.Float64} {
				t.Run(fmt.Sprintf("%v/%v", dt, tc), func(t *testing.T) {
					xv := randn(rng, tc.n*tc.c*tc.h*tc.w)
					wv := randn(rng, tc.cout*tc.c/tc.groups*tc.win.KH*tc.win.KW)
					offset := 3
					if tc.perm[0] == 0 {
						offset = 0
					}
					x := h.strided(dt, xv, []int{tc.n, tc.c, tc.h, tc.w}, tc.perm, 1, offset)
					// Every other case stores the weight input-channel-major and
					// kernel-column-major, so that each output channel's K
					// elements are scattered (packWeightPanel's general loop, as
					// for a transposed or flipped weight in a backward pass).
					wperm := []int{0, 1, 2, 3}
					if i%2 == 1 {
						wperm = []int{1, 0, 3, 2}
					}
					wt := h.strided(dt, wv, []int{tc.cout, tc.c / tc.groups, tc.win.KH, tc.win.KW}, wperm, 1, 0)
					dst := h.zeros(dt, tc.n, tc.cout, tc.win.OutH, tc.win.OutW)
					require.NoError(t, h.dev.Conv2D(dst, x, wt, tc.win, tc.groups))
					requireConv(t, dt, tc, xv, wv, h.read(dst))
				})
			}
		}
	})
}

// TestConv2DAllocations checks that a warm Conv2D allocates nothing that
// grows with the calls: its scratch comes from pools, per worker.
func TestConv2DAllocations(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(19, 20))
	for _, tc := range []convTestCase{convTestCases()[len(convTestCases())-4], convTestCases()[len(convTestCases())-3]} {
		x := h.view(hal.Float32, randn(rng, tc.n*tc.c*tc.h*tc.w), tc.n, tc.c, tc.h, tc.w)
		wt := h.view(hal.Float32, randn(rng, tc.cout*tc.c*tc.win.KH*tc.win.KW), tc.cout, tc.c, tc.win.KH, tc.win.KW)
		dst := h.zeros(hal.Float32, tc.n, tc.cout, tc.win.OutH, tc.win.OutW)
		run := func() { require.NoError(t, h.dev.Conv2D(dst, x, wt, tc.win, 1)) }
		run()
		few := testing.AllocsPerRun(5, run)
		many := testing.AllocsPerRun(50, run)
		require.LessOrEqual(t, many, few+1, "%v: allocations per call grow with the calls", tc)
		require.LessOrEqual(t, many, 32.0, "%v: allocations per call", tc)
	}
}

// BenchmarkConv2DWeightGradient times the convolution that is the weight
// gradient of a 3×3 convolution, 64 to 64 channels on 8 images of 56×56
// with padding 1, as the graph runs it: the input [8, 64, 56, 56] viewed
// as 64 images of 8 channels, the output gradient likewise as the weight,
// and a 56×56 window giving the 3×3 kernel. GFLOPS counts the forward's
// multiply-adds.
//
//	go test ./backend/cpu -run '^$' -bench Conv2DWeightGradient
func BenchmarkConv2DWeightGradient(b *testing.B) {
	h := newHarness(b)
	rng := rand.New(rand.NewPCG(21, 22))
	const n, c, hw = 8, 64, 56
	cnhw := []int{1, 0, 2, 3}
	x := h.strided(hal.Float32, randn(rng, n*c*hw*hw), []int{c, n, hw, hw}, cnhw, 1, 0)
	g := h.strided(hal.Float32, randn(rng, n*c*hw*hw), []int{c, n, hw, hw}, cnhw, 1, 0)
	win := hal.Window{KH: hw, KW: hw, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1, OutH: 3, OutW: 3}
	dst := h.zeros(hal.Float32, c, c, 3, 3)
	for b.Loop() {
		if err := h.dev.Conv2D(dst, x, g, win, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*n*c*hw*hw*c*9*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// BenchmarkConv2DDepthwise compares the direct depthwise loop with the
// implicit GEMM on MobileNetV2-like depthwise layers (batch 32, 3×3).
//
//	go test ./backend/cpu -run '^$' -bench Conv2DDepthwise
func BenchmarkConv2DDepthwise(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, l := range []struct{ c, hw, stride int }{{48, 20, 1}, {96, 10, 2}, {144, 10, 1}, {240, 3, 1}} {
		g := convGeom{n: 32, c: l.c, h: l.hw, wd: l.hw, cout: l.c, groups: l.c, cinG: 1, coutG: 1, kg: 9}
		g.win = hal.Window{KH: 3, KW: 3, StrideH: l.stride, StrideW: l.stride, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1,
			OutH: hal.OutputSize(l.hw, 3, l.stride, 1, 1, false), OutW: hal.OutputSize(l.hw, 3, l.stride, 1, 1, false)}
		g.l = g.win.OutH * g.win.OutW
		src := make([]float32, g.n*g.c*g.h*g.wd)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		st := hal.RowMajorStrides([]int{g.n, g.c, g.h, g.wd})
		words := make([]uint64, (g.cout*9+1)/2)
		for i := range asType[float32](words)[:g.cout*9] {
			asType[float32](words)[i] = float32(rng.NormFloat64())
		}
		wt := operand{View: hal.View{DType: hal.Float32, Shape: []int{g.cout, 1, 3, 3}, Strides: hal.RowMajorStrides([]int{g.cout, 1, 3, 3})},
			words: words}
		dst := make([]float32, g.n*g.cout*g.l)
		flops := 2 * float64(g.n*g.cout*g.l*9)
		name := fmt.Sprintf("c%d-%dx%d-s%d", l.c, l.hw, l.hw, l.stride)
		b.Run(name+"/direct", func(b *testing.B) {
			for b.Loop() {
				convDepthwise(g, src, 0, st, &wt, dst)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
		b.Run(name+"/implicit-gemm", func(b *testing.B) {
			for b.Loop() {
				convImplicit(g, src, 0, st, &wt, dst)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}
