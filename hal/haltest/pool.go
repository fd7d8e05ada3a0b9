package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// poolCase is an image batch, a window and the rounding of its output
// size.
type poolCase struct {
	name       string
	n, c, h, w int
	win        hal.Window
	ceil       bool
}

// poolCases: floor and ceil output sizes (ceil adds a last window that
// hangs over the padded input, which the average must clip), padding,
// strides unlike the kernel, dilation (max only: avg_pool2d has none),
// non-square everything, and the trivial and global windows. Padding stays
// at most half the kernel, as PyTorch requires, so every window sees at
// least one input pixel.
func poolCases(op hal.PoolOp) []poolCase {
	cases := []poolCase{
		{"1x1x5x5/k2-s2", 1, 1, 5, 5, window(2, 2, 2, 2, 0, 0, 1, 1), false},
		{"1x1x5x5/k2-s2-ceil", 1, 1, 5, 5, window(2, 2, 2, 2, 0, 0, 1, 1), true},
		{"2x3x7x9/k3x2-s2x1-p1x0", 2, 3, 7, 9, window(3, 2, 2, 1, 1, 0, 1, 1), false},
		{"2x3x7x9/k3x2-s2x1-p1x0-ceil", 2, 3, 7, 9, window(3, 2, 2, 1, 1, 0, 1, 1), true},
		{"2x1x10x7/k3-s3x2-p1-ceil", 2, 1, 10, 7, window(3, 3, 3, 2, 1, 1, 1, 1), true},
		{"1x1x6x6/k3-s3-p1-ceil", 1, 1, 6, 6, window(3, 3, 3, 3, 1, 1, 1, 1), true},
		{"1x2x1x1/k1", 1, 2, 1, 1, window(1, 1, 1, 1, 0, 0, 1, 1), false},
		{"1x1x4x4/k4-global", 1, 1, 4, 4, window(4, 4, 1, 1, 0, 0, 1, 1), false},
		{"3x2x9x8/k2x4-s1x3-p1x2", 3, 2, 9, 8, window(2, 4, 1, 3, 1, 2, 1, 1), false},
		// Windows wholly inside the input (no padding, floor or a ceil
		// that adds nothing), which a backend may take a faster path
		// for: 2×2 stride 2 dropping an odd last row and column, the
		// same with a taller stride, overlapping stride 1, 3×3 stride 2
		// at 33, and a larger batch of planes.
		{"3x5x7x9/k2-s2", 3, 5, 7, 9, window(2, 2, 2, 2, 0, 0, 1, 1), false},
		{"2x3x12x9/k2-s3x2", 2, 3, 12, 9, window(2, 2, 3, 2, 0, 0, 1, 1), false},
		{"1x3x7x7/k2-s1", 1, 3, 7, 7, window(2, 2, 1, 1, 0, 0, 1, 1), false},
		{"2x3x33x33/k3-s2", 2, 3, 33, 33, window(3, 3, 2, 2, 0, 0, 1, 1), false},
		{"1x1x8x8/k2-s2-ceil", 1, 1, 8, 8, window(2, 2, 2, 2, 0, 0, 1, 1), true},
		{"4x33x6x10/k2-s2", 4, 33, 6, 10, window(2, 2, 2, 2, 0, 0, 1, 1), false},
	}
	if op == hal.PoolMax {
		cases = append(cases,
			poolCase{"1x2x8x6/k3-s2-p1-d2-ceil", 1, 2, 8, 6, window(3, 3, 2, 2, 1, 1, 2, 2), true},
			poolCase{"2x1x9x11/k2x3-s1-d3x2", 2, 1, 9, 11, window(2, 3, 1, 1, 0, 1, 3, 2), false},
			poolCase{"1x2x9x9/k2-s2-d2", 1, 2, 9, 9, window(2, 2, 2, 2, 0, 0, 2, 2), false},
			poolCase{"1x2x9x7/k3x2-s3x2-d1x3", 1, 2, 9, 7, window(3, 2, 3, 2, 0, 0, 1, 3), false},
		)
	}
	for i := range cases {
		c := &cases[i]
		w := &c.win
		w.OutH = hal.OutputSize(c.h, w.KH, w.StrideH, w.PadH, w.DilationH, c.ceil)
		w.OutW = hal.OutputSize(c.w, w.KW, w.StrideW, w.PadW, w.DilationW, c.ceil)
	}
	return cases
}

// refPool pools x [n, c, h, w]. For max it returns the first maximum in
// the window's scan order (kh, then kw) and its h·W+w index, with unique
// reporting whether that maximum was the window's only one (indices are
// checked only there: the contract names no tie rule). For avg it returns
// each element's allowed error.
func refPool(op hal.PoolOp, dt hal.DType, x []float64, n, c, h, w int, win hal.Window, includePad bool) (want, idx, tol []float64, unique []bool) {
	size := n * c * win.OutH * win.OutW
	want, idx, tol, unique = make([]float64, size), make([]float64, size), make([]float64, size), make([]bool, size)
	o := 0
	for plane := range n * c {
		for oh := range win.OutH {
			for ow := range win.OutW {
				y0, x0 := oh*win.StrideH-win.PadH, ow*win.StrideW-win.PadW
				best, bestAt, ties := math.Inf(-1), -1, 0
				var sum, mag float64
				count := 0
				for kh := range win.KH {
					for kw := range win.KW {
						y, xx := y0+kh*win.DilationH, x0+kw*win.DilationW
						if y < 0 || y >= h || xx < 0 || xx >= w {
							continue
						}
						v := x[(plane*h+y)*w+xx]
						switch {
						case bestAt < 0 || v > best:
							best, bestAt, ties = v, y*w+xx, 1
						case v == best:
							ties++
						}
						sum += v
						mag += math.Abs(v)
						count++
					}
				}
				if op == hal.PoolMax {
					want[o], idx[o], unique[o] = best, float64(bestAt), ties == 1
				} else {
					div := count
					if includePad {
						// The window clipped to the padded input.
						hEnd, wEnd := min(y0+win.KH, h+win.PadH), min(x0+win.KW, w+win.PadW)
						div = (hEnd - y0) * (wEnd - x0)
					}
					want[o] = sum / float64(div)
					tol[o] = unitRoundoff(dt) * (perTerm*float64(count)*mag/float64(div) + 2*math.Abs(want[o]))
				}
				o++
			}
		}
	}
	return want, idx, tol, unique
}

func testPool(t *testing.T, s *suite, op hal.PoolOp, dt hal.DType) {
	includes := []bool{false}
	if op == hal.PoolAvg {
		includes = []bool{true, false}
	}
	for i, c := range poolCases(op) {
		for _, include := range includes {
			l := []layout{contiguous, nhwc, withOffset(4)}[i%3]
			name := c.name + "/" + l.name
			if op == hal.PoolAvg {
				name += fmt.Sprintf("/count-include-pad=%v", include)
			}
			t.Run(name, func(t *testing.T) {
				rng := newRand(t.Name())
				src := s.operand(t, dt, []int{c.n, c.c, c.h, c.w}, l, bind(wide, rng, dt))
				outShape := []int{c.n, c.c, c.win.OutH, c.win.OutW}
				dst := s.output(t, dt, outShape, withOffset(i%2))
				var indices operand
				if op == hal.PoolMax {
					indices = s.output(t, hal.Int32, outShape, withOffset(1-i%2))
				}
				require.NoError(t, s.dev.Pool2D(op, dst.View, indices.View, src.View, c.win, include))
				want, idx, tol, unique := refPool(op, dt, src.values(), c.n, c.c, c.h, c.w, c.win, include)
				got := s.result(t, dst)
				if op == hal.PoolAvg {
					s.check(t, op.Kernel(), dt, got, want, tol, nil)
					return
				}
				checkExact(t, dt, got, want, nil)
				gotIdx := s.result(t, indices)
				xs, plane := src.values(), c.h*c.w
				for j, u := range unique {
					// On a tie any of the maxima's indices will do.
					k := int(gotIdx[j])
					p := j / (c.win.OutH * c.win.OutW)
					if !u && k >= 0 && k < plane && xs[p*plane+k] == want[j] {
						gotIdx[j] = idx[j]
					}
				}
				checkExact(t, hal.Int32, gotIdx, idx, func(j int) string { return "index of the max" })
			})
		}
	}
}
