package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// reduceRef reduces xs plainly in float64 (with exact int32 wrapping).
func reduceRef(op hal.ReduceOp, dt hal.DType, xs []float64) float64 {
	switch op {
	case hal.Sum, hal.Prod:
		if dt == hal.Int32 {
			acc := int32(0)
			if op == hal.Prod {
				acc = 1
			}
			for _, x := range xs {
				if op == hal.Sum {
					acc += int32(x)
				} else {
					acc *= int32(x)
				}
			}
			return float64(acc)
		}
		acc := 0.0
		if op == hal.Prod {
			acc = 1
		}
		for _, x := range xs {
			if op == hal.Sum {
				acc += x
			} else {
				acc *= x
			}
		}
		return acc
	case hal.LogSumExp:
		m := math.Inf(-1)
		for _, x := range xs {
			if x != x {
				return x
			}
			m = math.Max(m, x)
		}
		if math.IsInf(m, 0) {
			return m
		}
		s := 0.0
		for _, x := range xs {
			s += math.Exp(x - m)
		}
		return m + math.Log(s)
	}
	best := 0
	for i, x := range xs {
		b := xs[best]
		if b != b {
			break
		}
		if x != x || ((op == hal.Max || op == hal.ArgMax) && x > b) || ((op == hal.Min || op == hal.ArgMin) && x < b) {
			best = i
		}
	}
	if op == hal.ArgMax || op == hal.ArgMin {
		return float64(best)
	}
	return xs[best]
}

func TestReduce(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(7, 8))
	// src [4, 5, 6] read through a permutation, reducing the last 2 axes,
	// the last 1, all 3, and none.
	shape := []int{4, 5, 6}
	for _, op := range hal.ReduceOps {
		for _, dt := range hal.DTypes {
			if !h.dev.Capabilities().Supports(op.Kernel(), dt) {
				continue
			}
			for _, k := range []int{0, 1, 2, 3} {
				t.Run(fmt.Sprintf("%v/%v/%d", op, dt, k), func(t *testing.T) {
					n := 120
					store := make([]float64, n)
					for i := range store {
						store[i] = math.Round(rng.NormFloat64()*3) / 2 // ties on purpose
						if dt.IsInteger() {
							store[i] = float64(rng.IntN(7) - 3)
						}
					}
					if !dt.IsInteger() && k%2 == 1 {
						// k = 1 reduces column-wise (the outputs are
						// adjacent), k = 3 row-wise.
						store[17], store[40], store[57] = math.NaN(), math.NaN(), math.NaN()
						store[3], store[23] = math.Inf(-1), math.Inf(1)
					}
					// Element (i, j, l) of the view lives at l*20 + i*5 + j.
					src := hal.View{Buf: h.buffer(dt, store), DType: dt, Shape: shape, Strides: []int{5, 1, 20}}
					odt := dt
					if op == hal.ArgMax || op == hal.ArgMin {
						odt = hal.Int32
					}
					dst := h.zeros(odt, shape[:3-k]...)
					require.NoError(t, h.dev.Reduce(op, dst, src, k))
					vals := h.read(src)
					inner := 1
					for _, s := range shape[3-k:] {
						inner *= s
					}
					var want []float64
					for o := 0; o < n/inner; o++ {
						want = append(want, round(odt, reduceRef(op, dt, vals[o*inner:(o+1)*inner])))
					}
					near(t, want, h.read(dst), 8*eps(dt), 1e-6, "%v %v k=%d", op, dt, k)
				})
			}
		}
	}
}

func TestReduceSpecialCases(t *testing.T) {
	h := newHarness(t)
	inf := math.Inf(1)
	lse := func(x ...float64) float64 {
		dst := h.zeros(hal.Float32)
		require.NoError(t, h.dev.Reduce(hal.LogSumExp, dst, h.view(hal.Float32, x, len(x)), 1))
		return h.read(dst)[0]
	}
	assert.Equal(t, -inf, lse(-inf, -inf))
	assert.Equal(t, -inf, lse())
	assert.Equal(t, inf, lse(1, inf, -inf))
	assert.True(t, math.IsNaN(lse(1, math.NaN(), inf)))
	assert.InDelta(t, 1000+math.Log(2), lse(1000, 1000), 1e-3)
	assert.InDelta(t, -1000+math.Log(2), lse(-1000, -1000), 1e-3)

	arg := func(op hal.ReduceOp, x ...float64) float64 {
		dst := h.zeros(hal.Int32)
		require.NoError(t, h.dev.Reduce(op, dst, h.view(hal.Float32, x, len(x)), 1))
		return h.read(dst)[0]
	}
	assert.Equal(t, 1.0, arg(hal.ArgMax, 1, 3, 3, 2))
	assert.Equal(t, 0.0, arg(hal.ArgMin, 1, 3, 1, 2))
	assert.Equal(t, 2.0, arg(hal.ArgMax, 1, 3, math.NaN(), math.NaN()))
	assert.Equal(t, 2.0, arg(hal.ArgMin, 1, -3, math.NaN(), -9))

	empty := h.zeros(hal.Float32, 2, 0)
	for op, want := range map[hal.ReduceOp]float64{hal.Sum: 0, hal.Prod: 1, hal.LogSumExp: -inf} {
		dst := h.view(hal.Float32, []float64{9, 9}, 2)
		require.NoError(t, h.dev.Reduce(op, dst, empty, 1))
		assert.Equal(t, []float64{want, want}, h.read(dst), "%v", op)
	}
}

// TestReduceLarge runs the split-across-goroutines paths and checks that
// float32 sums accumulate in float64 and float64 sums are compensated.
func TestReduceLarge(t *testing.T) {
	h := newHarness(t)
	const n = 1<<20 + 7
	x := make([]float64, n)
	for i := range x {
		x[i] = 0.1
	}
	x[n/2] = 1e8
	x[n-1] = -1e8
	for _, dt := range []hal.DType{hal.Float32, hal.Float64} {
		for _, rows := range []int{1, 7} {
			src := h.view(dt, x[:n/rows*rows], rows, n/rows)
			dst := h.zeros(dt, rows)
			require.NoError(t, h.dev.Reduce(hal.Sum, dst, src, 1))
			got := h.read(dst)
			total := 0.0
			for _, g := range got {
				total += g
			}
			r := round(dt, 0.1)
			want := r*float64(n/rows*rows-2) + round(dt, 1e8) - round(dt, 1e8)
			if rows == 1 {
				assert.InDelta(t, want, total, want*1e-12, "%v rows=%d", dt, rows)
			}
		}
		src := h.view(dt, x, n)
		dst := h.zeros(hal.Int32)
		require.NoError(t, h.dev.Reduce(hal.ArgMin, dst, src, 1))
		assert.Equal(t, float64(n-1), h.read(dst)[0])
	}
}

// TestReduceColumns sums the rows of a large row-major matrix, the
// column-wise path, in every dtype, against the row-wise result of the
// same data transposed.
func TestReduceColumns(t *testing.T) {
	h := newHarness(t)
	const r, c = 301, 517
	x := randn(newRand(), r*c)
	for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16, hal.Int32} {
		for _, op := range []hal.ReduceOp{hal.Sum, hal.ArgMax, hal.LogSumExp} {
			if !h.dev.Capabilities().Supports(op.Kernel(), dt) {
				continue
			}
			v := make([]float64, len(x))
			for i := range x {
				v[i] = round(dt, math.Round(x[i]*4))
			}
			m := h.view(dt, v, r, c)
			cols := hal.View{Buf: m.Buf, DType: dt, Shape: []int{c, r}, Strides: []int{1, c}}
			rowsView := h.transposed(dt, v, r, c) // element (j, i) = v[i*c+j] as a [c, r] row-major walk
			rowsView = hal.View{Buf: rowsView.Buf, DType: dt, Offset: 3, Shape: []int{c, r}, Strides: []int{r, 1}}
			odt := dt
			if op == hal.ArgMax {
				odt = hal.Int32
			}
			a, b := h.zeros(odt, c), h.zeros(odt, c)
			require.NoError(t, h.dev.Reduce(op, a, cols, 1))
			require.NoError(t, h.dev.Reduce(op, b, rowsView, 1))
			near(t, h.read(b), h.read(a), 4*eps(odt), 0, "%v %v", op, dt)
		}
	}
}

func TestSumInfinities(t *testing.T) {
	h := newHarness(t)
	inf := math.Inf(1)
	for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
		src := h.view(dt, []float64{-inf, -inf, 1, -inf, 2, 1, inf, 1, inf, inf, -inf, 0}, 4, 3)
		dst := h.zeros(dt, 4)
		require.NoError(t, h.dev.Reduce(hal.Sum, dst, src, 1))
		got := h.read(dst)
		assert.Equal(t, []float64{-inf, -inf, inf}, got[:3], "%v", dt)
		assert.True(t, math.IsNaN(got[3]), "%v: Inf − Inf", dt)
	}
}

// TestSumContiguousRows sums float32 views whose reduced axes end in a
// contiguous row, as a convolution's bias gradient reads its output
// gradient (channel c of [N, C, H, W] over N, H and W): rows long enough
// for sumF32, rows too short for it, padded rows and an offset, with
// infinities and NaN, against a float64 sum of the same elements.
func TestSumContiguousRows(t *testing.T) {
	h := newHarness(t)
	rng := newRand()
	inf := math.Inf(1)
	for _, c := range []struct {
		name       string
		n, ch, w   int
		rowStride  int // ≥ w; a padded row when larger
		rows, offs int // rows (H) per image, offset of the view
		specials   bool
	}{
		{"bias-grad", 5, 3, 19, 19, 7, 0, false},
		{"short-rows", 4, 2, 9, 11, 5, 0, false},
		{"padded", 3, 4, 17, 21, 6, 5, false},
		{"one-row", 2, 3, 33, 33, 1, 2, false},
		{"specials", 3, 3, 24, 24, 2, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			plane := c.rows * c.rowStride
			store := randn(rng, c.offs+c.n*c.ch*plane)
			if c.specials {
				// channel 0: +Inf; channel 1: +Inf and −Inf (NaN); channel 2: NaN.
				store[c.offs+5] = inf
				store[c.offs+plane+3] = inf
				store[c.offs+2*c.ch*plane+plane+7] = -inf
				store[c.offs+c.ch*plane+2*plane+1] = math.NaN()
			}
			// [C, N, H, W] over a [N, C, H, W] buffer: reduce the last 3.
			src := hal.View{Buf: h.buffer(hal.Float32, store), DType: hal.Float32, Offset: c.offs,
				Shape: []int{c.ch, c.n, c.rows, c.w}, Strides: []int{plane, c.ch * plane, c.rowStride, 1}}
			dst := h.zeros(hal.Float32, c.ch)
			require.NoError(t, h.dev.Reduce(hal.Sum, dst, src, 3))
			vals := h.read(src)
			inner := c.n * c.rows * c.w
			want := make([]float64, c.ch)
			for o := range want {
				want[o] = round(hal.Float32, reduceRef(hal.Sum, hal.Float32, vals[o*inner:(o+1)*inner]))
			}
			near(t, want, h.read(dst), 2*eps(hal.Float32), 1e-6, "%s", c.name)
		})
	}
}
