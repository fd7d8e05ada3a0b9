//go:build cgo

package wgpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// TestSoftmaxSegmented forces the two-dispatch path for long rows (per
// segment (max, sum) pairs, then the outputs) on short rows, by lowering
// the per-invocation bound, and checks it against float64: rows that span
// several segments, segments of −Inf only inside a finite row, large
// logits in different segments, a row of −Inf only, and a transposed src.
func TestSoftmaxSegmented(t *testing.T) { forEachTestDevice(t, testSoftmaxSegmented) }

func testSoftmaxSegmented(t *testing.T, d *Device) {
	saved := softmaxMaxPerLane
	softmaxMaxPerLane = 1 // segments of one workgroup's width
	t.Cleanup(func() { softmaxMaxPerLane = saved })
	wg := d.workgroupSize()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{7, wg + 1, 1000, 3*wg + 5} {
		for _, log := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/log=%v", n, log), func(t *testing.T) {
				const rows = 4
				x := make([]float32, rows*n)
				for j := range n {
					x[j] = float32(8 * rng.NormFloat64())         // plain
					x[n+j] = float32(1e4 * (2*rng.Float64() - 1)) // large
					x[2*n+j] = float32(math.Inf(-1))              // −Inf but the end
					x[3*n+j] = float32(math.Inf(-1))              // all −Inf
					if j >= n-3 {
						x[2*n+j] = float32(rng.NormFloat64())
					}
				}
				// src is the transpose of a [n, rows] buffer: strided rows.
				xt := make([]float32, len(x))
				for r := range rows {
					for j := range n {
						xt[j*rows+r] = x[r*n+j]
					}
				}
				src := upload32(t, d, xt)
				defer d.Free(src)
				dst, err := d.Alloc(int64(4 * rows * n))
				require.NoError(t, err)
				defer d.Free(dst)
				sv := hal.View{Buf: src, DType: hal.Float32, Shape: []int{rows, n}, Strides: []int{1, rows}}
				require.NoError(t, d.Softmax(hal.Contiguous(dst, hal.Float32, rows, n), sv, log))
				raw := download32(t, d, dst, rows*n)
				for r := range rows {
					row := x[r*n : (r+1)*n]
					m := math.Inf(-1)
					for _, v := range row {
						m = max(m, float64(v))
					}
					var s float64
					for _, v := range row {
						s += math.Exp(float64(v) - m)
					}
					for j, v := range row {
						got := float64(math.Float32frombits(raw[r*n+j]))
						if math.IsInf(m, -1) {
							assert.True(t, math.IsNaN(got), "row %d [%d]: all −Inf gives NaN, got %g", r, j, got)
							continue
						}
						want := math.Exp(float64(v)-m) / s
						tol := want*float64(2*n+8)*0x1p-24 + 0x1p-126
						if log {
							want = float64(v) - m - math.Log(s)
							tol = (2*math.Abs(want) + 2*math.Abs(float64(v)-m) + float64(2*n+8)) * 0x1p-24
						}
						if math.IsInf(want, -1) {
							assert.True(t, math.IsInf(got, -1), "row %d [%d]: got %g", r, j, got)
							continue
						}
						if !assert.InDelta(t, want, got, tol, "row %d [%d] of %d", r, j, n) {
							return
						}
					}
				}
			})
		}
	}
}
