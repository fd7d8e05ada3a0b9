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

// operandLayouts are the layouts the comparison and Where fast paths take:
// a contiguous vector, or one value broadcast through stride 0.
var operandLayouts = []string{"dense", "scalar"}

// laidOut uploads vals as a dense view of n elements, or vals[0] broadcast
// to n elements, and returns the view with the value of element i.
func laidOut(h harness, dt hal.DType, vals []float64, n int, layout string) (hal.View, func(i int) float64) {
	if layout == "scalar" {
		b := h.buffer(dt, vals[:1])
		return hal.View{Buf: b, DType: dt, Shape: []int{n}, Strides: []int{0}}, func(int) float64 { return vals[0] }
	}
	return h.view(dt, vals[:n], n), func(i int) float64 { return vals[i] }
}

// TestCompareFast runs every comparison over dense and broadcast scalar
// operands of odd sizes, NaN and signed zeros included, against float64.
func TestCompareFast(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 1000, 1025, 70000} {
		for _, dt := range []hal.DType{hal.Float32, hal.Float64, hal.Int32} {
			for _, op := range hal.BinaryOps {
				if !op.IsComparison() {
					continue
				}
				for _, la := range operandLayouts {
					for _, lb := range operandLayouts {
						xa, xb := testValues(rng, n, dt), testValues(rng, n, dt)
						rng.Shuffle(len(xa), func(i, j int) { xa[i], xa[j] = xa[j], xa[i] })
						for i := 0; i < n; i += 3 {
							xb[i] = xa[i] // equal pairs
						}
						a, va := laidOut(h, dt, xa, n, la)
						b, vb := laidOut(h, dt, xb, n, lb)
						dst := h.zeros(hal.Int32, n)
						require.NoError(t, h.dev.Binary(op, dst, a, b))
						want := make([]float64, n)
						for i := range want {
							want[i] = binaryRef[op](va(i), vb(i))
						}
						assert.Equal(t, want, h.read(dst), "%v %v n=%d a %s b %s", op, dt, n, la, lb)
					}
				}
			}
		}
	}
}

// TestWhereFast selects between dense and broadcast scalar operands with
// masks holding assorted nonzero int32s, MinInt32 included.
func TestWhereFast(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 1000, 1025, 70000} {
		mask := make([]float64, n)
		for i := range mask {
			switch rng.IntN(4) {
			case 1:
				mask[i] = 1
			case 2:
				mask[i] = math.MinInt32
			case 3:
				mask[i] = float64(rng.Int32N(1000) - 500)
			}
		}
		c := h.view(hal.Int32, mask, n)
		for _, dt := range hal.DTypes {
			for _, la := range operandLayouts {
				for _, lb := range operandLayouts {
					t.Run(fmt.Sprintf("%d/%v/%s/%s", n, dt, la, lb), func(t *testing.T) {
						xa, xb := testValues(rng, n, dt), testValues(rng, n, dt)
						a, va := laidOut(h, dt, xa, n, la)
						b, vb := laidOut(h, dt, xb, n, lb)
						dst := h.zeros(dt, n)
						require.NoError(t, h.dev.Where(dst, c, a, b))
						got := h.read(dst)
						for i := range n {
							want := vb(i)
							if mask[i] != 0 {
								want = va(i)
							}
							if math.IsNaN(want) {
								require.True(t, math.IsNaN(got[i]), "element %d", i)
								continue
							}
							require.Equal(t, math.Float64bits(want), math.Float64bits(got[i]), "element %d: want %v got %v", i, want, got[i])
						}
					})
				}
			}
		}
	}
}
