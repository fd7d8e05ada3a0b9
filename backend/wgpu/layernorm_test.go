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
	"github.com/x448/float16"
)

// layerNormEps is the eps of the checks: large enough against the rows'
// variances (1 to 64) to matter, so that a kernel dropping it fails.
const layerNormEps = 0.25

// checkLayerNorm runs LayerNorm on softmaxCheckRows rows of n laid out by
// l and checks every output against float64: rows of activations, a row
// of large mean (one-pass variance cancels), a constant row (variance 0),
// rows with a NaN and with an infinity (NaN rows). It returns the shader
// data of every pass recorded.
func checkLayerNorm(t *testing.T, d *Device, dt hal.DType, n int, l softmaxLayout) []layerNormShader {
	t.Helper()
	if l.pitch == 0 {
		l.pitch = n
	}
	rows := softmaxCheckRows
	rng := rand.New(rand.NewPCG(uint64(n), 15))
	x := make([]float64, rows*n)
	for r := range rows {
		row := x[r*n : (r+1)*n]
		c := 4 * rng.NormFloat64()
		for j := range row {
			switch r {
			case 0, 4, 5:
				row[j] = 8 * rng.NormFloat64()
			case 1:
				row[j] = 1000 + rng.Float64()
			case 2:
				row[j] = c
			case 3:
				row[j] = rng.NormFloat64() - 3
			}
		}
		switch r {
		case 4:
			row[rng.IntN(n)] = math.NaN()
		case 5:
			row[rng.IntN(n)] = math.Inf(-1 + 2*(n%2))
		}
		for j, v := range row { // the values the device holds
			row[j] = float64(float32(v))
			if dt == hal.Float16 {
				row[j] = float64(float16.Fromfloat32(float32(v)).Float32())
			}
		}
	}
	var shaders []layerNormShader
	old := layerNormHook
	layerNormHook = func(sh layerNormShader) { shaders = append(shaders, sh) }
	defer func() { layerNormHook = old }()
	got := runRows(t, d, dt, x, rows, n, l, func(dv, sv hal.View) error { return d.LayerNorm(dv, sv, layerNormEps) })
	for r := range rows {
		row := x[r*n : (r+1)*n]
		var s, mag float64
		for _, v := range row {
			s += v
			mag += math.Abs(v)
		}
		m := s / float64(n)
		var q float64
		for _, v := range row {
			q += (v - m) * (v - m)
		}
		rs := 1 / math.Sqrt(q/float64(n)+layerNormEps)
		for j, v := range row {
			got := got(r*n + j)
			want := (v - m) * rs
			if math.IsNaN(want) || math.IsInf(s, 0) {
				if !assert.True(t, math.IsNaN(got), "row %d [%d] of %d: NaN, got %g", r, j, n, got) {
					return shaders
				}
				continue
			}
			// The sums' n·u, relative to y and (the mean's) to r·mean|x|;
			// a few roundings and the rsqrt (haltest's bound).
			tol := 0x1p-24 * ((8+2*float64(n))*math.Abs(want) + 2*rs*mag + rs*math.Abs(v))
			if dt == hal.Float16 { // the f32 result rounded to f16
				tol += math.Abs(want)*0x1p-11 + 0x1p-25
			}
			if !assert.InDelta(t, want, got, tol, "row %d [%d] of %d", r, j, n) {
				return shaders
			}
		}
	}
	return shaders
}

// layerNormLayouts are the src and dst layouts the tests run: strided
// rows, contiguous rows, 16-byte aligned offsets, unaligned ones, and a
// pitch of n + 4 (set by the caller, the last entry).
var layerNormLayouts = []softmaxLayout{
	{transposed: true}, {}, {srcOffset: 4, dstOffset: 8}, {srcOffset: 1}, {dstOffset: 2}, {srcOffset: 4},
}

// vec4Rows reports whether rows of n laid out by l are the ones the vec4
// kernel takes: contiguous, 16-byte aligned starts in src and dst, whole
// vec4s, float32.
func vec4Rows(dt hal.DType, n int, l softmaxLayout) bool {
	return dt == hal.Float32 && !l.transposed && n%4 == 0 && l.srcOffset%4 == 0 && l.dstOffset%4 == 0 &&
		(l.pitch == 0 || l.pitch%4 == 0)
}

// TestLayerNormRows checks LayerNorm's whole-row path on every adapter as
// it is (8 invocations per row on the software adapters), with and
// without subgroups, in every float dtype: one dispatch per call, vec4
// rows exactly when the layout allows, every result against float64
// (checkLayerNorm's rows, NaN and ±Inf rows included), at odd lengths
// around the workgroup and long rows.
func TestLayerNormRows(t *testing.T) { forEachTestDevice(t, testLayerNormRows) }

func testLayerNormRows(t *testing.T, d *Device) {
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 3, 4, 7, 8, 33, 1000, 1024, 4100} {
				for li, l := range layerNormLayouts {
					if li == len(layerNormLayouts)-1 {
						l.pitch = n + 4
					}
					t.Run(fmt.Sprintf("%v/n=%d/%+v", dt, n, l), func(t *testing.T) {
						before := d.Stats().Dispatches
						shaders := checkLayerNorm(t, d, dt, n, l)
						require.Len(t, shaders, 1)
						assert.Equal(t, "row", shaders[0].Mode)
						assert.Equal(t, vec4Rows(dt, n, l), shaders[0].Vec4, "vec4 rows")
						if !d.softmaxHardware() {
							assert.Equal(t, softmaxSoftwareWorkgroup, shaders[0].WorkgroupSize)
						}
						assert.EqualValues(t, 1, d.Stats().Dispatches-before, "dispatches")
					})
				}
			}
		}
	})
}

// TestLayerNormSegmented checks the software adapters' two-dispatch path
// (per-segment mean and squares, merged by each segment of the second
// pass): forced on short rows by lowering the per-invocation bound, with
// and without subgroups, strided and contiguous rows; and, as it is, on
// a row past llvmpipe's loop cap (2²⁰ + 3 elements would take 3·2¹⁷
// iterations per invocation in one workgroup of 8), which must still be
// right.
func TestLayerNormSegmented(t *testing.T) { forEachTestDevice(t, testLayerNormSegmented) }

func testLayerNormSegmented(t *testing.T, d *Device) {
	if d.softmaxHardware() {
		t.Skip("hardware adapters segment only few long rows (TestLayerNormHardwarePath)")
	}
	t.Run("past the loop cap", func(t *testing.T) {
		n := 1<<20 + 3
		shaders := checkLayerNorm(t, d, hal.Float32, n, softmaxLayout{})
		require.Len(t, shaders, 2)
		assert.Equal(t, []string{"stats", "apply"}, []string{shaders[0].Mode, shaders[1].Mode})
	})
	saved := softmaxMaxPerLane
	softmaxMaxPerLane = 1 // segments of one workgroup's width
	t.Cleanup(func() { softmaxMaxPerLane = saved })
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{9, 33, 1000, 4100} {
				for _, l := range []softmaxLayout{{transposed: true}, {srcOffset: 3, dstOffset: 1}} {
					t.Run(fmt.Sprintf("%v/n=%d/%+v", dt, n, l), func(t *testing.T) {
						before := d.Stats().Dispatches
						shaders := checkLayerNorm(t, d, dt, n, l)
						require.Len(t, shaders, 2)
						assert.Equal(t, []string{"stats", "apply"}, []string{shaders[0].Mode, shaders[1].Mode})
						assert.EqualValues(t, 2, d.Stats().Dispatches-before, "dispatches")
					})
				}
			}
		}
	})
}

// TestLayerNormHardwarePath forces the hardware adapters' path on the
// software adapters (their workgroup size, one workgroup per row, few long
// rows split to fill the GPU) at rows under the loop cap, with and without
// subgroups, in every float dtype, strided and aligned rows, and checks it
// against float64.
func TestLayerNormHardwarePath(t *testing.T) { forEachTestDevice(t, testLayerNormHardwarePath) }

func testLayerNormHardwarePath(t *testing.T, d *Device) {
	savedHW, savedLane := softmaxForceHardware, softmaxMaxPerLane
	softmaxForceHardware, softmaxMaxPerLane = true, 1
	t.Cleanup(func() { softmaxForceHardware, softmaxMaxPerLane = savedHW, savedLane })
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 7, 64, 255, 1000, 4100, 70001} {
				for _, l := range []softmaxLayout{{transposed: true}, {srcOffset: 4, dstOffset: 4}} {
					t.Run(fmt.Sprintf("%v/n=%d/%+v", dt, n, l), func(t *testing.T) {
						shaders := checkLayerNorm(t, d, dt, n, l)
						wg, segs, _ := d.softmaxPlan(softmaxCheckRows, n)
						if segs > 1 {
							require.Len(t, shaders, 2)
							assert.Equal(t, "stats", shaders[0].Mode)
							return
						}
						require.Len(t, shaders, 1)
						assert.Equal(t, wg, shaders[0].WorkgroupSize)
						assert.Equal(t, vec4Rows(dt, n, l), shaders[0].Vec4, "vec4 rows")
					})
				}
			}
		}
	})
}
