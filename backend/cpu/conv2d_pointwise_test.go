package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// pointwiseCase is a 1×1, stride-1, unpadded Conv2D whose input is laid
// out as layout says: "nchw" contiguous, "cnhw" channel-major (the
// planes n·H·W apart), "slice" channels [2, 2+c) of a larger tensor (the
// images further apart than c planes), "gaps" planes with unused elements
// between them. Each still qualifies for the pointwise path (the planes
// are contiguous and at least H·W apart).
type pointwiseCase struct {
	n, c, h, w, cout, groups int
	layout                   string
}

func (pc pointwiseCase) String() string {
	return fmt.Sprintf("%dx%dx%dx%d-cout%d-g%d-%s", pc.n, pc.c, pc.h, pc.w, pc.cout, pc.groups, pc.layout)
}

// pointwiseCases cover output channels that are not a multiple of the
// kernels' 6 rows (1, 5, 13, 70) and more than one block of them (70 >
// 64), input channels past one kc block (300), planes narrower than one
// B panel (3×5) or not a multiple of it (7×9, 9×20), groups (several input
// channels each, and one), and products large enough to be split
// across workers.
func pointwiseCases() []pointwiseCase {
	return []pointwiseCase{
		{1, 1, 1, 1, 1, 1, "nchw"},
		{2, 3, 3, 5, 5, 1, "nchw"},
		{3, 17, 7, 9, 13, 1, "cnhw"},
		{2, 300, 9, 20, 70, 1, "nchw"},
		{2, 300, 9, 20, 7, 1, "slice"},
		{2, 16, 7, 9, 64, 1, "gaps"},
		{2, 12, 5, 13, 10, 2, "slice"},
		{3, 5, 4, 11, 10, 5, "gaps"},
		{2, 64, 24, 24, 40, 1, "nchw"},
		{3, 96, 17, 19, 64, 1, "cnhw"},
		{1, 256, 14, 14, 64, 1, "slice"},
	}
}

// view stores vals ([n, c, h, w] row-major) in pc's layout, NaN in every
// element the view does not cover.
func (pc pointwiseCase) view(h harness, dt hal.DType, vals []float64) hal.View {
	hw := pc.h * pc.w
	shape := []int{pc.n, pc.c, pc.h, pc.w}
	var strides []int
	offset := 0
	switch pc.layout {
	case "nchw":
		strides = []int{pc.c * hw, hw, pc.w, 1}
	case "cnhw":
		strides = []int{hw, pc.n * hw, pc.w, 1}
	case "slice":
		strides, offset = []int{(pc.c + 3) * hw, hw, pc.w, 1}, 2*hw
	case "gaps":
		strides, offset = []int{pc.c * (hw + 5), hw + 5, pc.w, 1}, 1
	}
	size := offset + 1
	for i, s := range shape {
		size += (s - 1) * strides[i]
	}
	return h.laidOut(dt, vals, shape, strides, offset, size+3*hw)
}

// TestConv2DPointwise checks pointwise convolutions (gemmStreamB: B
// panels packed one at a time, the next one's rows prefetched) against
// refConv in float32, float64 and float16, with each GEMM kernel, on 1,
// 2 and 7 workers.
func TestConv2DPointwise(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(41, 42))
	one := hal.Window{KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1}
	for _, workers := range []int{1, 2, 7} {
		withKernels(t, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
			for _, pc := range pointwiseCases() {
				for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
					t.Run(fmt.Sprintf("w%d/%v/%v", workers, dt, pc), func(t *testing.T) {
						win := one
						win.OutH, win.OutW = pc.h, pc.w
						tc := convTestCase{pc.n, pc.c, pc.h, pc.w, pc.cout, pc.groups, win, []int{0, 1, 2, 3}}
						xv := randn(rng, pc.n*pc.c*pc.h*pc.w)
						wv := randn(rng, pc.cout*pc.c/pc.groups)
						for _, v := range [][]float64{xv, wv} {
							for i := range v {
								v[i] = round(dt, v[i])
							}
						}
						x := pc.view(h, dt, xv)
						wt := h.view(dt, wv, pc.cout, pc.c/pc.groups, 1, 1)
						dst := h.zeros(dt, pc.n, pc.cout, pc.h, pc.w)
						require.NoError(t, h.dev.Conv2D(dst, x, wt, win, pc.groups))
						requireConv(t, dt, tc, xv, wv, h.read(dst))
					})
				}
			}
		})
	}
}

// TestConv2DPointwiseWeightGradient checks the convolution that is a
// pointwise convolution's weight gradient, as the graph runs it: the
// input [N, C, H, W] viewed as C images of N channels, the output
// gradient [N, Cout, H, W] as the weight [Cout, N, H, W] (each of its
// channels' windows contiguous but the channels Cout planes apart, which
// packWeightPanel packs a channel's run at a time), and the whole plane
// as the window. K = N·H·W crosses kc blocks mid-channel in the larger
// cases.
func TestConv2DPointwiseWeightGradient(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(43, 44))
	cnhw := []int{1, 0, 2, 3}
	for _, s := range []struct{ n, cin, cout, hh, ww int }{
		{3, 9, 5, 5, 9}, {2, 17, 7, 15, 20}, {4, 3, 13, 7, 7}, {2, 40, 6, 1, 150},
	} {
		for _, dt := range []hal.DType{hal.Float32, hal.Float64} {
			t.Run(fmt.Sprintf("%v/%+v", dt, s), func(t *testing.T) {
				win := hal.Window{KH: s.hh, KW: s.ww, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1, OutH: 1, OutW: 1}
				tc := convTestCase{s.cin, s.n, s.hh, s.ww, s.cout, 1, win, cnhw}
				xv := randn(rng, s.cin*s.n*s.hh*s.ww) // [Cin, N, H, W] as the conv reads it
				gv := randn(rng, s.cout*s.n*s.hh*s.ww)
				x := h.strided(dt, xv, []int{s.cin, s.n, s.hh, s.ww}, cnhw, 1, 0)
				g := h.strided(dt, gv, []int{s.cout, s.n, s.hh, s.ww}, cnhw, 1, 0)
				dst := h.zeros(dt, s.cin, s.cout, 1, 1)
				require.NoError(t, h.dev.Conv2D(dst, x, g, win, 1))
				requireConv(t, dt, tc, xv, gv, h.read(dst))
			})
		}
	}
}

// TestCopyRows checks the assembly panel copy at the AVX2 kernels' row
// width (64 bytes) and the AVX-512 ones' (128), from rows far apart.
func TestCopyRows(t *testing.T) {
	if !hasSIMD {
		t.Skip("copyRows needs SIMD")
	}
	for _, width := range []int{64, 128} {
		const rows, stride = 37, 301 // float32 elements between rows
		lanes := width / 4
		src := make([]float32, rows*stride+lanes)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, rows*lanes+1)
		dst[len(dst)-1] = -1
		prefetchRows(unsafe.Pointer(&src[3]), 4*stride, rows, width)
		copyRows(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[3]), 4*stride, rows, width)
		for r := range rows {
			for l := range lanes {
				require.Equal(t, src[3+r*stride+l], dst[r*lanes+l], "width %d: row %d lane %d", width, r, l)
			}
		}
		require.Equal(t, float32(-1), dst[len(dst)-1], "width %d: wrote past the panel", width)
	}
}

// BenchmarkGEMMStreamB times gemmSerial on one worker with B streamed a
// panel at a time (gemmStreamB) and in the packed-block order, on a
// pointwise convolution's image (64×3136×256), its input gradient
// (256×3136×64) and an MLP's input gradients (128×784×512, 128×512×10).
//
//	go test ./backend/cpu -run '^$' -bench GEMMStreamB
func BenchmarkGEMMStreamB(b *testing.B) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, s := range [][3]int{{64, 3136, 256}, {256, 3136, 64}, {128, 784, 512}, {128, 512, 10}} {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for _, v := range [][]float32{a, bm} {
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		for _, stream := range []bool{true, false} {
			b.Run(fmt.Sprintf("%dx%dx%d/stream=%v", m, n, k, stream), func(b *testing.B) {
				defer func(was bool) { gemmStreaming = was }(gemmStreaming)
				gemmStreaming = stream
				ker := gemmKernelFor[float32]()
				for b.Loop() {
					gemmSerial(ker, m, n, k, 1, strided[float32]{a, 0, k, 1}, strided[float32]{bm, 0, n, 1}, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}
