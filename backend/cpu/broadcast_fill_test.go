package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/hal"
)

// TestFillRun checks fillRun against a store per element, bit for bit
// (−0 and a NaN payload as uint32 patterns), on lengths around its short
// loop, its doubling copies and its fillChunk cap, and that it writes
// nothing past its slice.
func TestFillRun(t *testing.T) {
	var lengths []int
	for n := range 40 {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 63, 64, 65, fillChunk-1, fillChunk, fillChunk+1, 2*fillChunk+7, 5000, 70001)
	for _, x := range []uint32{0, 0x80000000, 0x7fc00123, 0x3f800000} {
		for _, n := range lengths {
			buf := make([]uint32, n+3)
			for i := range buf {
				buf[i] = 0xdeadbeef
			}
			fillRun(buf[1:1+n], x)
			require.Equal(t, uint32(0xdeadbeef), buf[0], "n=%d: wrote before the run", n)
			for i := 1; i <= n; i++ {
				if buf[i] != x {
					require.Failf(t, "mismatch", "n=%d value %#x element %d: got %#x", n, x, i-1, buf[i])
				}
			}
			require.Equal(t, []uint32{0xdeadbeef, 0xdeadbeef}, buf[n+1:], "n=%d: wrote past the run", n)
		}
	}
}

// TestCopyBroadcastScalar copies a value broadcast over every axis (the
// fill fast path) and one broadcast over some axes only (the gather's
// long stride-0 runs) into contiguous views of every dtype, at 1, 2 and
// 7 workers, and expects each element to be the source element at the
// position forEachPos computes, bit for bit (−0 keeps its sign).
func TestCopyBroadcastScalar(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(9, 17))
	values := []float64{math.Copysign(0, -1), 0, -1.5, 0.1, 1e10, math.Inf(1), math.NaN()}
	cases := []struct {
		shape, strides []int
	}{
		{[]int{1}, []int{0}},
		{[]int{5}, []int{0}},
		{[]int{3, 1, 7}, []int{0, 0, 0}},
		{[]int{64, 16, 29, 31}, []int{0, 0, 0, 0}}, // fill path, several chunks
		{[]int{70001}, []int{0}},
		{[]int{7, 5, 33, 31}, []int{0, 1, 0, 0}},  // a channel bias: runs of 1023
		{[]int{3, 2, 3000}, []int{0, 1, 0}},       // runs longer than a block
		{[]int{4, 9}, []int{1, 0}},                // short runs
		{[]int{2, 6, 1, 5000}, []int{6, 1, 9, 0}}, // strided outer axes
	}
	for _, workers := range []int{1, 2, 7} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
			for _, dt := range hal.DTypes {
				for ci, c := range cases {
					extent := 0
					for i, n := range c.shape {
						extent += (n - 1) * c.strides[i]
					}
					const off = 2
					store := randn(rng, off+extent+1)
					store[off] = values[(ci+workers)%len(values)]
					if dt.IsInteger() {
						for i := range store {
							store[i] = math.Round(store[i] * 100)
						}
						store[off] = -7
					}
					src := hal.View{Buf: h.buffer(dt, store), DType: dt, Offset: off, Shape: c.shape, Strides: c.strides}
					dst := h.zeros(dt, c.shape...)
					require.NoError(t, h.dev.Copy(dst, src))
					got := h.read(dst)
					stored := decode(dt, encode(dt, store))
					i := 0
					forEachPos(c.shape, c.strides, off, func(pos int) {
						want := stored[pos]
						if !sameBits(got[i], want) {
							require.Failf(t, "mismatch", "%v workers=%d shape %v strides %v element %d: got %v want %v", dt, workers, c.shape, c.strides, i, got[i], want)
						}
						i++
					})
				}
			}
		}()
	}
}

// TestAddChannelBias adds a [C] bias broadcast over N, H and W (strides
// [0, 1, 0, 0], as a convolution's bias) to an [N, C, H, W] tensor, which
// loads the bias through fillRun, against a float64 sum rounded to dt
// (float16's in float32, as the kernel computes it).
func TestAddChannelBias(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(3, 5))
	for _, workers := range []int{1, 2, 7} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
			for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Float16} {
				for _, s := range [][4]int{{1, 1, 1, 1}, {3, 5, 7, 9}, {64, 16, 28, 28}, {2, 3, 45, 47}} {
					n, c, hh, w := s[0], s[1], s[2], s[3]
					xs, bs := randn(rng, n*c*hh*w), randn(rng, c+1)
					x := h.view(dt, xs, n, c, hh, w)
					b := hal.View{Buf: h.buffer(dt, bs), DType: dt, Offset: 1, Shape: []int{n, c, hh, w}, Strides: []int{0, 1, 0, 0}}
					dst := h.zeros(dt, n, c, hh, w)
					require.NoError(t, h.dev.Binary(hal.Add, dst, x, b))
					got := h.read(dst)
					for i, v := range got {
						a, b := round(dt, xs[i]), round(dt, bs[1+i/(hh*w)%c])
						want := round(dt, a+b)
						if dt == hal.Float16 { // computed in float32, then rounded
							want = round(dt, float64(float32(a)+float32(b)))
						}
						if v != want {
							require.Failf(t, "mismatch", "%v workers=%d %v element %d: got %v want %v", dt, workers, s, i, v, want)
						}
					}
				}
			}
		}()
	}
}

// sameBits reports whether a and b are the same float64 bits, but any
// NaN equals any NaN (decode widens payloads differently per dtype).
func sameBits(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}
