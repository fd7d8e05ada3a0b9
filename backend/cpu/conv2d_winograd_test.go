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

// withWinograd runs f with winogradMode set to mode, restoring it after.
func withWinograd(t testing.TB, mode int32) {
	old := winogradMode.Swap(mode)
	t.Cleanup(func() { winogradMode.Store(old) })
}

// winogradCase is a 3×3, stride-1 convolution case: src [n, c, h, w]
// stored in axis order perm, padding ph×pw, groups.
func winogradCase(n, c, h, w, cout, groups, ph, pw int, perm []int) convTestCase {
	win := hal.Window{KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: ph, PadW: pw, DilationH: 1, DilationW: 1,
		OutH: hal.OutputSize(h, 3, 1, ph, 1, false), OutW: hal.OutputSize(w, 3, 1, pw, 1, false)}
	return convTestCase{n, c, h, w, cout, groups, win, perm}
}

// winogradCases cover tiles that overhang the output's edge (sizes not
// multiples of 4, images smaller than one tile), padding 0, 1, 2 and
// different along the two axes, batches 1 and 3, channel counts that are
// not multiples of the microkernel's mr and nr (but at least 16 input
// channels per group, below which Winograd does not apply), more input
// channels than one K block (300 > kc), groups, and channel-major and
// channels-last input views at an offset.
func winogradCases() []convTestCase {
	nchw, cnhw, nhwc := []int{0, 1, 2, 3}, []int{1, 0, 2, 3}, []int{0, 2, 3, 1}
	return []convTestCase{
		winogradCase(1, 17, 9, 11, 19, 1, 1, 1, nchw),
		winogradCase(3, 16, 13, 10, 5, 1, 0, 0, nchw),
		winogradCase(3, 16, 8, 8, 16, 1, 1, 1, nchw),
		winogradCase(1, 19, 1, 1, 7, 1, 1, 1, nchw),  // one pixel: one tile, mostly padding
		winogradCase(3, 17, 2, 3, 13, 1, 2, 2, nchw), // 2×3 images, padding 2
		winogradCase(1, 16, 2, 3, 4, 1, 1, 2, nhwc),  // asymmetric padding
		winogradCase(3, 18, 7, 12, 33, 1, 2, 0, cnhw),
		winogradCase(1, 300, 6, 5, 8, 1, 1, 1, nchw), // K past one block
		winogradCase(3, 32, 11, 9, 10, 2, 1, 1, nhwc),
		winogradCase(1, 33, 30, 30, 35, 1, 1, 1, cnhw),
	}
}

// checkConv runs tc on the device in dtype dt and compares it with refConv
// on the same (dtype-rounded) values (requireConv's bounds).
func checkConv(t *testing.T, h harness, rng *rand.Rand, tc convTestCase, dt hal.DType) {
	t.Helper()
	xv := randn(rng, tc.n*tc.c*tc.h*tc.w)
	wv := randn(rng, tc.cout*tc.c/tc.groups*9)
	for i := range xv {
		xv[i] = round(dt, xv[i])
	}
	for i := range wv {
		wv[i] = round(dt, wv[i])
	}
	offset := 3
	if tc.perm[0] == 0 {
		offset = 0
	}
	x := h.strided(dt, xv, []int{tc.n, tc.c, tc.h, tc.w}, tc.perm, 1, offset)
	wt := h.view(dt, wv, tc.cout, tc.c/tc.groups, 3, 3)
	dst := h.zeros(dt, tc.n, tc.cout, tc.win.OutH, tc.win.OutW)
	require.NoError(t, h.dev.Conv2D(dst, x, wt, tc.win, tc.groups))
	requireConv(t, dt, tc, xv, wv, h.read(dst))
}

// TestConv2DWinograd checks the Winograd path (forced) against refConv on
// every case, with each GEMM microkernel, in float32 and float16, on one
// and three workers, and with blocks of one panel of tiles so that a
// convolution spans many blocks and the last one is partly empty; with
// large blocks, also without the zero-padded input copy (padMax 0), so
// that gather's edge and interior paths both run on images where the
// copy would be made, and without the assembly gather (asm false), so
// that the portable gather runs from the copy.
func TestConv2DWinograd(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(41, 42))
	withWinograd(t, winogradForce)
	defer func(b, p int, g func([]float32, int, []float32, *[8]int, int)) {
		winogradBlockBytes, convPadMax, gatherPatchesF32 = b, p, g
	}(winogradBlockBytes, convPadMax, gatherPatchesF32)
	padMax, asmGather := convPadMax, gatherPatchesF32
	withKernels(t, func(t *testing.T) {
		for _, workers := range []int{1, 3, 16} {
			for _, v := range []struct {
				blockBytes, padMax int
				asm                bool
			}{{1, padMax, true}, {1 << 20, padMax, true}, {1 << 20, 0, true}, {1 << 20, padMax, false}} {
				winogradBlockBytes, convPadMax, gatherPatchesF32 = v.blockBytes, v.padMax, nil
				if v.asm {
					gatherPatchesF32 = asmGather
				}
				for _, tc := range winogradCases() {
					for _, dt := range []hal.DType{hal.Float32, hal.Float16} {
						t.Run(fmt.Sprintf("w%d/b%d/pad%d/asm%v/%v/%v", workers, v.blockBytes, v.padMax, v.asm, dt, tc), func(t *testing.T) {
							defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
							before := winogradRuns.Load()
							checkConv(t, h, rng, tc, dt)
							require.Equal(t, before+1, winogradRuns.Load(), "the Winograd path did not run")
						})
					}
				}
			}
		}
	})
}

// TestConv2DWinogradSplit checks convolutions with fewer blocks of tiles
// than workers, whose products are cut by output channels over a V that
// the workers transform together (runSplit), against refConv, with each
// kernel, on 3, 7 and 16 workers: one group, two groups, a batch of two,
// output channels not a multiple of mr.
func TestConv2DWinogradSplit(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(43, 44))
	withWinograd(t, winogradForce)
	nchw, nhwc := []int{0, 1, 2, 3}, []int{0, 2, 3, 1}
	withKernels(t, func(t *testing.T) {
		for _, workers := range []int{3, 7, 16} {
			for _, tc := range []convTestCase{
				// At most four tiles per image: one or two blocks for
				// every kernel's nr, each of them worth several workers.
				winogradCase(1, 128, 8, 8, 128, 1, 1, 1, nchw),
				winogradCase(1, 128, 7, 7, 192, 2, 1, 1, nhwc),
				winogradCase(2, 96, 5, 6, 100, 1, 1, 0, nchw),
			} {
				for _, dt := range []hal.DType{hal.Float32, hal.Float16} {
					t.Run(fmt.Sprintf("w%d/%v/%v", workers, dt, tc), func(t *testing.T) {
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
						before := winogradSplits.Load()
						checkConv(t, h, rng, tc, dt)
						require.Equal(t, before+1, winogradSplits.Load(), "the blocks were not split")
					})
				}
			}
		}
	})
}

// TestWinogradRowSplits checks the choice of output-channel ranges: none
// while the blocks fill the workers, and otherwise a count that leaves the
// most loaded worker fewer panels than whole blocks would.
func TestWinogradRowSplits(t *testing.T) {
	require.Equal(t, 1, winogradRowSplits(16, 16, 43))
	require.Equal(t, 1, winogradRowSplits(4, 13, 43))
	require.Equal(t, 4, winogradRowSplits(16, 4, 43)) // ResNet's 14×14 at batch 8 on 16 cores
	for _, tc := range [][3]int{{16, 4, 43}, {16, 13, 22}, {7, 2, 9}, {64, 1, 3}, {16, 3, 1}} {
		workers, tasks, panels := tc[0], tc[1], tc[2]
		rs := winogradRowSplits(workers, tasks, panels)
		require.True(t, rs >= 1 && rs <= panels, "%v: %d", tc, rs)
		require.LessOrEqual(t, ceilDiv(tasks*rs, workers)*ceilDiv(panels, rs), ceilDiv(tasks, workers)*panels, "%v: %d", tc, rs)
	}
}

// TestConv2DWinogradDispatch checks which convolutions conv2d sends to
// the Winograd path: by default 3×3, stride-1, undilated float32 layers
// with at least 16 channels per group in and out, 32 tiles and tiles a
// third full; never float64 or other windows, and nothing when
// WEBTENSOR_CONV_WINOGRAD=0 turns it off.
func TestConv2DWinogradDispatch(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(43, 44))
	nchw := []int{0, 1, 2, 3}
	resnet := winogradCase(4, 16, 12, 12, 24, 1, 1, 1, nchw) // 36 tiles
	strided := resnet
	strided.win.StrideH, strided.win.StrideW = 2, 2
	strided.win.OutH, strided.win.OutW = hal.OutputSize(12, 3, 2, 1, 1, false), hal.OutputSize(12, 3, 2, 1, 1, false)
	dilated := resnet
	dilated.win.DilationH, dilated.win.OutH = 2, hal.OutputSize(12, 3, 1, 1, 2, false)
	for _, c := range []struct {
		name string
		mode int32
		tc   convTestCase
		dt   hal.DType
		want bool
	}{
		{"resnet-like", winogradAuto, resnet, hal.Float32, true},
		{"float16", winogradAuto, resnet, hal.Float16, true},
		{"float64", winogradForce, resnet, hal.Float64, false},
		{"off", winogradOff, resnet, hal.Float32, false},
		{"few-channels", winogradAuto, winogradCase(4, 8, 12, 12, 24, 1, 1, 1, nchw), hal.Float32, false},
		{"few-channels-forced", winogradForce, winogradCase(4, 8, 12, 12, 24, 1, 1, 1, nchw), hal.Float32, false},
		{"few-tiles-forced", winogradForce, winogradCase(1, 16, 2, 2, 16, 1, 1, 1, nchw), hal.Float32, true},
		{"few-tiles", winogradAuto, winogradCase(1, 16, 12, 12, 24, 1, 1, 1, nchw), hal.Float32, false},
		{"3x3-images", winogradAuto, winogradCase(32, 16, 3, 3, 16, 1, 1, 1, nchw), hal.Float32, true},
		{"2x2-images", winogradAuto, winogradCase(32, 16, 2, 2, 16, 1, 1, 1, nchw), hal.Float32, false},
		{"grouped", winogradAuto, winogradCase(4, 32, 12, 12, 32, 2, 1, 1, nchw), hal.Float32, true},
		{"stride-2", winogradForce, strided, hal.Float32, false},
		{"dilated", winogradForce, dilated, hal.Float32, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			withWinograd(t, c.mode)
			before := winogradRuns.Load()
			if c.dt == hal.Float64 {
				// float64 keeps its own bound; only the path matters here.
				x := h.view(c.dt, randn(rng, c.tc.n*c.tc.c*c.tc.h*c.tc.w), c.tc.n, c.tc.c, c.tc.h, c.tc.w)
				wt := h.view(c.dt, randn(rng, c.tc.cout*c.tc.c*9), c.tc.cout, c.tc.c, 3, 3)
				dst := h.zeros(c.dt, c.tc.n, c.tc.cout, c.tc.win.OutH, c.tc.win.OutW)
				require.NoError(t, h.dev.Conv2D(dst, x, wt, c.tc.win, 1))
			} else {
				checkConv(t, h, rng, c.tc, c.dt)
			}
			require.Equal(t, c.want, winogradRuns.Load() > before)
		})
	}
}

// TestConv2DWinogradAccuracy measures the worst error relative to
// Σ|terms| of the Winograd and implicit-GEMM paths on random N(0,1) data
// and weights with 16 to 512 input channels, and requires Winograd's to
// stay within the float32 bound of TestConv2DImplicit (1e-5).
func TestConv2DWinogradAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("float64 reference over 512 channels")
	}
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(45, 46))
	for _, c := range []int{16, 64, 256, 512} {
		n := max(1, 64/c)
		tc := winogradCase(n, c, 12, 12, 24, 1, 1, 1, []int{0, 1, 2, 3})
		xv, wv := randn(rng, n*c*12*12), randn(rng, 24*c*9)
		x := h.view(hal.Float32, xv, n, c, 12, 12)
		wt := h.view(hal.Float32, wv, 24, c, 3, 3)
		want, mag := refConv(tc, xv, wv)
		worst := map[int32]float64{}
		for _, mode := range []int32{winogradForce, winogradOff} {
			withWinograd(t, mode)
			dst := h.zeros(hal.Float32, n, 24, 12, 12)
			require.NoError(t, h.dev.Conv2D(dst, x, wt, tc.win, 1))
			for i, g := range h.read(dst) {
				worst[mode] = max(worst[mode], math.Abs(g-want[i])/mag[i])
			}
		}
		t.Logf("C=%d: worst |error| / Σ|terms|: Winograd F(4,3) %.3g, implicit GEMM %.3g", c, worst[winogradForce], worst[winogradOff])
		require.Less(t, worst[winogradForce], 1e-5)
	}
}

// TestConv2DWinogradAllocations checks that a warm Winograd convolution
// allocates nothing that grows with the calls.
func TestConv2DWinogradAllocations(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(47, 48))
	withWinograd(t, winogradForce)
	tc := winogradCase(2, 32, 20, 20, 32, 1, 1, 1, []int{0, 1, 2, 3})
	x := h.view(hal.Float32, randn(rng, tc.n*tc.c*tc.h*tc.w), tc.n, tc.c, tc.h, tc.w)
	wt := h.view(hal.Float32, randn(rng, tc.cout*tc.c*9), tc.cout, tc.c, 3, 3)
	dst := h.zeros(hal.Float32, tc.n, tc.cout, tc.win.OutH, tc.win.OutW)
	before := winogradRuns.Load()
	run := func() { require.NoError(t, h.dev.Conv2D(dst, x, wt, tc.win, 1)) }
	run()
	few := testing.AllocsPerRun(5, run)
	many := testing.AllocsPerRun(50, run)
	require.Greater(t, winogradRuns.Load(), before)
	require.LessOrEqual(t, many, few+1, "allocations per call grow with the calls")
	require.LessOrEqual(t, many, 32.0, "allocations per call")
}

// BenchmarkConv2DWinograd compares the Winograd path with the implicit
// GEMM on 3×3, stride-1, padding-1 layers: ResNet-50's first three
// stages at batch 8, the reduced-width ResNet-18 of the onnx benchmark
// (40×40 inputs) and the demo CNN's second layer at batch 32. Its rows
// set useWinograd's thresholds.
//
//	go test ./backend/cpu -run '^$' -bench Conv2DWinograd
func BenchmarkConv2DWinograd(b *testing.B) {
	rng := rand.New(rand.NewPCG(49, 50))
	for _, l := range []struct{ n, c, hw, cout int }{
		{8, 64, 56, 64}, {8, 128, 28, 128}, {8, 256, 14, 256},
		{32, 16, 10, 16}, {32, 32, 5, 32}, {32, 64, 3, 64}, {32, 128, 2, 128},
		{32, 16, 14, 32}, {32, 32, 14, 16}, {8, 16, 28, 16}, {8, 32, 7, 32}, {8, 512, 7, 512},
	} {
		g := convGeom{n: l.n, c: l.c, h: l.hw, wd: l.hw, cout: l.cout, groups: 1, cinG: l.c, coutG: l.cout, kg: l.c * 9}
		g.win = hal.Window{KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1, OutH: l.hw, OutW: l.hw}
		g.l = l.hw * l.hw
		src := make([]float32, g.n*g.c*g.h*g.wd)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		st := hal.RowMajorStrides([]int{g.n, g.c, g.h, g.wd})
		words := make([]uint64, (g.cout*g.c*9+1)/2)
		for i := range asType[float32](words)[:g.cout*g.c*9] {
			asType[float32](words)[i] = float32(rng.NormFloat64())
		}
		wt := operand{View: hal.View{DType: hal.Float32, Shape: []int{g.cout, g.c, 3, 3}, Strides: hal.RowMajorStrides([]int{g.cout, g.c, 3, 3})},
			words: words}
		dst := make([]float32, g.n*g.cout*g.l)
		flops := 2 * float64(g.n*g.cout*g.l*g.c*9)
		name := fmt.Sprintf("n%d-%dto%d-%dx%d", l.n, l.c, l.cout, l.hw, l.hw)
		for _, path := range []struct {
			name string
			run  func(convGeom, []float32, int, []int, *operand, []float32)
		}{{"winograd", convWinograd[float32]}, {"implicit-gemm", convImplicit[float32]}} {
			b.Run(name+"/"+path.name, func(b *testing.B) {
				for b.Loop() {
					path.run(g, src, 0, st, &wt, dst)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}

// TestWinogradTransforms checks the lane transforms, portable and
// assembly, and the weight transform against Bᵀ, Aᵀ and G written out as
// matrices (Lavin and Gray's, points 0, ±1, ±2, ∞), in float64, on 16
// lanes of random rows at strides wider than a row.
func TestWinogradTransforms(t *testing.T) {
	bt := [][]float64{
		{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
		{0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}}
	at := [][]float64{{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}
	g := [][]float64{{1. / 4, 0, 0}, {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
		{1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}}
	rng := rand.New(rand.NewPCG(51, 52))
	const n, ss, ds = 16, 19, 21
	src := make([]float32, 6*ss)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	check := func(name string, m [][]float64, run func(dst []float32)) {
		dst := make([]float32, len(m)*ds)
		run(dst)
		for r, row := range m {
			for l := range n {
				var want, mag float64
				for k, c := range row {
					want += c * float64(src[k*ss+l])
					mag += math.Abs(c * float64(src[k*ss+l]))
				}
				require.InDeltaf(t, want, float64(dst[r*ds+l]), 4*eps(hal.Float32)*mag, "%s: row %d lane %d", name, r, l)
			}
		}
	}
	check("input/go", bt, func(dst []float32) { inputLanesGo(dst, ds, src, ss, n) })
	check("output/go", at, func(dst []float32) { outputLanesGo(dst, ds, src, ss, n) })
	if inputLanesF32 != nil {
		check("input/asm", bt, func(dst []float32) { inputLanesF32(dst, ds, src, ss, n) })
		check("output/asm", at, func(dst []float32) { outputLanesF32(dst, ds, src, ss, n) })
	}
	x := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	u0, u1, u2, u3, u4, u5 := weightTransform(x[0], x[1], x[2])
	for r, got := range []float64{u0, u1, u2, u3, u4, u5} {
		want := g[r][0]*x[0] + g[r][1]*x[1] + g[r][2]*x[2]
		require.InDelta(t, want, got, 1e-15, "G row %d", r)
	}
}
