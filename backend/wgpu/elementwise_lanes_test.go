//go:build cgo

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// These tests cover the contiguous path of the elementwise and fused
// kernels (several elements per invocation, vec4 when every offset is a
// multiple of 4): odd lengths, unaligned offsets, every dtype, in place,
// which variant a launch takes, and that values depending on the index
// (Fill, Random) are the general path's to the bit.

// lanesLengths are the lengths the tests run: around the 4 and 8 elements
// of an invocation and the 1024 of a workgroup, a whole number of 8-lane
// workgroups (16384), and one of many workgroups.
var lanesLengths = []int{1, 3, 4, 5, 7, 8, 9, 1023, 1025, 1028, 16384, 70001}

// lanesVariants are the elements per invocation of the contiguous path
// (EWLanesEnv): each test runs both.
var lanesVariants = []int{4, 8}

// withLanes makes d's contiguous path compute lanes elements per
// invocation until the returned function runs.
func withLanes(d *Device, lanes int) func() {
	before := d.ewLanes
	d.ewLanes = lanes
	return func() { d.ewLanes = before }
}

// lanesOffsets are the element offsets of dst, a and b: aligned (vec4),
// and each of them off a multiple of 4 (the scalar variant).
var lanesOffsets = [][3]int{{0, 0, 0}, {4, 8, 12}, {1, 0, 0}, {0, 3, 0}, {0, 0, 2}, {5, 5, 5}}

// watchKernels records the names of the kernels d dispatches until the
// returned function runs.
func watchKernels(d *Device) (names func() []string, stop func()) {
	var mu sync.Mutex
	var seen []string
	f := func(name string) {
		mu.Lock()
		seen = append(seen, name)
		mu.Unlock()
	}
	d.posted.Store(&f)
	return func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), seen...)
		}, func() {
			d.posted.Store(nil)
		}
}

// ewRaw uploads raw bytes (elems elements of size bytes each) and returns
// the view of dtype dt at offset over n elements.
func ewRaw(t *testing.T, d *Device, raw []byte, dt hal.DType, offset, n int) hal.View {
	t.Helper()
	b, err := d.Alloc(int64(max(len(raw), 4)))
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(b) })
	require.NoError(t, d.Write(b, raw))
	return hal.View{Buf: b, DType: dt, Offset: offset, Shape: []int{n}, Strides: []int{1}}
}

// f16Exact is the float16 bits of v, which must be 0 or a normal float16
// value (small integers here).
func f16Exact(v float32) uint16 {
	if v == 0 {
		return 0
	}
	b := math.Float32bits(v)
	return uint16(b>>31)<<15 | uint16((b>>23&0xff)-127+15)<<10 | uint16(b>>13&0x3ff)
}

// f16Value is the float32 value of float16 bits h (normal or zero).
func f16Value(h uint16) float32 {
	if h&0x7fff == 0 {
		return math.Float32frombits(uint32(h) << 16)
	}
	return math.Float32frombits(uint32(h>>15)<<31 | (uint32(h>>10&0x1f)-15+127)<<23 | uint32(h&0x3ff)<<13)
}

// lanesOperand is n random small integers as dtype dt (exact in every
// dtype, so that sums are exact) at offset, with garbage before.
func lanesOperand(t *testing.T, d *Device, rng *rand.Rand, dt hal.DType, offset, n int) (hal.View, []float64) {
	vals := make([]float64, n)
	raw := make([]byte, dt.Size()*(offset+n))
	for i := range offset + n {
		v := float32(rng.IntN(201) - 100)
		if i >= offset {
			vals[i-offset] = float64(v)
		}
		switch dt {
		case hal.Float32:
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		case hal.Int32:
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(v)))
		case hal.Float16:
			binary.LittleEndian.PutUint16(raw[2*i:], f16Exact(v))
		}
	}
	return ewRaw(t, d, raw, dt, offset, n), vals
}

// lanesRead reads view v's n values (Float32, Int32 or Float16).
func lanesRead(t *testing.T, d *Device, v hal.View) []float64 {
	t.Helper()
	n := v.Elements()
	raw := make([]byte, v.DType.Size()*(v.Offset+n))
	require.NoError(t, d.Read(v.Buf, raw))
	out := make([]float64, n)
	for i := range out {
		at := v.Offset + i
		switch v.DType {
		case hal.Float32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*at:])))
		case hal.Int32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(raw[4*at:])))
		case hal.Float16:
			out[i] = float64(f16Value(binary.LittleEndian.Uint16(raw[2*at:])))
		}
	}
	return out
}

// TestElementwiseLanes runs Add, Sub in place, ReLU and Copy over every
// length and offset of the contiguous path, on its own and fused, in
// every dtype the device holds, against float64 references, and checks
// that the launches take the vec4 variant exactly when every offset is a
// multiple of 4, without a single-component tail exactly when the length
// is one too.
func TestElementwiseLanes(t *testing.T) { forEachTestDevice(t, testElementwiseLanes) }

func testElementwiseLanes(t *testing.T, d *Device) {
	dtypes := []hal.DType{hal.Float32, hal.Int32}
	if d.rt.HasF16() {
		dtypes = append(dtypes, hal.Float16)
	}
	for _, lanes := range lanesVariants {
		for _, fused := range []bool{false, true} {
			if fused && !fusionEnabled() {
				continue
			}
			for _, dt := range dtypes {
				for _, n := range lanesLengths {
					for oi, off := range lanesOffsets {
						if n > 10000 && oi > 2 {
							continue // the long ones: aligned and one unaligned case
						}
						name := fmt.Sprintf("lanes=%d/fused=%t/%v/n=%d/offsets=%v", lanes, fused, dt, n, off)
						t.Run(name, func(t *testing.T) {
							testLanesCase(t, d, lanes, fused, dt, n, off)
						})
					}
				}
			}
		}
	}
}

func testLanesCase(t *testing.T, d *Device, lanes int, fused bool, dt hal.DType, n int, off [3]int) {
	defer withLanes(d, lanes)()
	if !fused {
		defer unfused(d)()
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(off[0]*16+off[1]*4+off[2])))
	a, av := lanesOperand(t, d, rng, dt, off[1], n)
	b, bv := lanesOperand(t, d, rng, dt, off[2], n)
	dst, _ := lanesOperand(t, d, rng, dt, off[0], n)
	cp, _ := lanesOperand(t, d, rng, dt, off[0], n)
	names, stop := watchKernels(d)
	defer stop()

	// dst = a + b; dst = dst − a (in place); dst = relu(dst); cp = a.
	require.NoError(t, d.Binary(hal.Add, dst, a, b))
	require.NoError(t, d.Binary(hal.Sub, dst, dst, a))
	require.NoError(t, d.Unary(hal.ReLU, dst, dst, hal.Args{}))
	require.NoError(t, d.Copy(cp, a))
	got, gotCopy := lanesRead(t, d, dst), lanesRead(t, d, cp)
	for i := range n {
		want := max((av[i]+bv[i])-av[i], 0)
		if got[i] != want {
			t.Fatalf("element %d: relu((a + b) − a) = %v, want %v (a %v, b %v)", i, got[i], want, av[i], bv[i])
		}
		if gotCopy[i] != av[i] {
			t.Fatalf("element %d: copy %v, want %v", i, gotCopy[i], av[i])
		}
	}

	aligned := off[0]%4 == 0 && off[1]%4 == 0 && off[2]%4 == 0
	whole := aligned && n%4 == 0 // no partial vec4 at the end
	var kernels []string
	for _, name := range names() {
		if fused && strings.HasPrefix(name, "fused ") || !fused && strings.HasPrefix(name, "binary.add(") {
			kernels = append(kernels, name)
		}
	}
	require.NotEmpty(t, kernels, "no kernel of the case was dispatched")
	for _, name := range kernels {
		if fused {
			want := fmt.Sprintf("\nunravel false %d %t %t ", lanes, aligned, whole)
			assert.Contains(t, name, want, "the fused kernel's path")
		} else {
			assert.Contains(t, name, fmt.Sprintf(" lanes=%d", lanes), "the contiguous path")
			assert.Equal(t, aligned, strings.Contains(name, " vec4"), "vec4 exactly when every offset is a multiple of 4: %s", name)
			assert.Equal(t, whole, strings.Contains(name, " whole"), "whole vec4s only exactly when aligned and n is a multiple of 4: %s", name)
		}
	}
}

// TestElementwiseLanesMatchGeneral checks that Fill (a ramp in float32
// and int32) and Random give the same bits on the contiguous path, on
// its own and fused, as on the general path of one element per
// invocation, at aligned and unaligned offsets and odd lengths.
func TestElementwiseLanesMatchGeneral(t *testing.T) {
	forEachTestDevice(t, testElementwiseLanesMatchGeneral)
}

func testElementwiseLanesMatchGeneral(t *testing.T, d *Device) {
	type run struct {
		name string
		dt   hal.DType
		do   func(dst hal.View) error
	}
	runs := []run{
		{"fill-float", hal.Float32, func(v hal.View) error { return d.Fill(v, 0.1, 0.3) }},
		{"fill-int", hal.Int32, func(v hal.View) error { return d.Fill(v, -7, 3) }},
		{"uniform", hal.Float32, func(v hal.View) error { return d.Random(v, hal.Uniform, 0, 42, 5) }},
		{"normal", hal.Float32, func(v hal.View) error { return d.Random(v, hal.Normal, 0, 42, 5) }},
		{"bernoulli", hal.Float32, func(v hal.View) error { return d.Random(v, hal.Bernoulli, 0.3, 7, 0) }},
	}
	if d.rt.HasF16() {
		runs = append(runs, run{"fill-f16", hal.Float16, func(v hal.View) error { return d.Fill(v, 0.25, 0.5) }})
	}
	for _, r := range runs {
		for _, n := range []int{1, 5, 9, 1023, 1025, 16389} {
			for _, off := range []int{0, 3, 4} {
				for _, lanes := range lanesVariants {
					t.Run(fmt.Sprintf("%s/n=%d/offset=%d/lanes=%d", r.name, n, off, lanes), func(t *testing.T) {
						defer withLanes(d, lanes)()
						rawOf := func(contiguous, fused bool) []uint32 {
							if !fused {
								defer unfused(d)()
							}
							ewContiguous = contiguous
							defer func() { ewContiguous = true }()
							v := ewRaw(t, d, make([]byte, r.dt.Size()*(off+n)), r.dt, off, n)
							require.NoError(t, r.do(v))
							raw := make([]byte, r.dt.Size()*(off+n))
							require.NoError(t, d.Read(v.Buf, raw))
							words := make([]uint32, n)
							for i := range words {
								if r.dt == hal.Float16 {
									words[i] = uint32(binary.LittleEndian.Uint16(raw[2*(off+i):]))
								} else {
									words[i] = binary.LittleEndian.Uint32(raw[4*(off+i):])
								}
							}
							return words
						}
						general := rawOf(false, false)
						assert.Equal(t, general, rawOf(true, false), "the contiguous path")
						if fusionEnabled() {
							assert.Equal(t, general, rawOf(true, true), "the fused contiguous path")
							assert.Equal(t, general, rawOf(false, true), "the fused general path")
						}
					})
				}
			}
		}
	}
}

// TestFusedSameOperand checks x / x and x − x where both operands are one
// view or one register: NaN for 0/0, ±Inf/±Inf and Inf − Inf, as IEEE
// says, though WGSL would let a compiler fold them to 1 and 0.
func TestFusedSameOperand(t *testing.T) { forEachTestDevice(t, testFusedSameOperand) }

func testFusedSameOperand(t *testing.T, d *Device) {
	inf := float32(math.Inf(1))
	x := []float32{0, inf, -inf, 2, -3, 0, 1, inf, 5}
	for _, fused := range []bool{false, true} {
		t.Run(fmt.Sprintf("fused=%t", fused), func(t *testing.T) {
			if !fused {
				defer unfused(d)()
			}
			a := ewUpload(t, d, x)
			q, s := ewUpload(t, d, make([]float32, len(x))), ewUpload(t, d, make([]float32, len(x)))
			require.NoError(t, d.Binary(hal.Div, q, a, a))
			require.NoError(t, d.Binary(hal.Sub, s, a, a))
			// A register read twice: e = exp(a) then e / e and e − e.
			e := ewUpload(t, d, make([]float32, len(x)))
			qe, se := ewUpload(t, d, make([]float32, len(x))), ewUpload(t, d, make([]float32, len(x)))
			require.NoError(t, d.Unary(hal.Exp, e, a, hal.Args{}))
			require.NoError(t, d.Binary(hal.Div, qe, e, e))
			require.NoError(t, d.Binary(hal.Sub, se, e, e))
			for i, v := range x {
				check := func(what string, got, want float32) {
					if !sameFloat(got, want) {
						t.Errorf("%s of %v: %v, want %v", what, v, got, want)
					}
				}
				// WGSL's division is exact to 2.5 ULP, not correctly rounded
				// (NVIDIA multiplies by an approximate reciprocal: e / e of
				// exp(−3) is 1.0000001 on an H200); NaN and ±Inf stay exact.
				checkDiv := func(what string, got, want float32) {
					ulp := math.Nextafter32(want, float32(math.Inf(1))) - want
					if math.IsNaN(float64(want)) || math.IsInf(float64(want), 0) ||
						!(math.Abs(float64(got-want)) <= 2.5*float64(ulp)) {
						check(what, got, want)
					}
				}
				checkDiv("x / x", ewFloats(t, d, q.Buf, len(x))[i], v/v)
				check("x − x", ewFloats(t, d, s.Buf, len(x))[i], v-v)
				ev := float32(math.Exp(float64(v)))
				checkDiv("exp(x) / exp(x)", ewFloats(t, d, qe.Buf, len(x))[i], ev/ev)
				check("exp(x) − exp(x)", ewFloats(t, d, se.Buf, len(x))[i], ev-ev)
			}
		})
	}
}

// BenchmarkElementwiseLanesAB measures add, relu and copy of float32 on
// the contiguous path against the general path of one element per
// invocation (ewContiguous off), fused and not, interleaved in rounds
// within one process so that a shared machine's drift hits both alike.
// It reports each path's GB/s (the bytes that must move) and their
// ratio, the median over the rounds.
func BenchmarkElementwiseLanesAB(b *testing.B) {
	benchmarkElementwiseAB(b, "general", "lanes", func(d *Device, second bool) { ewContiguous = second },
		func(d *Device) { ewContiguous = true })
}

// BenchmarkElementwiseLanes8AB measures the same ops on the contiguous
// path with 4 elements per invocation against 8 (EWLanesEnv), in rounds:
// the comparison the knob leaves to a GPU.
func BenchmarkElementwiseLanes8AB(b *testing.B) {
	lanes := map[bool]int{false: 4, true: 8}
	benchmarkElementwiseAB(b, "lanes4", "lanes8", func(d *Device, second bool) { d.ewLanes = lanes[second] },
		func(d *Device) {
			opened, err := ewLanesFromEnv() // what the device opened with
			require.NoError(b, err)
			d.ewLanes = opened
		})
}

// benchmarkElementwiseAB times add, relu and copy of 1M, 4M and 16M
// float32 elements, fused and not, under variant set(d, false) (first)
// and set(d, true) (second) in alternating rounds; reset restores d.
func benchmarkElementwiseAB(b *testing.B, first, second string, set func(d *Device, second bool), reset func(d *Device)) {
	d := openTestDevice(b)
	for _, n := range []int{1 << 20, 1 << 22, 1 << 24} {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(i%1000) - 500
		}
		x, y, out := ewUpload(b, d, vals), ewUpload(b, d, vals), ewUpload(b, d, make([]float32, n))
		ops := []struct {
			name  string
			bytes int
			do    func() error
		}{
			{"add", 12, func() error { return d.Binary(hal.Add, out, x, y) }},
			{"relu", 8, func() error { return d.Unary(hal.ReLU, out, x, hal.Args{}) }},
			{"copy", 8, func() error { return d.Copy(out, x) }},
		}
		for _, op := range ops {
			for _, fused := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/%dM/fused=%t", op.name, n>>20, fused), func(b *testing.B) {
					if !fused {
						defer unfused(d)()
					}
					defer reset(d)
					timeOf := func(useSecond bool, iters int) float64 {
						set(d, useSecond)
						require.NoError(b, d.Sync())
						start := time.Now()
						for range iters {
							require.NoError(b, op.do())
							if fused {
								d.fuse.flush() // one kernel per op, as unfused
							}
						}
						require.NoError(b, d.Sync())
						return time.Since(start).Seconds() / float64(iters)
					}
					timeOf(true, 1) // compile both, warm the pool
					timeOf(false, 1)
					iters := 3
					var as, bs, ratio []float64
					for range max(b.N, 5) {
						ta, tb := timeOf(false, iters), timeOf(true, iters)
						as, bs, ratio = append(as, ta), append(bs, tb), append(ratio, ta/tb)
					}
					gb := float64(op.bytes*n) / 1e9
					b.ReportMetric(gb/median(as), "GB/s-"+first)
					b.ReportMetric(gb/median(bs), "GB/s-"+second)
					b.ReportMetric(median(ratio), "speedup")
				})
			}
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestEWLanesFromEnv checks the values EWLanesEnv takes: unset is 4, 4
// and 8 are themselves, anything else is ErrInvalid naming the variable.
func TestEWLanesFromEnv(t *testing.T) {
	for v, want := range map[string]int{"": 4, "4": 4, " 8 ": 8} {
		t.Setenv(EWLanesEnv, v)
		got, err := ewLanesFromEnv()
		require.NoError(t, err, "%q", v)
		assert.Equal(t, want, got, "%q", v)
	}
	for _, v := range []string{"2", "16", "eight", "-4"} {
		t.Setenv(EWLanesEnv, v)
		_, err := ewLanesFromEnv()
		assert.ErrorIs(t, err, hal.ErrInvalid, "%q", v)
		assert.ErrorContains(t, err, EWLanesEnv, "%q", v)
	}
}
