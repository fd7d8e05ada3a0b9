//go:build cgo

package wgpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// These tests check the indexing and windowed kernels against float64
// references written here from PyTorch's definitions, on strided inputs
// (NHWC storage read as NCHW, offsets) and odd sizes, and the failure paths
// that only this backend has: the device fault word and the software
// adapter's loop limit. The conformance suite (hal/haltest) covers them on
// every backend as well.

// nnPut uploads logical values of the given shape into a fresh buffer laid
// out with strides from offset, and returns the view. Elements the view
// does not reach hold garbage (−7), so a kernel that reads them shows.
func nnPut(t *testing.T, d *Device, dtype hal.DType, vals []float64, shape, strides []int, offset int) hal.View {
	t.Helper()
	v := hal.View{DType: dtype, Offset: offset, Shape: shape, Strides: strides}
	storage := make([]float64, offset+v.Span()+1)
	for i := range storage {
		storage[i] = -7
	}
	nnForEach(shape, func(i int, coord []int) {
		at := offset
		for a, c := range coord {
			at += c * strides[a]
		}
		storage[at] = vals[i]
	})
	buf, err := d.Alloc(int64(len(storage) * 4))
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(buf) })
	require.NoError(t, d.Write(buf, nnEncode(dtype, storage)))
	v.Buf = buf
	return v
}

// nnContig uploads row-major values.
func nnContig(t *testing.T, d *Device, dtype hal.DType, vals []float64, shape ...int) hal.View {
	return nnPut(t, d, dtype, vals, shape, hal.RowMajorStrides(shape), 0)
}

// nnNHWC uploads NCHW values stored as NHWC from offset 3: a strided view.
func nnNHWC(t *testing.T, d *Device, vals []float64, shape ...int) hal.View {
	n, c, h, w := shape[0], shape[1], shape[2], shape[3]
	_ = n
	return nnPut(t, d, hal.Float32, vals, shape, []int{h * w * c, 1, w * c, c}, 3)
}

// nnOutput allocates a contiguous view filled with garbage.
func nnOutput(t *testing.T, d *Device, dtype hal.DType, shape ...int) hal.View {
	n := 1
	for _, s := range shape {
		n *= s
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 99
	}
	return nnContig(t, d, dtype, vals, shape...)
}

// nnGet reads a contiguous view back as float64.
func nnGet(t *testing.T, d *Device, v hal.View) []float64 {
	t.Helper()
	raw := make([]byte, (v.Offset+v.Elements())*4)
	require.NoError(t, d.Read(v.Buf, raw))
	out := make([]float64, v.Elements())
	for i := range out {
		w := binary.LittleEndian.Uint32(raw[(v.Offset+i)*4:])
		if v.DType == hal.Int32 {
			out[i] = float64(int32(w))
		} else {
			out[i] = float64(math.Float32frombits(w))
		}
	}
	return out
}

func nnEncode(dtype hal.DType, vals []float64) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		w := math.Float32bits(float32(v))
		if dtype == hal.Int32 {
			w = uint32(int32(v))
		}
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// nnForEach calls f with every coordinate of shape in row-major order.
func nnForEach(shape []int, f func(i int, coord []int)) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	coord := make([]int, len(shape))
	for i := range n {
		rest := i
		for a := len(shape) - 1; a >= 0; a-- {
			coord[a] = rest % shape[a]
			rest /= shape[a]
		}
		f(i, coord)
	}
}

func nnRandoms(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(float32(r.NormFloat64()))
	}
	return out
}

// nnNear asserts |got − want| ≤ atol + rtol·|want| elementwise, NaN matching
// NaN.
func nnNear(t *testing.T, want, got []float64, atol, rtol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "%s: element %d: want NaN, got %v", what, i, got[i])
			continue
		}
		require.InDelta(t, want[i], got[i], atol+rtol*math.Abs(want[i]), "%s: element %d", what, i)
	}
}

func TestGatherMatchesTorch(t *testing.T) { forEachTestDevice(t, testGatherMatchesTorch) }

func testGatherMatchesTorch(t *testing.T, d *Device) {
	r := rand.New(rand.NewPCG(1, 2))
	// src [5, 7, 3] read through a permuted view; gather along each axis
	// with an index smaller than src on the other axes (as torch allows).
	shape := []int{5, 7, 3}
	vals := nnRandoms(r, 5*7*3)
	src := nnPut(t, d, hal.Float32, vals, shape, []int{1, 15, 5}, 2)
	for axis := range 3 {
		ishape := []int{4, 6, 2}
		ishape[axis] = 9
		n := ishape[0] * ishape[1] * ishape[2]
		idx := make([]float64, n)
		for i := range idx {
			idx[i] = float64(r.IntN(shape[axis]))
		}
		index := nnContig(t, d, hal.Int32, idx, ishape...)
		dst := nnOutput(t, d, hal.Float32, ishape...)
		require.NoError(t, d.Gather(dst, src, index, axis))
		want := make([]float64, n)
		nnForEach(ishape, func(i int, c []int) {
			s := []int{c[0], c[1], c[2]}
			s[axis] = int(idx[i])
			want[i] = vals[(s[0]*7+s[1])*3+s[2]]
		})
		nnNear(t, want, nnGet(t, d, dst), 0, 0, "gather")
	}

	// index_select: an index broadcast with stride 0, over Int32 values
	// that share the index's buffer (two read-only bindings of one buffer).
	both := nnContig(t, d, hal.Int32, []float64{10, 11, 12, 13, 20, 21, 22, 23, 3, 0, 3}, 11)
	isrc := hal.View{Buf: both.Buf, DType: hal.Int32, Shape: []int{2, 4}, Strides: []int{4, 1}}
	index := hal.View{Buf: both.Buf, DType: hal.Int32, Offset: 8, Shape: []int{2, 3}, Strides: []int{0, 1}}
	dst := nnOutput(t, d, hal.Int32, 2, 3)
	require.NoError(t, d.Gather(dst, isrc, index, 1))
	assert.Equal(t, []float64{13, 10, 13, 23, 20, 23}, nnGet(t, d, dst))
}

func TestGatherOutOfRangeFaults(t *testing.T) { forEachTestDevice(t, testGatherOutOfRangeFaults) }

func testGatherOutOfRangeFaults(t *testing.T, d *Device) {
	require.NoError(t, d.Sync())
	src := nnContig(t, d, hal.Float32, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	index := nnContig(t, d, hal.Int32, []float64{2, 7, 0, -1}, 2, 2)
	dst := nnOutput(t, d, hal.Float32, 2, 2)
	require.NoError(t, d.Gather(dst, src, index, 1), "the fault surfaces later, not at the call")

	err := d.Sync()
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrIndexOutOfRange), "%v", err)
	// One of the two bad indices wins; the message names it, the axis and
	// the axis size.
	assert.Regexp(t, `gather: index (7|-1) is out of range for axis 1 of size 3`, err.Error())
	assert.NoError(t, d.Sync(), "a fault is reported once")

	// The bad elements are 0; the good ones gathered.
	assert.Equal(t, []float64{3, 0, 4, 0}, nnGet(t, d, dst))

	// The device keeps working, and a clean gather reports nothing.
	good := nnContig(t, d, hal.Int32, []float64{1, 1, 2, 0}, 2, 2)
	require.NoError(t, d.Gather(dst, src, good, 1))
	assert.Equal(t, []float64{2, 2, 6, 4}, nnGet(t, d, dst))
	assert.NoError(t, d.Sync())

	// A scatter fault surfaces at Read as well, naming its op.
	acc := nnContig(t, d, hal.Float32, []float64{0, 0, 0}, 3)
	require.NoError(t, d.ScatterAdd(acc, nnContig(t, d, hal.Int32, []float64{1, 3}, 2), nnContig(t, d, hal.Float32, []float64{5, 6}, 2), 0))
	raw := make([]byte, 12)
	err = d.Read(acc.Buf, raw)
	require.Error(t, err)
	assert.True(t, errors.Is(err, hal.ErrIndexOutOfRange), "%v", err)
	assert.Contains(t, err.Error(), "scatter_add: index 3 is out of range for axis 0 of size 3")
	assert.Equal(t, []float64{0, 5, 0}, nnGet(t, d, acc), "the bad element is skipped")
}

// TestScatterAddCollisions sends many additions to few targets, so the
// float compare-exchange loop is contended. Small integers sum exactly in
// float32 whatever the order, so a lost or doubled update shows as an
// inexact result; normal values are compared with a float64 sum within the
// error bound of any summation order, (k−1)·ε·Σ|x| for k terms.
func TestScatterAddCollisions(t *testing.T) { forEachTestDevice(t, testScatterAddCollisions) }

func testScatterAddCollisions(t *testing.T, d *Device) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, cols, targets = 40_000, 3, 5
	idx := make([]float64, rows*cols)
	for i := range idx {
		idx[i] = float64(r.IntN(targets))
	}
	index := nnContig(t, d, hal.Int32, idx, rows, cols)
	for _, exact := range []bool{true, false} {
		vals := nnRandoms(r, rows*cols)
		init := nnRandoms(r, targets*4)
		if exact {
			for i := range vals {
				vals[i] = float64(r.IntN(17) - 8)
			}
			for i := range init {
				init[i] = float64(r.IntN(17) - 8)
			}
		}
		// dst [targets, 4], of which src and index [rows, 3] touch three
		// columns; src is read transposed from [3, rows] storage.
		dst := nnContig(t, d, hal.Float32, init, targets, 4)
		src := nnPut(t, d, hal.Float32, vals, []int{rows, cols}, []int{1, rows}, 0)
		require.NoError(t, d.ScatterAdd(dst, index, src, 0))

		want := make([]float64, len(init))
		abs := make([]float64, len(init))
		terms := make([]float64, len(init))
		for i := range init {
			want[i], abs[i], terms[i] = init[i], math.Abs(init[i]), 1
		}
		nnForEach([]int{rows, cols}, func(i int, c []int) {
			at := int(idx[i])*4 + c[1]
			want[at] += vals[i]
			abs[at] += math.Abs(vals[i])
			terms[at]++
		})
		got := nnGet(t, d, dst)
		for i := range want {
			bound := 0.0
			if !exact {
				bound = (terms[i] - 1) * 0x1p-24 * abs[i]
			}
			require.InDelta(t, want[i], got[i], bound, "exact %v, target %d (column 3 is untouched)", exact, i)
		}
	}
	require.NoError(t, d.Sync())

	// Int32 adds are exact.
	ivals := make([]float64, rows)
	iidx := make([]float64, rows)
	iwant := make([]float64, targets)
	for i := range ivals {
		ivals[i] = float64(r.IntN(2001) - 1000)
		iidx[i] = float64(r.IntN(targets))
		iwant[int(iidx[i])] += ivals[i]
	}
	idst := nnContig(t, d, hal.Int32, make([]float64, targets), targets)
	require.NoError(t, d.ScatterAdd(idst, nnContig(t, d, hal.Int32, iidx, rows), nnContig(t, d, hal.Int32, ivals, rows), 0))
	assert.Equal(t, iwant, nnGet(t, d, idst))
}

// nnIm2colRef unfolds x [n, c, h, w] as torch.nn.functional.unfold.
func nnIm2colRef(x []float64, n, c, h, w int, win hal.Window) []float64 {
	rows, cols := c*win.KH*win.KW, win.OutH*win.OutW
	out := make([]float64, n*rows*cols)
	for b := range n {
		for ch := range c {
			for ky := range win.KH {
				for kx := range win.KW {
					row := (ch*win.KH+ky)*win.KW + kx
					for oy := range win.OutH {
						for ox := range win.OutW {
							y := oy*win.StrideH - win.PadH + ky*win.DilationH
							xx := ox*win.StrideW - win.PadW + kx*win.DilationW
							v := 0.0
							if y >= 0 && y < h && xx >= 0 && xx < w {
								v = x[((b*c+ch)*h+y)*w+xx]
							}
							out[(b*rows+row)*cols+oy*win.OutW+ox] = v
						}
					}
				}
			}
		}
	}
	return out
}

// nnCol2imRef folds columns into [n, c, h, w]: the transpose of im2colRef.
func nnCol2imRef(cols []float64, n, c, h, w int, win hal.Window) []float64 {
	out := make([]float64, n*c*h*w)
	rows, ncol := c*win.KH*win.KW, win.OutH*win.OutW
	for b := range n {
		for ch := range c {
			for ky := range win.KH {
				for kx := range win.KW {
					row := (ch*win.KH+ky)*win.KW + kx
					for oy := range win.OutH {
						for ox := range win.OutW {
							y := oy*win.StrideH - win.PadH + ky*win.DilationH
							xx := ox*win.StrideW - win.PadW + kx*win.DilationW
							if y >= 0 && y < h && xx >= 0 && xx < w {
								out[((b*c+ch)*h+y)*w+xx] += cols[(b*rows+row)*ncol+oy*win.OutW+ox]
							}
						}
					}
				}
			}
		}
	}
	return out
}

// nnWindows are conv geometries: square and not, strided, padded, dilated.
var nnWindows = []struct {
	n, c, h, w int
	win        hal.Window
}{
	{1, 1, 5, 5, hal.Window{KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1}},
	{2, 3, 7, 6, hal.Window{KH: 3, KW: 2, StrideH: 2, StrideW: 1, PadH: 1, PadW: 2, DilationH: 1, DilationW: 2}},
	{1, 2, 9, 11, hal.Window{KH: 2, KW: 4, StrideH: 3, StrideW: 2, PadH: 2, PadW: 1, DilationH: 3, DilationW: 1}},
	{3, 1, 4, 3, hal.Window{KH: 1, KW: 1, StrideH: 1, StrideW: 2, DilationH: 1, DilationW: 1}},
}

func nnConvOut(in, k, s, p, dil int) int { return hal.OutputSize(in, k, s, p, dil, false) }

func TestIm2ColCol2Im(t *testing.T) { forEachTestDevice(t, testIm2ColCol2Im) }

func testIm2ColCol2Im(t *testing.T, d *Device) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range nnWindows {
		w := tc.win
		w.OutH = nnConvOut(tc.h, w.KH, w.StrideH, w.PadH, w.DilationH)
		w.OutW = nnConvOut(tc.w, w.KW, w.StrideW, w.PadW, w.DilationW)
		x := nnRandoms(r, tc.n*tc.c*tc.h*tc.w)
		src := nnNHWC(t, d, x, tc.n, tc.c, tc.h, tc.w)
		rows, cols := tc.c*w.KH*w.KW, w.OutH*w.OutW
		dst := nnOutput(t, d, hal.Float32, tc.n, rows, cols)
		require.NoError(t, d.Im2Col(dst, src, w))
		nnNear(t, nnIm2colRef(x, tc.n, tc.c, tc.h, tc.w, w), nnGet(t, d, dst), 0, 0, "im2col")

		// Col2Im from a transposed column view ([n, cols, rows] storage).
		colv := nnRandoms(r, tc.n*rows*cols)
		csrc := nnPut(t, d, hal.Float32, colv, []int{tc.n, rows, cols}, []int{rows * cols, 1, rows}, 1)
		img := nnOutput(t, d, hal.Float32, tc.n, tc.c, tc.h, tc.w)
		require.NoError(t, d.Col2Im(img, csrc, w))
		nnNear(t, nnCol2imRef(colv, tc.n, tc.c, tc.h, tc.w, w), nnGet(t, d, img), 1e-5, 1e-5, "col2im")
	}
}

// nnPoolRef pools x [n, c, h, w] into [n, c, oh, ow] as PyTorch's
// max_pool2d(return_indices=True) and avg_pool2d.
func nnPoolRef(op hal.PoolOp, x []float64, n, c, h, w int, win hal.Window, includePad bool) (vals, idx []float64) {
	for p := range n * c {
		plane := x[p*h*w:]
		for oy := range win.OutH {
			for ox := range win.OutW {
				y0, x0 := oy*win.StrideH-win.PadH, ox*win.StrideW-win.PadW
				if op == hal.PoolMax {
					best, arg := math.Inf(-1), -1
					for ky := range win.KH {
						for kx := range win.KW {
							y, xx := y0+ky*win.DilationH, x0+kx*win.DilationW
							if y < 0 || y >= h || xx < 0 || xx >= w {
								continue
							}
							v := plane[y*w+xx]
							if arg < 0 || v > best || math.IsNaN(v) {
								best, arg = v, y*w+xx
							}
						}
					}
					vals, idx = append(vals, best), append(idx, float64(arg))
					continue
				}
				// The divisor counts the taps inside [−pad, size+pad) or
				// inside the input: for an undilated window, PyTorch's window
				// clipped to those ranges.
				sum, inside, padded := 0.0, 0, 0
				for ky := range win.KH {
					for kx := range win.KW {
						y, xx := y0+ky*win.DilationH, x0+kx*win.DilationW
						if y >= -win.PadH && y < h+win.PadH && xx >= -win.PadW && xx < w+win.PadW {
							padded++
						}
						if y >= 0 && y < h && xx >= 0 && xx < w {
							sum += plane[y*w+xx]
							inside++
						}
					}
				}
				div := inside
				if includePad {
					div = padded
				}
				if inside == 0 {
					vals = append(vals, 0)
				} else {
					vals = append(vals, sum/float64(div))
				}
			}
		}
	}
	return vals, idx
}

func TestPool2D(t *testing.T) { forEachTestDevice(t, testPool2D) }

func testPool2D(t *testing.T, d *Device) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := []struct {
		n, c, h, w int
		win        hal.Window
		ceil       bool
	}{
		{1, 1, 4, 4, hal.Window{KH: 2, KW: 2, StrideH: 2, StrideW: 2, DilationH: 1, DilationW: 1}, false},
		{2, 3, 7, 5, hal.Window{KH: 3, KW: 2, StrideH: 2, StrideW: 2, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1}, true},
		{1, 2, 8, 9, hal.Window{KH: 3, KW: 3, StrideH: 3, StrideW: 2, PadH: 1, PadW: 0, DilationH: 1, DilationW: 1}, true},
		// Ceil-mode windows that run past the padded input.
		{1, 2, 5, 6, hal.Window{KH: 2, KW: 3, StrideH: 2, StrideW: 2, PadH: 0, PadW: 1, DilationH: 1, DilationW: 1}, true},
		{1, 1, 10, 7, hal.Window{KH: 2, KW: 3, StrideH: 1, StrideW: 2, PadH: 1, PadW: 1, DilationH: 2, DilationW: 3}, false},
	}
	for _, tc := range cases {
		w := tc.win
		w.OutH = hal.OutputSize(tc.h, w.KH, w.StrideH, w.PadH, w.DilationH, tc.ceil)
		w.OutW = hal.OutputSize(tc.w, w.KW, w.StrideW, w.PadW, w.DilationW, tc.ceil)
		x := nnRandoms(r, tc.n*tc.c*tc.h*tc.w)
		// NaN wins a max (the last one its index); −∞ still gets an index.
		x[5] = math.NaN()
		x[len(x)-1] = math.Inf(-1)
		src := nnNHWC(t, d, x, tc.n, tc.c, tc.h, tc.w)

		dst := nnOutput(t, d, hal.Float32, tc.n, tc.c, w.OutH, w.OutW)
		idx := nnOutput(t, d, hal.Int32, tc.n, tc.c, w.OutH, w.OutW)
		require.NoError(t, d.Pool2D(hal.PoolMax, dst, idx, src, w, false))
		wantV, wantI := nnPoolRef(hal.PoolMax, x, tc.n, tc.c, tc.h, tc.w, w, false)
		nnNear(t, wantV, nnGet(t, d, dst), 0, 0, "max")
		nnNear(t, wantI, nnGet(t, d, idx), 0, 0, "argmax")

		for _, include := range []bool{false, true} {
			require.NoError(t, d.Pool2D(hal.PoolAvg, dst, hal.View{}, src, w, include))
			wantV, _ = nnPoolRef(hal.PoolAvg, x, tc.n, tc.c, tc.h, tc.w, w, include)
			nnNear(t, wantV, nnGet(t, d, dst), 1e-6, 1e-6, "avg")
		}
	}
}

// nnGridSampleRef samples x [n, c, h, w] bilinearly at grid [n, oh, ow, 2]
// as torch.nn.functional.grid_sample.
func nnGridSampleRef(x, grid []float64, n, c, h, w, oh, ow int, border, align bool) []float64 {
	unnormalize := func(g float64, size int) float64 {
		var p float64
		if align {
			p = (g + 1) / 2 * float64(size-1)
		} else {
			p = ((g+1)*float64(size) - 1) / 2
		}
		if border {
			p = math.Min(math.Max(p, 0), float64(size-1))
		}
		return p
	}
	var out []float64
	for b := range n {
		for ch := range c {
			for y := range oh {
				for xx := range ow {
					at := ((b*oh+y)*ow + xx) * 2
					ix, iy := unnormalize(grid[at], w), unnormalize(grid[at+1], h)
					fx, fy := math.Floor(ix), math.Floor(iy)
					v := 0.0
					for _, tap := range [][3]float64{
						{fy, fx, (fx + 1 - ix) * (fy + 1 - iy)},
						{fy, fx + 1, (ix - fx) * (fy + 1 - iy)},
						{fy + 1, fx, (fx + 1 - ix) * (iy - fy)},
						{fy + 1, fx + 1, (ix - fx) * (iy - fy)},
					} {
						py, px := int(tap[0]), int(tap[1])
						if py >= 0 && py < h && px >= 0 && px < w {
							v += x[((b*c+ch)*h+py)*w+px] * tap[2]
						}
					}
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func TestGridSample(t *testing.T) { forEachTestDevice(t, testGridSample) }

func testGridSample(t *testing.T, d *Device) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, c, h, w, oh, ow = 2, 3, 5, 7, 4, 6
	x := nnRandoms(r, n*c*h*w)
	grid := make([]float64, n*oh*ow*2)
	for i := range grid {
		// Mostly inside, some outside [−1, 1], and the exact corners.
		grid[i] = float64(float32(r.Float64()*2.6 - 1.3))
	}
	grid[0], grid[1], grid[2], grid[3] = -1, -1, 1, 1
	src := nnNHWC(t, d, x, n, c, h, w)
	// The grid is read from [n, 2, oh, ow] storage.
	g := nnPut(t, d, hal.Float32, grid, []int{n, oh, ow, 2}, []int{2 * oh * ow, ow, 1, oh * ow}, 5)
	dst := nnOutput(t, d, hal.Float32, n, c, oh, ow)
	for _, padding := range []hal.GridPadding{hal.GridZeros, hal.GridBorder} {
		for _, align := range []bool{false, true} {
			require.NoError(t, d.GridSample(dst, src, g, padding, align))
			want := nnGridSampleRef(x, grid, n, c, h, w, oh, ow, padding == hal.GridBorder, align)
			nnNear(t, want, nnGet(t, d, dst), 1e-5, 1e-5, padding.String())
		}
	}
}

// TestWindowErrors checks the refusals particular to this backend.
func TestWindowErrors(t *testing.T) { forEachTestDevice(t, testWindowErrors) }

func testWindowErrors(t *testing.T, d *Device) {
	x := nnContig(t, d, hal.Float32, make([]float64, 16), 1, 1, 4, 4)
	dst := nnOutput(t, d, hal.Float32, 1, 1, 1, 1)
	idx := nnOutput(t, d, hal.Int32, 1, 1, 1, 1)
	if d.info.Type == hal.AdapterCPU {
		// A window whose loop would outrun llvmpipe's silent limit is
		// refused, naming the limit, rather than computed wrongly.
		huge := hal.Window{KH: 300, KW: 300, StrideH: 1, StrideW: 1, PadH: 150, PadW: 150, DilationH: 1, DilationW: 1, OutH: 1, OutW: 1}
		err := d.Pool2D(hal.PoolMax, dst, idx, x, huge, false)
		assert.True(t, errors.Is(err, hal.ErrUnsupported), "%v", err)
		assert.Contains(t, err.Error(), "65,535")
	}
	bad := hal.Window{KH: 0, KW: 1, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1}
	assert.True(t, errors.Is(d.Im2Col(nnOutput(t, d, hal.Float32, 1, 0, 4), x, bad), hal.ErrInvalid))
	// dst sharing src's buffer is refused.
	w := hal.Window{KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1, OutH: 4, OutW: 4}
	assert.True(t, errors.Is(d.Im2Col(hal.Contiguous(x.Buf, hal.Float32, 1, 1, 16), x, w), hal.ErrInvalid))
	// Gather needs an Int32 index.
	assert.True(t, errors.Is(d.Gather(dst, x, x, 0), hal.ErrInvalid))
	require.NoError(t, d.Sync())
}

// BenchmarkIm2Col measures Im2Col on a conv-shaped input (a 3×3, padding 1
// convolution of 8×64×32×32 images); the bytes counted are the columns
// written, which outnumber the reads nine times.
func BenchmarkIm2Col(b *testing.B) {
	d := openTestDevice(b)
	const n, c, h, w = 8, 64, 32, 32
	win := hal.Window{KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilationH: 1, DilationW: 1, OutH: h, OutW: w}
	src, err := d.Alloc(n * c * h * w * 4)
	require.NoError(b, err)
	defer d.Free(src)
	dst, err := d.Alloc(n * c * 9 * h * w * 4)
	require.NoError(b, err)
	defer d.Free(dst)
	sv := hal.Contiguous(src, hal.Float32, n, c, h, w)
	dv := hal.Contiguous(dst, hal.Float32, n, c*9, h*w)
	require.NoError(b, d.Write(src, make([]byte, n*c*h*w*4)))
	require.NoError(b, d.Im2Col(dv, sv, win))
	require.NoError(b, d.Sync())
	b.SetBytes(int64(dv.Elements()) * 4)
	b.ResetTimer()
	for range b.N {
		require.NoError(b, d.Im2Col(dv, sv, win))
		require.NoError(b, d.Sync())
	}
}

// TestWindowShadersRender renders every variant of this file's kernels,
// f16 included, which a device without shader-f16 (llvmpipe) never
// compiles. Where Tint, the WGSL compiler Dawn embeds, is installed as the
// `tint` command, it also validates each source, so that an f16 kernel is
// known to compile before it meets an f16 device.
func TestWindowShadersRender(t *testing.T) { forEachTestDevice(t, testWindowShadersRender) }

func testWindowShadersRender(t *testing.T, d *Device) {
	sources := map[string]string{}
	for _, dtype := range []hal.DType{hal.Float32, hal.Float16, hal.Int32} {
		type variant struct {
			file  string
			extra map[string]any
		}
		variants := []variant{
			{"gather.wgsl", nil},
			{"scatter.wgsl", map[string]any{"Mode": map[hal.DType]string{hal.Float32: "float", hal.Float16: "half", hal.Int32: "int"}[dtype]}},
		}
		if dtype != hal.Int32 {
			variants = append(variants, variant{"im2col.wgsl", nil}, variant{"col2im.wgsl", nil},
				variant{"pool2d.wgsl", map[string]any{"Max": true}}, variant{"pool2d.wgsl", map[string]any{"Max": false}},
				variant{"grid_sample.wgsl", nil})
		}
		for _, v := range variants {
			data := d.shaderData(dtype)
			for k, x := range v.extra {
				data[k] = x
			}
			src, err := render(v.file, data)
			require.NoError(t, err, "%s %v", v.file, dtype)
			sources[fmt.Sprintf("%s %v %v", v.file, dtype, v.extra)] = src
		}
	}
	if !validateWithTint(t, sources) {
		t.Log("tint not installed: rendered the kernels without validating them")
	}
}
