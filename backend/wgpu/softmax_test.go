//go:build cgo

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/x448/float16"
)

// softmaxSubgroupModes are the reductions a test runs on d: without
// subgroups (forced off where the device has them), and with them where it
// has them (lavapipe).
func softmaxSubgroupModes(t *testing.T, d *Device, f func(t *testing.T)) {
	for _, on := range []bool{false, true} {
		if on && !d.rt.HasSubgroups() {
			continue
		}
		t.Run(fmt.Sprintf("subgroups=%v", on), func(t *testing.T) {
			saved := softmaxNoSubgroups
			softmaxNoSubgroups = !on
			t.Cleanup(func() { softmaxNoSubgroups = saved })
			f(t)
		})
	}
}

// withSoftmaxSettings runs the rest of t with the knobs set to s rather
// than read from the environment.
func withSoftmaxSettings(t *testing.T, s softmaxSettings) {
	saved := softmaxOverride
	softmaxOverride = &s
	t.Cleanup(func() { softmaxOverride = saved })
}

// softmaxDTypes are the float dtypes d holds.
func softmaxDTypes(d *Device) []hal.DType {
	if d.rt.HasF16() {
		return []hal.DType{hal.Float32, hal.Float16}
	}
	return []hal.DType{hal.Float32}
}

// TestSoftmaxSegmented forces the two-dispatch path for long rows (per
// segment (max, sum) pairs, then the outputs) on short rows, by lowering
// the per-invocation bound, and checks it against float64 (checkSoftmax's
// rows, a transposed src), with and without subgroups.
func TestSoftmaxSegmented(t *testing.T) { forEachTestDevice(t, testSoftmaxSegmented) }

func testSoftmaxSegmented(t *testing.T, d *Device) {
	if d.softmaxHardware() {
		t.Skip("hardware adapters do not segment")
	}
	saved := softmaxMaxPerLane
	softmaxMaxPerLane = 1 // segments of one workgroup's width
	t.Cleanup(func() { softmaxMaxPerLane = saved })
	wg := d.workgroupSize()
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{7, wg + 1, 1000, 3*wg + 5} {
				for _, log := range []bool{false, true} {
					t.Run(fmt.Sprintf("%v/n=%d/log=%v", dt, n, log), func(t *testing.T) {
						checkSoftmax(t, d, dt, n, log)
					})
				}
			}
		}
	})
}

// TestSoftmaxHardwarePath forces the hardware adapters' path on the
// software adapters (one workgroup per row whatever its length, the
// hardware workgroup size, one dispatch) at rows under the loop cap, with
// and without subgroups, in every float dtype, and checks it against
// float64. The per-invocation bound is lowered so that the software path
// would split every row here into segments.
func TestSoftmaxHardwarePath(t *testing.T) { forEachTestDevice(t, testSoftmaxHardwarePath) }

func testSoftmaxHardwarePath(t *testing.T, d *Device) {
	savedHW, savedLane := softmaxForceHardware, softmaxMaxPerLane
	softmaxForceHardware, softmaxMaxPerLane = true, 1
	t.Cleanup(func() { softmaxForceHardware, softmaxMaxPerLane = savedHW, savedLane })
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 7, 64, 255, 1000, 4097, 70001} {
				for _, log := range []bool{false, true} {
					t.Run(fmt.Sprintf("%v/n=%d/log=%v", dt, n, log), func(t *testing.T) {
						before := d.Stats().Dispatches
						checkSoftmax(t, d, dt, n, log)
						// The upload and download are copies, not dispatches;
						// only few long rows are split (two passes).
						want := 1
						if _, segs, _ := d.softmaxPlan(softmaxCheckRows, n); segs > 1 {
							want = 2
						}
						assert.EqualValues(t, want, d.Stats().Dispatches-before, "dispatches")
					})
				}
			}
		}
	})
}

// softmaxCheckRows are the rows checkSoftmax runs.
const softmaxCheckRows = 6

// TestSoftmaxHardwarePlan checks when the hardware path splits rows: never
// with enough rows to fill a GPU, or rows short enough for one workgroup;
// few long rows into segments that cover the row, about softmaxFillTasks
// workgroups in all.
func TestSoftmaxHardwarePlan(t *testing.T) { forEachTestDevice(t, testSoftmaxHardwarePlan) }

func testSoftmaxHardwarePlan(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	for _, c := range []struct{ rows, n int }{{4096, 1024}, {256, 1 << 20}, {6, 1000}, {6, 70001}, {1, 1 << 20}, {1, 1 << 24}, {3, 100003}} {
		wg, segs, segLen := d.softmaxPlan(c.rows, c.n)
		assert.Equal(t, d.softmaxWorkgroupSize(c.n), wg, "%+v", c)
		assert.True(t, segs*segLen >= c.n && (segs-1)*segLen < c.n, "%+v: %d segments of %d", c, segs, segLen)
		long := c.n > softmaxMinPerLane*wg
		if c.rows >= softmaxFillTasks || !long {
			assert.Equal(t, 1, segs, "%+v", c)
			continue
		}
		assert.Greater(t, segs, 1, "%+v", c)
		assert.LessOrEqual(t, c.rows*segs, 2*softmaxFillTasks, "%+v", c)
		assert.GreaterOrEqual(t, segLen, softmaxMinPerLane*wg/2, "%+v", c)
	}
}

// TestSoftmaxWorkgroupSize checks the hardware path's workgroup sizes:
// powers of two from 64, about four elements per invocation, within the
// device's limits.
func TestSoftmaxWorkgroupSize(t *testing.T) { forEachTestDevice(t, testSoftmaxWorkgroupSize) }

func testSoftmaxWorkgroupSize(t *testing.T, d *Device) {
	limit := min(int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX), 1024)
	for _, n := range []int{1, 100, 256, 257, 1024, 4096, 1 << 20} {
		wg := d.softmaxWorkgroupSize(n)
		assert.True(t, wg&(wg-1) == 0 && wg <= limit, "n=%d: %d", n, wg)
		if limit >= 1024 {
			want := map[int]int{1: 64, 100: 64, 256: 64, 257: 128, 1024: 256, 4096: 1024, 1 << 20: 1024}[n]
			assert.Equal(t, want, wg, "n=%d", n)
		}
	}
}

// checkSoftmax runs Softmax (or log_softmax) of dt over rows of n from a
// transposed src (strided rows) and checks it against float64: plain
// logits, large ones (no shift overflows), −Inf but the last three, all
// −Inf (NaN), a NaN among plain logits (NaN row), a +Inf among plain
// logits (NaN row: its e^(x−max) is NaN).
func checkSoftmax(t *testing.T, d *Device, dt hal.DType, n int, log bool) {
	t.Helper()
	checkSoftmaxLayout(t, d, dt, n, log, softmaxLayout{transposed: true})
}

// softmaxLayout is where checkSoftmaxLayout puts the rows: transposed
// (strided rows), or row r at srcOffset + r·pitch (contiguous rows, pitch
// ≥ n, 0 meaning n); dst's rows are contiguous from dstOffset.
type softmaxLayout struct {
	transposed                  bool
	srcOffset, pitch, dstOffset int
	// rows is the row count, 0 meaning softmaxCheckRows.
	rows int
}

// checkSoftmaxLayout is checkSoftmax's rows laid out by l.
func checkSoftmaxLayout(t *testing.T, d *Device, dt hal.DType, n int, log bool, l softmaxLayout) {
	t.Helper()
	if l.pitch == 0 {
		l.pitch = n
	}
	rows := softmaxCheckRows
	if l.rows > 0 {
		rows = l.rows
	}
	rng := rand.New(rand.NewPCG(uint64(n), 12))
	big := 1e4
	if dt == hal.Float16 {
		big = 3e4
	}
	// Row r follows pattern r % softmaxCheckRows (the kinds above).
	x := make([]float64, rows*n)
	for r := range rows {
		row := x[r*n : (r+1)*n]
		for j := range n {
			switch r % softmaxCheckRows {
			case 0, 4, 5:
				row[j] = 8 * rng.NormFloat64()
			case 1:
				row[j] = big * (2*rng.Float64() - 1)
			case 2:
				row[j] = math.Inf(-1)
				if j >= n-3 {
					row[j] = rng.NormFloat64()
				}
			case 3:
				row[j] = math.Inf(-1)
			}
		}
		switch r % softmaxCheckRows {
		case 4:
			row[rng.IntN(n)] = math.NaN()
		case 5:
			row[rng.IntN(n)] = math.Inf(1)
		}
	}
	for i, v := range x { // the values the device holds
		x[i] = float64(float32(v))
		if dt == hal.Float16 {
			x[i] = float64(float16.Fromfloat32(float32(v)).Float32())
		}
	}
	got := runRows(t, d, dt, x, rows, n, l, func(dv, sv hal.View) error { return d.Softmax(dv, sv, log) })
	for r := range rows {
		row := x[r*n : (r+1)*n]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v) // NaN-propagating
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - m)
		}
		for j, v := range row {
			got := got(r*n + j)
			if math.IsNaN(s) || math.IsInf(m, -1) {
				if !assert.True(t, math.IsNaN(got), "row %d [%d] of %d: NaN, got %g", r, j, n, got) {
					return
				}
				continue
			}
			want := math.Exp(v-m) / s
			// x − max rounds to f32 (|x − max|·2⁻²⁴), which e^ turns
			// into that relative error.
			tol := want*(float64(2*n+8)+math.Abs(v-m))*0x1p-24 + 0x1p-126
			if log {
				want = v - m - math.Log(s)
				tol = (2*math.Abs(want) + 2*math.Abs(v-m) + float64(2*n+8)) * 0x1p-24
			}
			if dt == hal.Float16 { // the f32 result rounded to f16
				tol += math.Abs(want)*0x1p-11 + 0x1p-25
			}
			if math.IsInf(want, -1) {
				if !assert.True(t, math.IsInf(got, -1), "row %d [%d] of %d: got %g", r, j, n, got) {
					return
				}
				continue
			}
			if !assert.InDelta(t, want, got, tol, "row %d [%d] of %d", r, j, n) {
				return
			}
		}
	}
}

// checkSoftmaxModes is checkSoftmaxLayout, returning the shader data of
// every pass it recorded.
func checkSoftmaxModes(t *testing.T, d *Device, dt hal.DType, n int, log bool, l softmaxLayout) []softmaxShader {
	t.Helper()
	var modes []softmaxShader
	old := softmaxHook
	softmaxHook = func(sh softmaxShader) { modes = append(modes, sh) }
	defer func() { softmaxHook = old }()
	checkSoftmaxLayout(t, d, dt, n, log, l)
	return modes
}

// TestSoftmaxSweep checks the software adapters' own path for whole rows
// with and without subgroups: float32 softmax takes the "sweep" mode (the
// max, then e^(x−max) stored and summed, then divided), as vec4s exactly
// when every row of src and dst is 16-byte aligned and whole vec4s, and
// log_softmax and float16 keep the online "full" mode; every result
// against float64, NaN and ±Inf rows included (checkSoftmax's rows), for
// lengths around the 8-invocation workgroup and 4,097 rows.
func TestSoftmaxSweep(t *testing.T) { forEachTestDevice(t, testSoftmaxSweep) }

func testSoftmaxSweep(t *testing.T, d *Device) {
	if d.softmaxHardware() {
		t.Skip("the sweep mode is the software adapters'")
	}
	layouts := []softmaxLayout{
		{transposed: true}, {}, {srcOffset: 4, pitch: 0, dstOffset: 8}, {srcOffset: 1}, {dstOffset: 2},
		{srcOffset: 4}, // pitch n+4 below
		{rows: 4097},
	}
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 3, 4, 7, 8, 9, 36, 1000, 1024, 4100} {
				for li, l := range layouts {
					if li == len(layouts)-2 {
						l.pitch = n + 4
					}
					if l.rows > 0 && n > 36 {
						continue
					}
					for _, log := range []bool{false, true} {
						t.Run(fmt.Sprintf("%v/n=%d/%+v/log=%v", dt, n, l, log), func(t *testing.T) {
							modes := checkSoftmaxModes(t, d, dt, n, log, l)
							require.Len(t, modes, 1)
							assert.Equal(t, min(softmaxSoftwareWorkgroup, d.workgroupSize()), modes[0].WorkgroupSize)
							if log || dt != hal.Float32 {
								assert.Equal(t, "full", modes[0].Mode)
								return
							}
							require.Equal(t, "sweep", modes[0].Mode)
							aligned := !l.transposed && n%4 == 0 && l.srcOffset%4 == 0 && l.dstOffset%4 == 0 && (l.pitch == 0 || l.pitch%4 == 0)
							assert.Equal(t, aligned, modes[0].Vec4, "vec4 rows")
						})
					}
				}
			}
		}
	})
}

// TestSoftmaxRegs checks the hardware path's register mode, forced on the
// software adapters with and without subgroups, in every float dtype:
// rows up to softmaxMaxRegs elements per invocation take it, as vec4s
// exactly when every row of src and dst is 16-byte aligned and whole
// vec4s (offsets, pitches and lengths that are multiples of 4), scalar
// otherwise (odd lengths, unaligned offsets, strided rows); longer rows
// keep the online mode. Results against float64, NaN and ±Inf rows
// included (checkSoftmax's rows).
func TestSoftmaxRegs(t *testing.T) { forEachTestDevice(t, testSoftmaxRegs) }

func testSoftmaxRegs(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	withSoftmaxSettings(t, softmaxSettings{mode: "rows"}) // the order before the warp mode
	layouts := []softmaxLayout{
		{transposed: true}, {}, {srcOffset: 4, pitch: 0, dstOffset: 8}, {srcOffset: 1}, {dstOffset: 2},
		{srcOffset: 4}, // pitch n+4 below
	}
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 3, 4, 7, 64, 255, 256, 1000, 1024, 4096, 4100, 16384} {
				for li, l := range layouts {
					if li == len(layouts)-1 {
						l.pitch = n + 4
					}
					for _, log := range []bool{false, true} {
						t.Run(fmt.Sprintf("%v/n=%d/%+v/log=%v", dt, n, l, log), func(t *testing.T) {
							modes := checkSoftmaxModes(t, d, dt, n, log, l)
							require.NotEmpty(t, modes)
							wg, segs, _ := d.softmaxPlan(softmaxCheckRows, n)
							if segs > 1 || n > softmaxMaxRegs*wg {
								assert.NotEqual(t, "regs", modes[0].Mode, "row of %d at workgroup %d", n, wg)
								assert.NotEqual(t, "rows", modes[0].Mode, "row of %d at workgroup %d", n, wg)
								return
							}
							mode, per := "regs", wg
							if lanes, _ := d.softmaxRowsLanes(n); lanes > 0 {
								mode, per = "rows", lanes
								assert.Equal(t, lanes, modes[0].Lanes, "lanes per row")
							}
							require.Equal(t, mode, modes[0].Mode, "row of %d at workgroup %d", n, wg)
							aligned := !l.transposed && n%4 == 0 && l.srcOffset%4 == 0 && l.dstOffset%4 == 0 && (l.pitch == 0 || l.pitch%4 == 0)
							assert.Equal(t, aligned, modes[0].Vec4, "vec4 rows")
							elems := n
							if aligned {
								elems = n / 4
							}
							assert.Equal(t, ceilDiv(elems, per), modes[0].Regs, "registers per invocation")
						})
					}
				}
			}
		}
	})
}

// TestSoftmaxRows checks the hardware path's "rows" mode (several short
// rows per workgroup, 32 or 64 invocations per row), forced on the
// software adapters, in every float dtype, with and without subgroups:
// row lengths 1 … 1,024 (odd ones, and around the 32- and 64-lane
// bounds), 1, 3 and 4,097 rows (a partial last workgroup), transposed and
// unaligned sources, against float64 with NaN and ±Inf rows
// (checkSoftmaxLayout's patterns, cycled over the rows).
func TestSoftmaxRows(t *testing.T) { forEachTestDevice(t, testSoftmaxRows) }

func testSoftmaxRows(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	withSoftmaxSettings(t, softmaxSettings{mode: "rows"})
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 2, 5, 31, 32, 33, 129, 512, 513, 1000, 1023, 1024} {
				for _, rows := range []int{1, 3, 4097} {
					if rows == 4097 && n > 64 && n != 1024 {
						continue // the partial workgroup is covered; keep the software run short
					}
					layouts := []softmaxLayout{{transposed: true, rows: rows}, {rows: rows}, {srcOffset: 3, dstOffset: 1, rows: rows}, {srcOffset: 4, pitch: n + 8, dstOffset: 4, rows: rows}}
					for _, l := range layouts {
						for _, log := range []bool{false, true} {
							t.Run(fmt.Sprintf("%v/n=%d/%+v/log=%v", dt, n, l, log), func(t *testing.T) {
								modes := checkSoftmaxModes(t, d, dt, n, log, l)
								require.Len(t, modes, 1)
								assert.Equal(t, "rows", modes[0].Mode, "row of %d", n)
								want := 32
								if n > 512 {
									want = 64
								}
								assert.Equal(t, want, modes[0].Lanes, "lanes per row of %d", n)
								subgroups := !softmaxNoSubgroups && d.rt.HasSubgroups() && d.reduce.subgroups
								assert.Equal(t, subgroups, modes[0].Subgroups, "subgroup folds")
							})
						}
					}
				}
			}
		}
	})
}

// TestSoftmaxRowsChosen fails unless the forced hardware path with
// WEBTENSOR_SOFTMAX_MODE=rows takes the "rows" mode for the benchmark's
// 4096×1024 softmax (64 lanes per row, 4 vec4s each), and checks its
// values.
func TestSoftmaxRowsChosen(t *testing.T) { forEachTestDevice(t, testSoftmaxRowsChosen) }

func testSoftmaxRowsChosen(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	withSoftmaxSettings(t, softmaxSettings{mode: "rows"})
	var modes []softmaxShader
	old := softmaxHook
	softmaxHook = func(sh softmaxShader) { modes = append(modes, sh) }
	t.Cleanup(func() { softmaxHook = old })
	checkSoftmaxLayout(t, d, hal.Float32, 1024, false, softmaxLayout{rows: 4096})
	require.Len(t, modes, 1)
	assert.Equal(t, "rows", modes[0].Mode)
	assert.Equal(t, 64, modes[0].Lanes)
	assert.True(t, modes[0].Vec4)
	assert.Equal(t, 4, modes[0].Regs)
	// Rows longer than 64 lanes × 16 keep the one-workgroup-per-row modes.
	lanes, _ := d.softmaxRowsLanes(1025)
	assert.Zero(t, lanes, "rows of 1025")
}

// TestSoftmaxWarpChosen fails unless the forced hardware path, knobs unset,
// takes the "warp" mode for the benchmark's 4096×1024 softmax: 32 lanes
// per row (a warp on NVIDIA), 8 vec4s each, no bounds, rows by pitch, the
// mode's own exponential; and checks its values against float64.
func TestSoftmaxWarpChosen(t *testing.T) { forEachTestDevice(t, testSoftmaxWarpChosen) }

func testSoftmaxWarpChosen(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	withSoftmaxSettings(t, softmaxSettings{})
	var modes []softmaxShader
	old := softmaxHook
	softmaxHook = func(sh softmaxShader) { modes = append(modes, sh) }
	t.Cleanup(func() { softmaxHook = old })
	checkSoftmaxLayout(t, d, hal.Float32, 1024, false, softmaxLayout{rows: 4096})
	require.Len(t, modes, 1)
	sh := modes[0]
	assert.Equal(t, "warp", sh.Mode)
	assert.Equal(t, 32, sh.Lanes)
	assert.Equal(t, d.workgroupSize(), sh.WorkgroupSize)
	assert.True(t, sh.Vec4)
	assert.Len(t, sh.Units, 8)
	assert.True(t, sh.Exact, "no bounds")
	assert.True(t, sh.Pitch, "rows by pitch")
	assert.False(t, sh.ExactExp)
	assert.Equal(t, !softmaxNoSubgroups && d.rt.HasSubgroups() && d.reduce.subgroups, sh.Subgroups)
}

// TestSoftmaxWarp checks the hardware path's "warp" mode (LANES
// invocations per row, each holding its units in unrolled registers; several
// rows per workgroup), forced on the software adapters, in every float
// dtype, with and without subgroups: row lengths 1 … 8,192 (odd ones,
// around the lane bounds), 1, 3 and 4,097 rows (a partial last
// workgroup), transposed, unaligned and pitched sources, softmax and
// log_softmax, against float64 with NaN and ±Inf rows
// (checkSoftmaxLayout's patterns, cycled over the rows); the lanes are the
// smallest of 32, 64, … holding the row in 8 units each, in vec4s exactly
// when the rows are aligned whole vec4s.
func TestSoftmaxWarp(t *testing.T) { forEachTestDevice(t, testSoftmaxWarp) }

func testSoftmaxWarp(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	withSoftmaxSettings(t, softmaxSettings{})
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, dt := range softmaxDTypes(d) {
			for _, n := range []int{1, 5, 32, 33, 257, 1000, 1023, 1024, 4100, 8192} {
				for _, rows := range []int{1, 3, 4097} {
					if rows == 4097 && n != 33 && n != 1024 {
						continue // the partial workgroup is covered; keep the software run short
					}
					layouts := []softmaxLayout{{transposed: true, rows: rows}, {rows: rows}, {srcOffset: 3, dstOffset: 1, rows: rows}, {srcOffset: 4, pitch: n + 8, dstOffset: 4, rows: rows}}
					for _, l := range layouts {
						for _, log := range []bool{false, true} {
							t.Run(fmt.Sprintf("%v/n=%d/%+v/log=%v", dt, n, l, log), func(t *testing.T) {
								checkSoftmaxWarp(t, d, dt, n, log, l, softmaxSettings{})
							})
						}
					}
				}
			}
		}
	})
}

// checkSoftmaxWarp runs checkSoftmaxLayout and checks that it took the
// warp mode with the lanes, registers and workgroup size that the knobs
// k (set by the caller) give.
func checkSoftmaxWarp(t *testing.T, d *Device, dt hal.DType, n int, log bool, l softmaxLayout, k softmaxSettings) {
	t.Helper()
	lanes, wg := k.lanes, d.workgroupSize()
	if k.wg > 0 {
		wg = min(k.wg, int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX))
	}
	modes := checkSoftmaxModes(t, d, dt, n, log, l)
	require.Len(t, modes, 1)
	sh := modes[0]
	// A transposed single row is contiguous.
	aligned := (!l.transposed || l.rows == 1) && n%4 == 0 && l.srcOffset%4 == 0 && l.dstOffset%4 == 0 && (l.pitch == 0 || l.pitch%4 == 0)
	units := n
	if aligned {
		units = n / 4
	}
	if lanes == 0 && units > wg*softmaxWarpRegs {
		assert.NotEqual(t, "warp", sh.Mode, "row of %d units", units)
		return
	}
	require.Equal(t, "warp", sh.Mode, "row of %d", n)
	assert.Equal(t, aligned, sh.Vec4, "vec4 rows")
	if lanes == 0 {
		lanes = min(32, wg)
		for units > lanes*softmaxWarpRegs {
			lanes *= 2
		}
	}
	assert.Equal(t, lanes, sh.Lanes, "lanes per row of %d", n)
	assert.Len(t, sh.Units, ceilDiv(units, lanes), "registers per invocation")
	assert.Equal(t, units%lanes == 0, sh.Exact, "unbounded")
	assert.True(t, sh.Pitch, "rows by pitch")
	assert.Equal(t, wg, sh.WorkgroupSize, "workgroup")
	assert.Equal(t, k.exactExp, sh.ExactExp, "exp_f")
	subgroups := !softmaxNoSubgroups && d.subgroupsInRunsAt(wg)
	assert.Equal(t, subgroups, sh.Subgroups, "subgroup folds")
	if wg == d.workgroupSize() {
		assert.Equal(t, !softmaxNoSubgroups && d.reduce.subgroups, sh.Subgroups, "subgroup folds")
	}
}

// TestSoftmaxWarpKnobs checks the warp mode under its knobs, forced on
// the software adapters with and without subgroups: lanes per row from 1
// to 256 (WEBTENSOR_SOFTMAX_LANES), workgroups of 32 to 1,024
// (WEBTENSOR_SOFTMAX_WG, within the device's limits; subgroups where the
// probe at that size allows them) and math.wgsl's exp_f
// (WEBTENSOR_SOFTMAX_EXP=exact), on whole and partial registers, against
// float64; a row past the knob's lanes × 16 units, or lanes past the
// workgroup, keeps the other modes; and an unravelled source (3-D, not
// collapsible) takes the mode without Pitch.
func TestSoftmaxWarpKnobs(t *testing.T) { forEachTestDevice(t, testSoftmaxWarpKnobs) }

func testSoftmaxWarpKnobs(t *testing.T, d *Device) {
	saved := softmaxForceHardware
	softmaxForceHardware = true
	t.Cleanup(func() { softmaxForceHardware = saved })
	softmaxSubgroupModes(t, d, func(t *testing.T) {
		for _, k := range []softmaxSettings{
			// 4, 8 and 16 lanes: one of them is lavapipe's subgroup size,
			// where a row is one subgroup (the fold NVIDIA takes at 32).
			{lanes: 1}, {lanes: 4}, {lanes: 8}, {lanes: 16}, {lanes: 64}, {lanes: 128}, {lanes: 256},
			{lanes: 1, exactExp: true}, {lanes: 128, exactExp: true},
			{wg: 32}, {wg: 128}, {wg: 1024}, {wg: 64, lanes: 64}, {exactExp: true},
		} {
			k.mode = "warp"
			withSoftmaxSettings(t, k)
			for _, n := range []int{13, 1024} {
				if k.lanes > 0 && n > 16*k.lanes {
					continue // past the knob's 16 units per lane
				}
				for _, l := range []softmaxLayout{{rows: 37}, {transposed: true, rows: 37}} {
					t.Run(fmt.Sprintf("%+v/n=%d/%+v", k, n, l), func(t *testing.T) {
						checkSoftmaxWarp(t, d, hal.Float32, n, false, l, k)
					})
				}
			}
		}
		withSoftmaxSettings(t, softmaxSettings{mode: "warp", lanes: 32})
		lanes, _ := d.softmaxWarpLanes(32*16, 32, 0)
		assert.Equal(t, 32, lanes, "16 units per lane")
		lanes, _ = d.softmaxWarpLanes(32*16+1, 32, 0)
		assert.Zero(t, lanes, "past 16 units per lane")
		checkSoftmaxLayout(t, d, hal.Float32, 4*(32*16+1), false, softmaxLayout{rows: 2}) // other modes
		lanes, _ = d.softmaxWarpLanes(10, 2*d.workgroupSize(), 0)
		assert.Zero(t, lanes, "lanes past the workgroup")
	})
	// A [2, 3, 50] view whose first two axes do not collapse: the rows are
	// unravelled.
	withSoftmaxSettings(t, softmaxSettings{})
	var modes []softmaxShader
	old := softmaxHook
	softmaxHook = func(sh softmaxShader) { modes = append(modes, sh) }
	t.Cleanup(func() { softmaxHook = old })
	checkSoftmax3D(t, d)
	require.Len(t, modes, 1)
	assert.Equal(t, "warp", modes[0].Mode)
	assert.False(t, modes[0].Pitch, "unravelled rows")
}

// checkSoftmax3D runs Softmax over a [2, 3, 50] src at strides
// [200, 60, 1] (rows 60 apart, blocks 200 apart: not one pitch) and checks
// it against float64.
func checkSoftmax3D(t *testing.T, d *Device) {
	t.Helper()
	const n = 50
	rng := rand.New(rand.NewPCG(3, 4))
	raw := make([]float32, 400)
	for i := range raw {
		raw[i] = float32(4 * rng.NormFloat64())
	}
	buf := make([]byte, 4*len(raw))
	for i, v := range raw {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	src, err := d.Alloc(int64(len(buf)))
	require.NoError(t, err)
	defer d.Free(src)
	require.NoError(t, d.Write(src, buf))
	dst, err := d.Alloc(4 * 6 * n)
	require.NoError(t, err)
	defer d.Free(dst)
	sv := hal.View{Buf: src, DType: hal.Float32, Shape: []int{2, 3, n}, Strides: []int{200, 60, 1}}
	require.NoError(t, d.Softmax(hal.Contiguous(dst, hal.Float32, 2, 3, n), sv, false))
	out := make([]byte, 4*6*n)
	require.NoError(t, d.Read(dst, out))
	for b := range 2 {
		for r := range 3 {
			row := raw[200*b+60*r : 200*b+60*r+n]
			m := math.Inf(-1)
			for _, v := range row {
				m = max(m, float64(v))
			}
			var s float64
			for _, v := range row {
				s += math.Exp(float64(v) - m)
			}
			for j, v := range row {
				got := float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*((b*3+r)*n+j):])))
				want := math.Exp(float64(v)-m) / s
				require.InDelta(t, want, got, want*120*0x1p-24+0x1p-126, "[%d %d %d]", b, r, j)
			}
		}
	}
}

// TestSoftmaxEnv checks the knobs' parsing: each value each takes, and a
// clear hal.ErrInvalid naming the variable for anything else.
func TestSoftmaxEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	s, err := parseSoftmaxEnv(env())
	require.NoError(t, err)
	assert.Equal(t, softmaxSettings{}, s)
	s, err = parseSoftmaxEnv(env(SoftmaxModeEnv, "rows", SoftmaxLanesEnv, "128", SoftmaxExpEnv, "exact", SoftmaxWGEnv, "512"))
	require.NoError(t, err)
	assert.Equal(t, softmaxSettings{mode: "rows", lanes: 128, wg: 512, exactExp: true}, s)
	for _, m := range []string{"auto", "warp", "regs", "full"} {
		s, err = parseSoftmaxEnv(env(SoftmaxModeEnv, m))
		require.NoError(t, err, m)
		assert.Equal(t, strings.TrimPrefix(m, "auto"), s.mode)
	}
	for _, bad := range [][2]string{{SoftmaxModeEnv, "fast"}, {SoftmaxLanesEnv, "48"}, {SoftmaxLanesEnv, "0"}, {SoftmaxLanesEnv, "x"}, {SoftmaxLanesEnv, "2048"}, {SoftmaxExpEnv, "approx"}, {SoftmaxWGEnv, "100"}} {
		_, err := parseSoftmaxEnv(env(bad[0], bad[1]))
		require.ErrorIs(t, err, hal.ErrInvalid, "%v", bad)
		assert.Contains(t, err.Error(), bad[0])
	}
}

// BenchmarkSoftmaxModesAB times the hardware path's softmax modes on the
// benchmark's 4096×1024 float32 (forced on software adapters; natively on
// a GPU, where WEBTENSOR_TEST_ADAPTERS picks it), interleaved in rounds
// within one process so that a shared machine's drift hits every mode
// alike (warp-exp_f is the warp mode with WEBTENSOR_SOFTMAX_EXP=exact).
// It reports each mode's GB/s (the 2·4 bytes per element that must move)
// and the warp mode's speed over the rows mode's, the medians over the
// rounds.
func BenchmarkSoftmaxModesAB(b *testing.B) {
	d := openTestDevice(b)
	saved := softmaxForceHardware
	softmaxForceHardware = true
	defer func() { softmaxForceHardware = saved }()
	const rows, n = 4096, 1024
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float32, rows*n)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64())
	}
	x, out := ewUpload(b, d, vals), ewUpload(b, d, make([]float32, rows*n))
	x.Shape, x.Strides = []int{rows, n}, []int{n, 1}
	out.Shape, out.Strides = []int{rows, n}, []int{n, 1}
	modes := []string{"warp", "warp-exp_f", "rows", "regs"}
	timeOf := func(mode string, iters int) float64 {
		savedOverride := softmaxOverride
		softmaxOverride = &softmaxSettings{mode: strings.TrimSuffix(mode, "-exp_f"), exactExp: strings.HasSuffix(mode, "-exp_f")}
		defer func() { softmaxOverride = savedOverride }()
		require.NoError(b, d.Sync())
		start := time.Now()
		for range iters {
			require.NoError(b, d.Softmax(out, x, false))
		}
		require.NoError(b, d.Sync())
		return time.Since(start).Seconds() / float64(iters)
	}
	for _, m := range modes {
		timeOf(m, 1) // compile, warm
	}
	times := map[string][]float64{}
	var ratio []float64
	for range max(b.N, 5) {
		for _, m := range modes {
			times[m] = append(times[m], timeOf(m, 3))
		}
		ratio = append(ratio, times["rows"][len(times["rows"])-1]/times["warp"][len(times["warp"])-1])
	}
	gb := float64(8*rows*n) / 1e9
	for _, m := range modes {
		b.ReportMetric(gb/median(times[m]), "GB/s-"+m)
	}
	b.ReportMetric(median(ratio), "warp/rows-speed")
}

// runRows uploads the rows × n values x (held exactly in dt) as src laid
// out by l, runs call into a contiguous dst at l.dstOffset, and returns
// dst's element i (from l.dstOffset) as read back. l.pitch is n or more.
func runRows(t *testing.T, d *Device, dt hal.DType, x []float64, rows, n int, l softmaxLayout, call func(dv, sv hal.View) error) func(i int) float64 {
	t.Helper()
	// src is the transpose of a [n, rows] buffer (strided rows), or rows
	// at l.srcOffset + r·l.pitch.
	size := dt.Size()
	elems := rows * n
	sv := hal.View{DType: dt, Shape: []int{rows, n}, Strides: []int{1, rows}}
	if !l.transposed {
		elems = l.srcOffset + rows*l.pitch
		sv.Strides, sv.Offset = []int{l.pitch, 1}, l.srcOffset
	}
	raw := make([]byte, (size*elems+3)/4*4)
	for r := range rows {
		for j := range n {
			at := size * (j*rows + r)
			if !l.transposed {
				at = size * (l.srcOffset + r*l.pitch + j)
			}
			if dt == hal.Float16 {
				binary.LittleEndian.PutUint16(raw[at:], float16.Fromfloat32(float32(x[r*n+j])).Bits())
			} else {
				binary.LittleEndian.PutUint32(raw[at:], math.Float32bits(float32(x[r*n+j])))
			}
		}
	}
	src, err := d.Alloc(int64(len(raw)))
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(src) })
	require.NoError(t, d.Write(src, raw))
	dstBytes := (size*(l.dstOffset+rows*n) + 3) / 4 * 4
	dst, err := d.Alloc(int64(dstBytes))
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(dst) })
	sv.Buf = src
	dv := hal.Contiguous(dst, dt, rows, n)
	dv.Offset = l.dstOffset
	require.NoError(t, call(dv, sv))
	out := make([]byte, dstBytes)
	require.NoError(t, d.Read(dst, out))
	return func(i int) float64 {
		i += l.dstOffset
		if dt == hal.Float16 {
			return float64(float16.Frombits(binary.LittleEndian.Uint16(out[2*i:])).Float32())
		}
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])))
	}
}
