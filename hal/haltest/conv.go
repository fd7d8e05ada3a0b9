package haltest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// convCase is an image batch and a window, with OutH, OutW filled in by
// hal.OutputSize (floor, as a convolution).
type convCase struct {
	name       string
	n, c, h, w int
	win        hal.Window
	// extraH and extraW grow Col2Im's dst past the window's reach, as a
	// transposed convolution's output padding does.
	extraH, extraW int
}

func window(kh, kw, sh, sw, ph, pw, dh, dw int) hal.Window {
	return hal.Window{KH: kh, KW: kw, StrideH: sh, StrideW: sw, PadH: ph, PadW: pw, DilationH: dh, DilationW: dw}
}

// sized sets w's output size for an h×wd input (floor mode).
func sized(w hal.Window, h, wd int) hal.Window {
	w.OutH = hal.OutputSize(h, w.KH, w.StrideH, w.PadH, w.DilationH, false)
	w.OutW = hal.OutputSize(wd, w.KW, w.StrideW, w.PadW, w.DilationW, false)
	return w
}

// convCases cover stride, padding and dilation alone and together, on
// non-square kernels and images, with batch and channels above 1.
func convCases() []convCase {
	cases := []convCase{
		{"1x1x5x5/k3", 1, 1, 5, 5, window(3, 3, 1, 1, 0, 0, 1, 1), 0, 0},
		{"2x3x7x9/k3x2-s2x1-p1x0", 2, 3, 7, 9, window(3, 2, 2, 1, 1, 0, 1, 1), 0, 0},
		{"1x2x8x6/k2x3-p1-d2x1", 1, 2, 8, 6, window(2, 3, 1, 1, 1, 1, 2, 1), 0, 0},
		{"2x1x10x7/k3-s3x2-p2x1-d2", 2, 1, 10, 7, window(3, 3, 3, 2, 2, 1, 2, 2), 0, 0},
		{"1x1x1x1/k1", 1, 1, 1, 1, window(1, 1, 1, 1, 0, 0, 1, 1), 0, 0},
		{"1x3x4x4/k4-full", 1, 3, 4, 4, window(4, 4, 1, 1, 0, 0, 1, 1), 0, 0},
		{"2x2x5x6/k1-s2", 2, 2, 5, 6, window(1, 1, 2, 2, 0, 0, 1, 1), 0, 0},
		{"1x2x3x3/k3-p2", 1, 2, 3, 3, window(3, 3, 1, 1, 2, 2, 1, 1), 0, 0},
		{"2x2x6x5/k3-s2-output-padding", 2, 2, 6, 5, window(3, 3, 2, 2, 1, 1, 1, 1), 1, 1},
		{"1x1x4x4/k5-empty", 1, 1, 4, 4, window(5, 5, 1, 1, 0, 0, 1, 1), 0, 0},
	}
	for i := range cases {
		cases[i].win = sized(cases[i].win, cases[i].h, cases[i].w)
	}
	return cases
}

// im2colIndex calls fn(row, col, h, w) for every column element of image
// plane geometry h×w under win, with (h, w) the input pixel it reads
// (possibly in the padding).
func im2colIndex(c, h, w int, win hal.Window, fn func(row, col, ch, y, x int)) {
	for ch := range c {
		for kh := range win.KH {
			for kw := range win.KW {
				row := (ch*win.KH+kh)*win.KW + kw
				for oh := range win.OutH {
					for ow := range win.OutW {
						y := oh*win.StrideH - win.PadH + kh*win.DilationH
						x := ow*win.StrideW - win.PadW + kw*win.DilationW
						fn(row, oh*win.OutW+ow, ch, y, x)
					}
				}
			}
		}
	}
}

// refIm2Col is torch.nn.functional.unfold of x [n, c, h, w].
func refIm2Col(x []float64, n, c, h, w int, win hal.Window) []float64 {
	rows, cols := c*win.KH*win.KW, win.OutH*win.OutW
	out := make([]float64, n*rows*cols)
	for b := range n {
		im2colIndex(c, h, w, win, func(row, col, ch, y, xx int) {
			if y >= 0 && y < h && xx >= 0 && xx < w {
				out[(b*rows+row)*cols+col] = x[((b*c+ch)*h+y)*w+xx]
			}
		})
	}
	return out
}

// refCol2Im is torch.nn.functional.fold into [n, c, h, w], with each
// element's allowed error (the sum bound over its overlapping terms).
func refCol2Im(dt hal.DType, cols []float64, n, c, h, w int, win hal.Window) (want, tol []float64) {
	rows, ncols := c*win.KH*win.KW, win.OutH*win.OutW
	want, tol = make([]float64, n*c*h*w), make([]float64, n*c*h*w)
	count := make([]int, len(want))
	for b := range n {
		im2colIndex(c, h, w, win, func(row, col, ch, y, x int) {
			if y >= 0 && y < h && x >= 0 && x < w {
				i := ((b*c+ch)*h+y)*w + x
				v := cols[(b*rows+row)*ncols+col]
				want[i] += v
				tol[i] += math.Abs(v)
				count[i]++
			}
		})
	}
	for i := range tol {
		tol[i] *= unitRoundoff(dt) * perTerm * float64(count[i])
	}
	return want, tol
}

// nhwc stores an NCHW view channels-last: a permuted input.
var nhwc = layout{name: "nhwc", order: []int{0, 2, 3, 1}, offset: 3}

func testIm2Col(t *testing.T, s *suite, dt hal.DType) {
	for i, c := range convCases() {
		l := []layout{contiguous, nhwc, withOffset(2)}[i%3]
		t.Run(c.name+"/"+l.name, func(t *testing.T) {
			rng := newRand(t.Name())
			src := s.operand(t, dt, []int{c.n, c.c, c.h, c.w}, l, bind(wide, rng, dt))
			dst := s.output(t, dt, []int{c.n, c.c * c.win.KH * c.win.KW, c.win.OutH * c.win.OutW}, withOffset(i%2))
			require.NoError(t, s.dev.Im2Col(dst.View, src.View, c.win))
			checkExact(t, dt, s.result(t, dst), refIm2Col(src.values(), c.n, c.c, c.h, c.w, c.win), nil)
		})
	}
}

func testCol2Im(t *testing.T, s *suite, dt hal.DType) {
	for i, c := range convCases() {
		l := []layout{contiguous, transposedLast(3, 1), withOffset(2)}[i%3]
		h, w := c.h+c.extraH, c.w+c.extraW
		t.Run(c.name+"/"+l.name, func(t *testing.T) {
			rng := newRand(t.Name())
			src := s.operand(t, dt, []int{c.n, c.c * c.win.KH * c.win.KW, c.win.OutH * c.win.OutW}, l, bind(wide, rng, dt))
			dst := s.output(t, dt, []int{c.n, c.c, h, w}, withOffset(i%2))
			require.NoError(t, s.dev.Col2Im(dst.View, src.View, c.win))
			want, tol := refCol2Im(dt, src.values(), c.n, c.c, h, w, c.win)
			if dt.IsInteger() {
				checkExact(t, dt, s.result(t, dst), want, nil)
			} else {
				checkWithin(t, s.arith, dt, s.result(t, dst), want, tol, nil)
			}
		})
	}
}

// testAdjoint checks ⟨Im2Col(x), y⟩ = ⟨x, Col2Im(y)⟩ on the device's own
// results: Col2Im must be the exact adjoint of Im2Col, which is what makes
// a convolution's gradient right.
func testAdjoint(t *testing.T, s *suite, dt hal.DType) {
	for _, c := range convCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t.Name())
			colShape := []int{c.n, c.c * c.win.KH * c.win.KW, c.win.OutH * c.win.OutW}
			x := s.operand(t, dt, []int{c.n, c.c, c.h, c.w}, contiguous, bind(wide, rng, dt))
			y := s.operand(t, dt, colShape, contiguous, bind(wide, rng, dt))
			cols := s.output(t, dt, colShape, contiguous)
			img := s.output(t, dt, []int{c.n, c.c, c.h, c.w}, contiguous)
			require.NoError(t, s.dev.Im2Col(cols.View, x.View, c.win))
			require.NoError(t, s.dev.Col2Im(img.View, y.View, c.win))
			xv, yv, colv, imgv := x.values(), y.values(), s.result(t, cols), s.result(t, img)
			var lhs, rhs, mag float64
			for i := range yv {
				lhs += colv[i] * yv[i]
			}
			for i := range xv {
				rhs += xv[i] * imgv[i]
			}
			ref := refIm2Col(xv, c.n, c.c, c.h, c.w, c.win)
			for i := range yv {
				mag += math.Abs(ref[i] * yv[i])
			}
			// Col2Im's roundings, each at most its sum bound, weighted by |x|.
			tol := unitRoundoff(dt)*perTerm*float64(c.win.KH*c.win.KW+1)*mag + 1e-12*mag
			assert.InDelta(t, lhs, rhs, tol, "⟨Im2Col(x), y⟩ vs ⟨x, Col2Im(y)⟩")
		})
	}
}
