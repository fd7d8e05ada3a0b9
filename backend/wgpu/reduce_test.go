//go:build cgo

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// These tests cover what the conformance suite cannot see from outside:
// the multi-pass paths of Reduce (rows around the segment boundaries, a
// full reduction past float32's 2²⁴ integer range) and MatMul's K passes,
// plus the NaN, infinity and tie rules on the tree kernels.

// upload32 copies 32-bit words (float32 or int32) into a new buffer.
func upload32[T float32 | int32](t testing.TB, d *Device, vals []T) hal.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(4 * len(vals)))
	require.NoError(t, err)
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		var w uint32
		switch v := any(v).(type) {
		case float32:
			w = math.Float32bits(v)
		case int32:
			w = uint32(v)
		}
		binary.LittleEndian.PutUint32(raw[4*i:], w)
	}
	require.NoError(t, d.Write(b, raw))
	return b
}

// download32 reads n words of b.
func download32(t testing.TB, d *Device, b hal.Buffer, n int) []uint32 {
	t.Helper()
	raw := make([]byte, 4*n)
	require.NoError(t, d.Read(b, raw))
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return out
}

func downloadF32(t testing.TB, d *Device, b hal.Buffer, n int) []float32 {
	out := make([]float32, n)
	for i, w := range download32(t, d, b, n) {
		out[i] = math.Float32frombits(w)
	}
	return out
}

func downloadI32(t testing.TB, d *Device, b hal.Buffer, n int) []int32 {
	out := make([]int32, n)
	for i, w := range download32(t, d, b, n) {
		out[i] = int32(w)
	}
	return out
}

// reduceRef reduces rows of float64 values the way hal documents.
func reduceRef(op hal.ReduceOp, row []float64) float64 {
	switch op {
	case hal.Sum:
		s := 0.0
		for _, v := range row {
			s += v
		}
		return s
	case hal.Prod:
		p := 1.0
		for _, v := range row {
			p *= v
		}
		return p
	case hal.Max, hal.Min:
		best := row[0]
		for _, v := range row {
			if math.IsNaN(v) {
				return v
			}
			if (op == hal.Max && v > best) || (op == hal.Min && v < best) {
				best = v
			}
		}
		return best
	case hal.ArgMax, hal.ArgMin:
		best := 0
		for i, v := range row {
			b := row[best]
			switch {
			case math.IsNaN(b):
			case math.IsNaN(v):
				best = i
			case (op == hal.ArgMax && v > b) || (op == hal.ArgMin && v < b):
				best = i
			}
		}
		return float64(best)
	case hal.LogSumExp:
		m := math.Inf(-1)
		for _, v := range row {
			if math.IsNaN(v) {
				return v
			}
			m = math.Max(m, v)
		}
		if math.IsInf(m, 0) {
			return m
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - m)
		}
		return m + math.Log(s)
	}
	panic(op)
}

// gatherRows lists the elements of each row of a strided view over vals,
// the last `reduced` axes forming a row.
func gatherRows(vals []float64, v hal.View, reduced int) [][]float64 {
	rank := len(v.Shape)
	rows := hal.View{Shape: v.Shape[:rank-reduced]}.Elements()
	n := hal.View{Shape: v.Shape[rank-reduced:]}.Elements()
	out := make([][]float64, rows)
	idx := make([]int, rank)
	for r := range rows {
		out[r] = make([]float64, n)
		for j := range n {
			lin := r*n + j
			for a := rank - 1; a >= 0; a-- {
				idx[a] = lin % v.Shape[a]
				lin /= v.Shape[a]
			}
			off := v.Offset
			for a := range rank {
				off += idx[a] * v.Strides[a]
			}
			out[r][j] = vals[off]
		}
	}
	return out
}

// checkReduce runs op over a view of vals and compares every row with the
// float64 reference.
func checkReduce(t *testing.T, d *Device, op hal.ReduceOp, dtype hal.DType, vals []float64, v hal.View, reduced int) {
	t.Helper()
	var src hal.Buffer
	if dtype == hal.Int32 {
		iv := make([]int32, len(vals))
		for i, x := range vals {
			iv[i] = int32(x)
			vals[i] = float64(iv[i])
		}
		src = upload32(t, d, iv)
	} else {
		fv := make([]float32, len(vals))
		for i, x := range vals {
			fv[i] = float32(x)
			vals[i] = float64(fv[i])
		}
		src = upload32(t, d, fv)
	}
	defer d.Free(src)
	v.Buf, v.DType = src, dtype
	outShape := v.Shape[:len(v.Shape)-reduced]
	rows := gatherRows(vals, v, reduced)
	outType := dtype
	if op == hal.ArgMax || op == hal.ArgMin {
		outType = hal.Int32
	}
	dst, err := d.Alloc(int64(4*len(rows) + 4))
	require.NoError(t, err)
	defer d.Free(dst)
	require.NoError(t, d.Reduce(op, hal.View{Buf: dst, DType: outType, Shape: outShape, Strides: hal.RowMajorStrides(outShape), Offset: 1}, v, reduced))
	words := download32(t, d, dst, len(rows)+1)[1:]
	for r, row := range rows {
		want := reduceRef(op, row)
		var got float64
		switch {
		case outType == hal.Int32:
			got = float64(int32(words[r]))
		default:
			got = float64(math.Float32frombits(words[r]))
		}
		if dtype == hal.Int32 && (op == hal.Sum || op == hal.Prod) {
			w := int32(0)
			if op == hal.Prod {
				w = 1
			}
			for _, x := range row {
				if op == hal.Sum {
					w += int32(x)
				} else {
					w *= int32(x)
				}
			}
			want = float64(w) // wraps like int32
		}
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got), "%v row %d: got %v, want NaN", op, r, got)
			continue
		}
		tol := 0.0
		if dtype == hal.Float32 && op != hal.ArgMax && op != hal.ArgMin {
			scale := 0.0
			for _, x := range row {
				scale += math.Abs(x)
			}
			switch op {
			case hal.Prod:
				scale = float64(len(row)) * math.Abs(want) / 10
			case hal.LogSumExp:
				scale = math.Abs(want)
			}
			tol = 1e-6*scale + 1e-6
		}
		if !assert.InDelta(t, want, got, tol, "%v %v row %d of %d (n=%d)", op, dtype, r, len(rows), len(row)) {
			return
		}
	}
}

func TestReduceShapes(t *testing.T) { forEachTestDevice(t, testReduceShapes) }

func testReduceShapes(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(1, 2))
	type tc struct {
		shape   []int
		reduced int
		perm    []int // axes of the source buffer's row-major layout, permuted into the view
	}
	cases := []tc{
		{[]int{7}, 1, nil},
		{[]int{1000}, 1, nil},
		{[]int{1025}, 1, nil},
		{[]int{3, 5, 7}, 1, nil},
		{[]int{3, 5, 7}, 2, nil},
		{[]int{3, 5, 7}, 3, nil},
		{[]int{3, 5, 7}, 0, nil},
		{[]int{4, 9, 6}, 1, []int{2, 0, 1}}, // reduce a strided axis
		{[]int{4, 9, 6}, 2, []int{1, 2, 0}},
		{[]int{300, 33}, 1, []int{1, 0}}, // column sums
		{[]int{2, 1, 3, 1, 2, 5}, 4, []int{5, 4, 3, 2, 1, 0}},
		{[]int{5000, 3}, 1, nil},
		{[]int{3, 4, 5}, 1, []int{1, 0, 2}},        // kept axes that do not merge
		{[]int{3, 4, 50, 6}, 2, []int{1, 0, 3, 2}}, // neither do the reduced ones
		{[]int{2, 3, 300}, 2, []int{2, 1, 0}},      // reduced axes with a tree
	}
	for _, c := range cases {
		for _, op := range hal.ReduceOps {
			for _, dtype := range []hal.DType{hal.Float32, hal.Int32} {
				if op == hal.LogSumExp && dtype == hal.Int32 {
					continue
				}
				t.Run(fmt.Sprintf("%v/%v/%v/%d/%v", op, dtype, c.shape, c.reduced, c.perm), func(t *testing.T) {
					view := permutedView(c.shape, c.perm)
					vals := make([]float64, view.Offset+view.Span())
					for i := range vals {
						switch {
						case op == hal.Prod:
							vals[i] = float64(rng.IntN(3) + 1)
							if dtype == hal.Float32 {
								vals[i] = 0.9 + 0.2*rng.Float64()
							}
						case dtype == hal.Int32:
							vals[i] = float64(rng.IntN(21) - 10) // ties for arg
						default:
							vals[i] = rng.NormFloat64()
						}
					}
					checkReduce(t, d, op, dtype, vals, view, c.reduced)
				})
			}
		}
	}
}

// permutedView is a view of the given shape over a row-major buffer whose
// axes are shape permuted by perm (nil: no permutation), at offset 3.
func permutedView(shape, perm []int) hal.View {
	if perm == nil {
		return hal.View{Shape: shape, Strides: hal.RowMajorStrides(shape), Offset: 3}
	}
	stored := make([]int, len(shape))
	for i, p := range perm {
		stored[p] = shape[i]
	}
	rm := hal.RowMajorStrides(stored)
	strides := make([]int, len(shape))
	for i, p := range perm {
		strides[i] = rm[p]
	}
	return hal.View{Shape: slices.Clone(shape), Strides: strides, Offset: 3}
}

func TestReduceSpecialValues(t *testing.T) { forEachTestDevice(t, testReduceSpecialValues) }

func testReduceSpecialValues(t *testing.T, d *Device) {
	nan, inf := math.NaN(), math.Inf(1)
	rows := [][]float64{
		{1, nan, 3, nan},
		{-inf, -inf, -inf},
		{inf, 1, inf},
		{-inf, 2, -inf},
		{5, 5, 2, 5},
		{2, 5, 5, 2},
		{-inf, nan},
		{inf, -inf},
	}
	for _, row := range rows {
		for _, op := range hal.ReduceOps {
			t.Run(fmt.Sprintf("%v/%v", op, row), func(t *testing.T) {
				// Repeat the row across many lanes so the tree decides.
				n := 5000 / len(row) * len(row)
				vals := make([]float64, n+3)
				for i := range n {
					vals[3+i] = row[i%len(row)]
				}
				if op == hal.Prod {
					for i := range vals {
						if !math.IsNaN(vals[i]) && !math.IsInf(vals[i], 0) {
							vals[i] = 1
						}
					}
				}
				checkReduce(t, d, op, hal.Float32, vals, hal.View{Shape: []int{n}, Strides: []int{1}, Offset: 3}, 1)
			})
		}
	}
}

func TestReduceEmpty(t *testing.T) { forEachTestDevice(t, testReduceEmpty) }

func testReduceEmpty(t *testing.T, d *Device) {
	src, err := d.Alloc(16)
	require.NoError(t, err)
	defer d.Free(src)
	dst, err := d.Alloc(8)
	require.NoError(t, err)
	defer d.Free(dst)
	for _, op := range hal.ReduceOps {
		out := hal.View{Buf: dst, DType: hal.Float32, Shape: []int{2}, Strides: []int{1}}
		if op == hal.ArgMax || op == hal.ArgMin {
			out.DType = hal.Int32
		}
		err := d.Reduce(op, out, hal.View{Buf: src, DType: hal.Float32, Shape: []int{2, 0}, Strides: []int{0, 1}}, 1)
		switch op {
		case hal.Sum, hal.Prod, hal.LogSumExp:
			require.NoError(t, err)
			want := map[hal.ReduceOp]float32{hal.Sum: 0, hal.Prod: 1, hal.LogSumExp: float32(math.Inf(-1))}[op]
			assert.Equal(t, []float32{want, want}, downloadF32(t, d, dst, 2), "%v", op)
		default:
			assert.ErrorIs(t, err, hal.ErrInvalid, "%v", op)
		}
	}
}

// TestReduceSegments reduces rows whose lengths straddle the points where
// the plan changes: more lanes, another segment, another pass.
func TestReduceSegments(t *testing.T) { forEachTestDevice(t, testReduceSegments) }

func testReduceSegments(t *testing.T, d *Device) {
	wg := d.workgroupSize()
	perPass := wg * reduceMaxPerLane
	lengths := []int{
		wg*reduceLaneWork - 1, wg * reduceLaneWork, wg*reduceLaneWork + 1,
		reduceMinPerLane * wg * 2, reduceMinPerLane*wg*2 + 1,
		perPass - 1, perPass, perPass + 1,
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range lengths {
		for _, rows := range []int{1, 3} {
			vals := make([]float64, rows*n+3)
			for i := range vals {
				vals[i] = float64(rng.IntN(2_000_001)-1_000_000) / 64 // exact in float32
			}
			view := hal.View{Shape: []int{rows, n}, Strides: []int{n, 1}, Offset: 3}
			// ArgMin runs for both dtypes: their passes over partials
			// differ only in the accumulator type.
			for _, op := range []hal.ReduceOp{hal.Sum, hal.ArgMin, hal.LogSumExp} {
				for _, dt := range []hal.DType{hal.Float32, hal.Int32} {
					if op == hal.LogSumExp && dt == hal.Int32 {
						continue
					}
					t.Run(fmt.Sprintf("%v/%v/%dx%d", op, dt, rows, n), func(t *testing.T) {
						checkReduce(t, d, op, dt, slices.Clone(vals), view, 1)
					})
				}
			}
		}
		t.Logf("n=%d: plan %+v", n, planReduce(1, n, wg))
	}
}

// TestReducePlan checks the plan's invariants over many row shapes: every
// element in exactly one segment, a bounded loop per invocation.
func TestReducePlan(t *testing.T) {
	for _, wg := range []int{64, 256, 1024} {
		for _, rows := range []int{1, 2, 3, 255, 256, 257, 100000} {
			for _, n := range []int{0, 1, 2, 7, 8, 9, 255, 2049, 16385, 1 << 20, 1<<20 + 1, 1 << 25, 1<<28 + 3} {
				p := planReduce(rows, n, wg)
				desc := fmt.Sprintf("wg %d, %d rows of %d: %+v", wg, rows, n, p)
				require.True(t, p.lanes >= 1 && p.lanes <= wg && p.lanes&(p.lanes-1) == 0, desc)
				require.True(t, p.segLen%p.lanes == 0 && p.segLen/p.lanes <= reduceMaxPerLane, desc)
				require.True(t, p.segs >= 1 && p.segs*p.segLen >= n && (p.segs-1)*p.segLen < max(n, 1), desc)
			}
		}
	}
}

// TestReduceHuge sums more elements than float32 counts exactly: a serial
// float32 sum of ones would stop at 2²⁴.
func TestReduceHuge(t *testing.T) { forEachTestDevice(t, testReduceHuge) }

func testReduceHuge(t *testing.T, d *Device) {
	const n = 1<<24 + 1<<20 + 7
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	ones[n-2] = 3 // the maximum, near the end
	src := upload32(t, d, ones)
	defer d.Free(src)
	dst, err := d.Alloc(4)
	require.NoError(t, err)
	defer d.Free(dst)
	in := hal.Contiguous(src, hal.Float32, n)
	out := hal.Contiguous(dst, hal.Float32)

	require.NoError(t, d.Reduce(hal.Sum, out, in, 1))
	assert.Equal(t, float32(n+2), downloadF32(t, d, dst, 1)[0])

	require.NoError(t, d.Reduce(hal.ArgMax, hal.Contiguous(dst, hal.Int32), in, 1))
	assert.Equal(t, int32(n-2), downloadI32(t, d, dst, 1)[0])

	require.NoError(t, d.Reduce(hal.LogSumExp, out, in, 1))
	want := 1 + math.Log(float64(n-1)+math.Exp(2)) // ln((n−1)·e + e³)
	assert.InDelta(t, want, downloadF32(t, d, dst, 1)[0], 1e-6*want)
}

// reduceModes are the ways a device may reduce: the hardware plan (fewer,
// longer passes) forced on the software adapters at sizes under their loop
// cap, and the subgroup combine on and off where the device has subgroups.
func reduceModes(d *Device) map[string]reduceMode {
	modes := map[string]reduceMode{
		"software":      {},
		"hardware-plan": {hardware: true},
	}
	if d.rt.HasSubgroups() {
		modes["software+subgroups"] = reduceMode{subgroups: true}
		modes["hardware-plan+subgroups"] = reduceMode{hardware: true, subgroups: true}
	}
	return modes
}

// withReduceMode runs f with d's reductions in mode m, then restores d's
// own mode. Not for concurrent tests.
func withReduceMode(t *testing.T, d *Device, m reduceMode, f func(t *testing.T)) {
	old := d.reduce
	d.reduce = m
	defer func() { d.reduce = old }()
	f(t)
}

// TestReduceModes runs the reduction tests, and the conformance suite's
// reduction and matrix-product kernels (f16, the dot variant), in every
// mode: subgroups on lavapipe, none on llvmpipe and forced off on lavapipe,
// the hardware plan on both.
func TestReduceModes(t *testing.T) {
	forEachTestDevice(t, func(t *testing.T, d *Device) {
		for name, m := range reduceModes(d) {
			t.Run(name, func(t *testing.T) {
				withReduceMode(t, d, m, func(t *testing.T) {
					t.Run("shapes", func(t *testing.T) { testReduceShapes(t, d) })
					t.Run("special", func(t *testing.T) { testReduceSpecialValues(t, d) })
					t.Run("empty", func(t *testing.T) { testReduceEmpty(t, d) })
					t.Run("segments", func(t *testing.T) { testReduceSegments(t, d) })
					t.Run("odd", func(t *testing.T) { testReduceOdd(t, d) })
					t.Run("huge", func(t *testing.T) { testReduceHuge(t, d) })
					t.Run("dot", func(t *testing.T) { testReduceDot(t, d) })
					t.Run("conformance", func(t *testing.T) { haltest.Run(t, d) })
				})
			})
		}
	})
}

// testReduceOdd reduces rows of odd lengths around the subgroup and lane
// counts with every op, NaN and ±Inf mixed in at random places.
func testReduceOdd(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 31, 33, 63, 65, 127, 129, 1023, 4097, 70001} {
		for _, rows := range []int{1, 5, 600} {
			if rows*n > 1<<20 {
				continue
			}
			for _, op := range hal.ReduceOps {
				for _, special := range []float64{0, math.NaN(), math.Inf(1), math.Inf(-1)} {
					t.Run(fmt.Sprintf("%v/%dx%d/%v", op, rows, n, special), func(t *testing.T) {
						vals := make([]float64, rows*n+3)
						for i := range vals {
							vals[i] = rng.NormFloat64()
							if op == hal.Prod {
								vals[i] = 0.99 + 0.02*rng.Float64()
							}
						}
						if special != 0 {
							for range 1 + rows/3 {
								vals[3+rng.IntN(rows*n)] = special
							}
						}
						checkReduce(t, d, op, hal.Float32, vals, hal.View{Shape: []int{rows, n}, Strides: []int{n, 1}, Offset: 3}, 1)
					})
				}
			}
		}
	}
}

// TestReducePlanHW checks the hardware plan: every element in exactly one
// segment, a loop bounded for accuracy, and a full reduction in at most
// two passes.
func TestReducePlanHW(t *testing.T) {
	for _, wg := range []int{64, 256, 1024} {
		for _, rows := range []int{1, 2, 3, 255, 256, 257, 100000} {
			for _, n := range []int{0, 1, 2, 7, 8, 9, 255, 2049, 16385, 1 << 20, 1<<20 + 1, 1 << 24, 1 << 25, 1<<28 + 3} {
				p := planReduceHW(rows, n, wg)
				desc := fmt.Sprintf("wg %d, %d rows of %d: %+v", wg, rows, n, p)
				require.True(t, p.lanes >= 1 && p.lanes <= wg && p.lanes&(p.lanes-1) == 0, desc)
				require.True(t, p.segLen%p.lanes == 0 && p.segLen/p.lanes <= reduceHWMaxPerLane, desc)
				require.True(t, p.segs >= 1 && p.segs*p.segLen >= n && (p.segs-1)*p.segLen < max(n, 1), desc)
				if n <= wg*reduceHWMaxPerLane {
					// One pass, or one more over the partials.
					require.True(t, p.segs == 1 || planReduceHW(rows, p.segs, wg).segs == 1, desc)
				}
			}
		}
	}
}

// testReduceDot runs matrix-vector products (the reduction's dot variant)
// with long K, a transposed matrix and alpha, beta.
func testReduceDot(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ m, k int }{{3, 5000}, {1, 70001}, {300, 37}} {
		for _, transposed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%d/T=%v", c.m, c.k, transposed), func(t *testing.T) {
				m, k := c.m, c.k
				a := make([]float32, m*k)
				x := make([]float32, k)
				y := make([]float32, m)
				for i := range a {
					a[i] = float32(rng.NormFloat64())
				}
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				for i := range y {
					y[i] = float32(rng.NormFloat64())
				}
				// a[i][j] lives at i*k+j, or at j*m+i when transposed.
				stored := a
				av := hal.View{Shape: []int{m, k}, Strides: []int{k, 1}}
				if transposed {
					stored = make([]float32, m*k)
					for i := range m {
						for j := range k {
							stored[j*m+i] = a[i*k+j]
						}
					}
					av.Strides = []int{1, m}
				}
				ab, xb, yb := upload32(t, d, stored), upload32(t, d, x), upload32(t, d, y)
				defer d.Free(ab)
				defer d.Free(xb)
				defer d.Free(yb)
				av.Buf, av.DType = ab, hal.Float32
				alpha, beta := -1.5, 0.25
				require.NoError(t, d.MatMul(hal.Contiguous(yb, hal.Float32, m, 1), av, hal.Contiguous(xb, hal.Float32, k, 1), alpha, beta))
				got := downloadF32(t, d, yb, m)
				for i := range m {
					s, scale := 0.0, 0.0
					for j := range k {
						p := float64(a[i*k+j]) * float64(x[j])
						s += p
						scale += math.Abs(p)
					}
					want := alpha*s + beta*float64(y[i])
					tol := 1e-6*(math.Abs(alpha)*scale+math.Abs(beta*float64(y[i]))) + 1e-6
					require.InDelta(t, want, got[i], tol, "row %d", i)
				}
			})
		}
	}
}

// TestReduceModesChunked runs the windowed reductions (pieces of rows
// folded into partials) in every mode.
func TestReduceModesChunked(t *testing.T) {
	forEachChunkPair(t, func(t *testing.T, p chunkPair) {
		for name, m := range reduceModes(p.big) {
			t.Run(name, func(t *testing.T) {
				withReduceMode(t, p.small, m, func(t *testing.T) {
					withReduceMode(t, p.big, m, func(t *testing.T) {
						t.Run("float32", func(t *testing.T) { testChunkReduce(t, p) })
						t.Run("int32", func(t *testing.T) { testChunkReduceInt32(t, p) })
					})
				})
			})
		}
	})
}

// TestReduceHWDispatches checks the hardware plan's pass counts, forced on
// the software adapters: a full reduction in two dispatches, a row
// reduction in one.
func TestReduceHWDispatches(t *testing.T) {
	forEachTestDevice(t, func(t *testing.T, d *Device) {
		withReduceMode(t, d, reduceMode{hardware: true, subgroups: d.rt.HasSubgroups()}, func(t *testing.T) {
			for _, c := range []struct{ rows, n, passes int }{{1, 1 << 20, 2}, {1, 1<<24 + 5, 2}, {4096, 1024, 1}, {3, 1000, 1}} {
				src, err := d.Alloc(int64(4 * c.rows * c.n))
				require.NoError(t, err)
				dst, err := d.Alloc(int64(4 * c.rows))
				require.NoError(t, err)
				for _, op := range []hal.ReduceOp{hal.Sum, hal.Max, hal.LogSumExp} {
					got := dispatchesOf(t, d, func() {
						require.NoError(t, d.Reduce(op, hal.Contiguous(dst, hal.Float32, c.rows), hal.Contiguous(src, hal.Float32, c.rows, c.n), 1))
					})
					assert.EqualValues(t, c.passes, got, "%v of %d×%d", op, c.rows, c.n)
				}
				d.Free(src)
				d.Free(dst)
			}
		})
	})
}
