//go:build cgo

package wgpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// The conformance suite covers Conv2D's geometry; these tests force the
// two paths it cannot reach through hal.Device: K long enough to take
// several passes, and a fusion epilogue in place of the plain store.

// convRef is conv2d without bias in float64, for contiguous x and wt.
func convRef(x, wt []float64, n, c, h, w, cout, groups int, win hal.Window) []float64 {
	cinG, coutG := c/groups, cout/groups
	out := make([]float64, 0, n*cout*win.OutH*win.OutW)
	for b := range n {
		for co := range cout {
			g := co / coutG
			for oh := range win.OutH {
				for ow := range win.OutW {
					var sum float64
					for ci := range cinG {
						for kh := range win.KH {
							for kw := range win.KW {
								y := oh*win.StrideH - win.PadH + kh*win.DilationH
								xx := ow*win.StrideW - win.PadW + kw*win.DilationW
								if y >= 0 && y < h && xx >= 0 && xx < w {
									sum += x[((b*c+g*cinG+ci)*h+y)*w+xx] * wt[((co*cinG+ci)*win.KH+kh)*win.KW+kw]
								}
							}
						}
					}
					out = append(out, sum)
				}
			}
		}
	}
	return out
}

func convWindow(k, pad, h, w int) hal.Window {
	return hal.Window{KH: k, KW: k, StrideH: 1, StrideW: 1, PadH: pad, PadW: pad, DilationH: 1, DilationW: 1,
		OutH: nnConvOut(h, k, 1, pad, 1), OutW: nnConvOut(w, k, 1, pad, 1)}
}

// TestConv2DLongK runs K = 6,301·9 = 56,709, past one pass of the 16×16
// kernel (56,464), so the second pass must add to the first.
func TestConv2DLongK(t *testing.T) { forEachTestDevice(t, testConv2DLongK) }

func testConv2DLongK(t *testing.T, d *Device) {
	defer implicitConv()()
	const n, c, h, w, cout = 1, 6301, 3, 3, 3
	win := convWindow(3, 1, h, w)
	r := rand.New(rand.NewPCG(1, 2))
	x, wt := nnRandoms(r, n*c*h*w), nnRandoms(r, cout*c*9)
	pl, err := d.planConv2D(nnOutput(t, d, hal.Float32, n, cout, win.OutH, win.OutW),
		nnContig(t, d, hal.Float32, x, n, c, h, w), nnContig(t, d, hal.Float32, wt, cout, c, 3, 3), win, 1)
	require.NoError(t, err)
	require.Greater(t, pl.k, matmulChunk(pl.tile), "the case must need two passes")
	require.NoError(t, d.Conv2D(pl.out.View, pl.x.View, pl.wt.View, win, 1))
	nnNear(t, convRef(x, wt, n, c, h, w, cout, 1, win), nnGet(t, d, pl.out.View), 0.05, 1e-4, "conv2d long K")
}

// TestConv2DEpilogue records the kernel with an epilogue that writes
// relu(v) + extra[i] into its own output: every element must arrive once,
// at its row-major index in [N, Cout, OH, OW], and dst must stay untouched.
func TestConv2DEpilogue(t *testing.T) { forEachTestDevice(t, testConv2DEpilogue) }

func testConv2DEpilogue(t *testing.T, d *Device) {
	const n, c, h, w, cout, groups = 2, 6, 9, 7, 70, 2
	win := convWindow(3, 1, h, w)
	r := rand.New(rand.NewPCG(3, 4))
	x, wt := nnRandoms(r, n*c*h*w), nnRandoms(r, cout*c/groups*9)
	size := n * cout * win.OutH * win.OutW
	extra := nnRandoms(r, size)
	dst := nnOutput(t, d, hal.Float32, n, cout, win.OutH, win.OutW)
	fused := nnOutput(t, d, hal.Float32, size)
	extraV := nnContig(t, d, hal.Float32, extra, size)
	pl, err := d.planConv2D(dst, nnNHWC(t, d, x, n, c, h, w), nnContig(t, d, hal.Float32, wt, cout, c/groups, 3, 3), win, groups)
	require.NoError(t, err)
	ops, err := d.operands("test", fused, extraV)
	require.NoError(t, err)
	epi := &epilogue{
		Key: "test-relu-add",
		Decls: `@group(0) @binding(0) var<storage, read_write> fused: array<f32>;
@group(0) @binding(3) var<storage, read> extra: array<f32>;
fn epilogue(i: u32, v: f32) { fused[i] = max(v, 0.0) + extra[i]; }`,
		Outputs: []*device.Allocation{ops[0].alloc},
		Inputs:  []*device.Allocation{ops[1].alloc},
	}
	before := nnGet(t, d, dst)
	require.NoError(t, pl.record(epi, sink{d: d}))
	want := convRef(x, wt, n, c, h, w, cout, groups, win)
	for i := range want {
		want[i] = math.Max(want[i], 0) + extra[i]
	}
	nnNear(t, want, nnGet(t, d, fused), 1e-4, 1e-4, "conv2d epilogue")
	require.Equal(t, before, nnGet(t, d, dst), "with an epilogue the kernel must not write dst")
}

// TestConv2DSplitK runs a weight gradient's convolution (the image's
// batch and channels exchanged, a kernel as large as the output: few
// outputs, K = N·OH·OW): it must run in K slices and their sum, two
// dispatches, not one kernel with a handful of workgroups; with an
// epilogue, the sum takes it.
func TestConv2DSplitK(t *testing.T) { forEachTestDevice(t, testConv2DSplitK) }

func testConv2DSplitK(t *testing.T, d *Device) {
	// Two groups of 6 channels by a 13×11 kernel: K = 6·13·11 = 858 per
	// group, outputs [5, 14, 5, 5] in 2 blocks per group.
	const n, c, h, w, cout, groups = 5, 12, 15, 13, 14, 2
	win := hal.Window{KH: 13, KW: 11, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1,
		OutH: nnConvOut(h, 13, 1, 1, 1), OutW: nnConvOut(w, 11, 1, 1, 1)}
	r := rand.New(rand.NewPCG(5, 6))
	x, wt := nnRandoms(r, n*c*h*w), nnRandoms(r, cout*c/groups*13*11)
	want := convRef(x, wt, n, c, h, w, cout, groups, win)
	src := nnNHWC(t, d, x, n, c, h, w)
	weight := nnContig(t, d, hal.Float32, wt, cout, c/groups, 13, 11)
	dst := nnOutput(t, d, hal.Float32, n, cout, win.OutH, win.OutW)
	pl, err := d.planConv2D(dst, src, weight, win, groups)
	require.NoError(t, err)
	require.Greater(t, pl.splits, 1, "few blocks (%d) and K %d must split", pl.gx*pl.tilesY*pl.groups, pl.k)
	require.Equal(t, int64(2), dispatchesOf(t, d, func() { require.NoError(t, d.Conv2D(dst, src, weight, win, groups)) }))
	nnNear(t, want, nnGet(t, d, dst), 1e-4, 1e-4, "conv2d split-K")

	size := len(want)
	extra := nnRandoms(r, size)
	fused := nnOutput(t, d, hal.Float32, size)
	ops, err := d.operands("test", fused, nnContig(t, d, hal.Float32, extra, size))
	require.NoError(t, err)
	epi := &epilogue{
		Key: "test-relu-add",
		Decls: `@group(0) @binding(0) var<storage, read_write> fused: array<f32>;
@group(0) @binding(3) var<storage, read> extra: array<f32>;
fn epilogue(i: u32, v: f32) { fused[i] = max(v, 0.0) + extra[i]; }`,
		Outputs: []*device.Allocation{ops[0].alloc},
		Inputs:  []*device.Allocation{ops[1].alloc},
	}
	require.NoError(t, pl.record(epi, sink{d: d}))
	for i := range want {
		want[i] = math.Max(want[i], 0) + extra[i]
	}
	nnNear(t, want, nnGet(t, d, fused), 1e-4, 1e-4, "conv2d split-K epilogue")
}

// TestConv2DSplitKInputFreed frees the input of a split-K convolution that
// the fusion engine still holds back (waiting for an epilogue): its
// buffer is in the pool when the kernel is recorded, in the size class of
// the scratch for the partial sums, which must be another buffer.
func TestConv2DSplitKInputFreed(t *testing.T) { forEachTestDevice(t, testConv2DSplitKInputFreed) }

func testConv2DSplitKInputFreed(t *testing.T, d *Device) {
	const n, c, h, w, cout, groups = 5, 12, 15, 13, 64, 2
	win := hal.Window{KH: 13, KW: 11, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1,
		OutH: nnConvOut(h, 13, 1, 1, 1), OutW: nnConvOut(w, 11, 1, 1, 1)}
	r := rand.New(rand.NewPCG(7, 8))
	x, wt := nnRandoms(r, n*c*h*w), nnRandoms(r, cout*c/groups*13*11)
	weight := nnContig(t, d, hal.Float32, wt, cout, c/groups, 13, 11)
	dst := nnOutput(t, d, hal.Float32, n, cout, win.OutH, win.OutW)
	shape := []int{n, c, h, w}
	src := hal.View{DType: hal.Float32, Shape: shape, Strides: hal.RowMajorStrides(shape)}
	pl, err := d.planConv2D(dst, nnContig(t, d, hal.Float32, x, shape...), weight, win, groups)
	require.NoError(t, err)
	require.Greater(t, pl.splits, 1)
	scratch := int64(pl.splits) * int64(dst.Elements()) * 4
	require.GreaterOrEqual(t, scratch, int64(len(x)*4))
	src.Buf, err = d.Alloc(scratch) // the scratch's size class
	require.NoError(t, err)
	require.NoError(t, d.Write(src.Buf, nnEncode(hal.Float32, x)))

	require.NoError(t, d.Conv2D(dst, src, weight, win, groups))
	d.Free(src.Buf)
	nnNear(t, convRef(x, wt, n, c, h, w, cout, groups, win), nnGet(t, d, dst), 1e-4, 1e-4, "conv2d split-K, input freed")
}

// BenchmarkConv2D compares the Conv2D kernel with Im2Col + MatMul at sizes
// a software adapter runs quickly: go test ./backend/wgpu -run '^$' -bench Conv2D.
func BenchmarkConv2D(b *testing.B) {
	haltest.BenchmarkConv2D(b, openTestDevice(b), haltest.SmallConvLayers)
}

// implicitConv makes Conv2D run the implicit-GEMM kernel on software
// adapters too, until the returned function restores the lowering.
func implicitConv() func() {
	convImplicitOnly.Store(true)
	return func() { convImplicitOnly.Store(false) }
}

// TestConv2DViaGEMM runs convolutions through the software adapters'
// lowering (Im2Col and a batched MatMul, or the MatMul alone for a
// pointwise window) and through the implicit-GEMM kernel, against the
// float64 reference: padding, strides, dilation, uneven windows,
// channels-last images, several unfolds of a few images each, a weight
// whose channel and window axes do not merge (copied first), and what the
// lowering leaves to the kernel: groups, and fewer output pixels than a
// GEMM tile is wide. Each case checks which kernels ran.
func TestConv2DViaGEMM(t *testing.T) { forEachTestDevice(t, testConv2DViaGEMM) }

func testConv2DViaGEMM(t *testing.T, d *Device) {
	window := func(kh, kw, sh, sw, ph, pw, dh, dw, h, w int) hal.Window {
		return hal.Window{KH: kh, KW: kw, StrideH: sh, StrideW: sw, PadH: ph, PadW: pw, DilationH: dh, DilationW: dw,
			OutH: nnConvOut(h, kh, sh, ph, dh), OutW: nnConvOut(w, kw, sw, pw, dw)}
	}
	type path int
	const (
		unfolded  path = iota // Im2Col, then MatMul
		pointwise             // MatMul alone
		implicit              // the conv2d kernel
	)
	cases := []struct {
		name                 string
		n, c, h, w, cout, gr int
		win                  hal.Window
		nhwc, permutedWeight bool
		unfoldImages         int // cap the copy at this many images (0: none)
		want                 path
	}{
		{name: "pointwise", n: 3, c: 5, h: 7, w: 6, cout: 9, gr: 1, win: window(1, 1, 1, 1, 0, 0, 1, 1, 7, 6), want: pointwise},
		{name: "pointwise-nhwc", n: 2, c: 6, h: 8, w: 5, cout: 4, gr: 1, win: window(1, 1, 1, 1, 0, 0, 1, 1, 8, 5), nhwc: true, want: pointwise},
		{name: "3x3-pad", n: 2, c: 4, h: 9, w: 7, cout: 70, gr: 1, win: window(3, 3, 1, 1, 1, 1, 1, 1, 9, 7), want: unfolded},
		{name: "uneven-strided-dilated", n: 2, c: 3, h: 11, w: 10, cout: 5, gr: 1, win: window(3, 2, 2, 1, 1, 0, 2, 1, 11, 10), want: unfolded},
		{name: "1x1-stride2", n: 2, c: 3, h: 12, w: 11, cout: 6, gr: 1, win: window(1, 1, 2, 2, 0, 0, 1, 1, 12, 11), want: unfolded},
		{name: "3x3-nhwc", n: 2, c: 5, h: 6, w: 8, cout: 7, gr: 1, win: window(3, 3, 1, 1, 1, 1, 1, 1, 6, 8), nhwc: true, want: unfolded},
		{name: "unfolds-of-2-images", n: 5, c: 3, h: 7, w: 6, cout: 4, gr: 1, win: window(3, 3, 1, 1, 1, 1, 1, 1, 7, 6), unfoldImages: 2, want: unfolded},
		{name: "few-pixels", n: 3, c: 4, h: 7, w: 7, cout: 5, gr: 1, win: window(3, 3, 1, 1, 0, 0, 1, 1, 7, 7), want: implicit},
		{name: "groups", n: 2, c: 6, h: 6, w: 5, cout: 4, gr: 2, win: window(3, 3, 1, 1, 1, 1, 1, 1, 6, 5), want: implicit},
		{name: "weight-axes-apart", n: 2, c: 3, h: 7, w: 6, cout: 4, gr: 1, win: window(3, 3, 1, 1, 1, 1, 1, 1, 7, 6), permutedWeight: true, want: unfolded},
	}
	for _, tc := range cases {
		for _, forced := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/implicit=%t", tc.name, forced), func(t *testing.T) {
				if forced {
					defer implicitConv()()
				}
				r := rand.New(rand.NewPCG(uint64(tc.n*1000+tc.c), uint64(tc.cout)))
				cin := tc.c / tc.gr
				x, wt := nnRandoms(r, tc.n*tc.c*tc.h*tc.w), nnRandoms(r, tc.cout*cin*tc.win.KH*tc.win.KW)
				src := nnContig(t, d, hal.Float32, x, tc.n, tc.c, tc.h, tc.w)
				if tc.nhwc {
					src = nnNHWC(t, d, x, tc.n, tc.c, tc.h, tc.w)
				}
				kh, kw := tc.win.KH, tc.win.KW
				weight := nnContig(t, d, hal.Float32, wt, tc.cout, cin, kh, kw)
				if tc.permutedWeight {
					// Stored [cout, KH, KW, C]: C no longer merges with KH and KW.
					weight = nnPut(t, d, hal.Float32, wt, []int{tc.cout, cin, kh, kw}, []int{kh * kw * cin, 1, kw * cin, cin}, 0)
				}
				if tc.unfoldImages > 0 {
					convUnfoldBytes.Store(int64(tc.unfoldImages * cin * kh * kw * tc.win.OutH * tc.win.OutW * 4))
					defer convUnfoldBytes.Store(0)
				}
				dst := nnOutput(t, d, hal.Float32, tc.n, tc.cout, tc.win.OutH, tc.win.OutW)
				names, stop := watchKernels(d)
				require.NoError(t, d.Conv2D(dst, src, weight, tc.win, tc.gr))
				require.NoError(t, d.Sync())
				stop()
				nnNear(t, convRef(x, wt, tc.n, tc.c, tc.h, tc.w, tc.cout, tc.gr, tc.win), nnGet(t, d, dst), 1e-4, 1e-4, tc.name)

				var im2col, conv, matmul int
				for _, name := range names() {
					switch {
					case strings.HasPrefix(name, "im2col/"):
						im2col++
					case strings.HasPrefix(name, "conv2d/"):
						conv++
					case strings.HasPrefix(name, "matmul"):
						matmul++
					}
				}
				want := tc.want
				if forced || d.hardwareGEMM() {
					want = implicit
				}
				switch want {
				case implicit:
					assert.Zero(t, im2col+matmul, "the implicit kernel alone: %v", names())
					assert.NotZero(t, conv, "the implicit kernel: %v", names())
				case pointwise:
					assert.Zero(t, im2col+conv, "a MatMul alone: %v", names())
					assert.NotZero(t, matmul, "a MatMul: %v", names())
				case unfolded:
					unfolds := 1
					if tc.unfoldImages > 0 {
						unfolds = (tc.n + tc.unfoldImages - 1) / tc.unfoldImages
					}
					assert.Equal(t, unfolds, im2col, "unfolds: %v", names())
					assert.Zero(t, conv, "no implicit kernel: %v", names())
					assert.GreaterOrEqual(t, matmul, unfolds, "a MatMul per unfold: %v", names())
				}
			})
		}
	}
}
