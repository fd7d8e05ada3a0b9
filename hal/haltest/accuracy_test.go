package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// recorder is a testing.TB that records failures instead of failing, so
// a test can assert that a check rejects a result.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.failures = append(r.failures, fmt.Sprint(args...)) }
func (r *recorder) Fail()             { r.failures = append(r.failures, "Fail") }
func (r *recorder) FailNow()          { panic("haltest: recorder does not support FailNow") }
func (r *recorder) Fatalf(format string, args ...any) {
	panic("haltest: recorder does not support Fatalf: " + fmt.Sprintf(format, args...))
}

// passes reports whether s.check accepts got for want (tol under IEEE, as
// the suite computes it) for kernel op in dt.
func passes(t *testing.T, ar Arithmetic, op string, dt hal.DType, got, want float64, tol []float64) bool {
	r := &recorder{TB: t}
	s := &suite{arith: ar}
	s.check(r, op, dt, []float64{got}, []float64{want}, tol, nil)
	return len(r.failures) == 0
}

// ulpsAway is x moved by k ulps of dt (k may be negative).
func ulpsAway(dt hal.DType, x float64, k int) float64 {
	for ; k > 0; k-- {
		_, x = neighbours(dt, math.Nextafter(x, math.Inf(1)))
	}
	for ; k < 0; k++ {
		x, _ = neighbours(dt, math.Nextafter(x, math.Inf(-1)))
	}
	return x
}

// TestToleranceTightness pins what each arithmetic accepts: WGSL's
// latitude and no more, IEEE's exactness, and nothing near an error that
// a broken kernel makes (1e-4 relative for a division).
func TestToleranceTightness(t *testing.T) {
	f32 := hal.Float32
	// 4.18/π rounded: the quotient of the H200 report's magnitude.
	q := float64(float32(4.18 / math.Pi))
	for _, c := range []struct {
		name string
		ar   Arithmetic
		op   string
		got  float64
		ok   bool
	}{
		{"IEEE div exact", IEEE, hal.Div.Kernel(), q, true},
		{"IEEE div 1 ulp", IEEE, hal.Div.Kernel(), ulpsAway(f32, q, 1), false},
		{"WGSL div 2 ulp", WGSL, hal.Div.Kernel(), ulpsAway(f32, q, 2), true},
		{"WGSL div −2 ulp", WGSL, hal.Div.Kernel(), ulpsAway(f32, q, -2), true},
		{"WGSL div 4 ulp", WGSL, hal.Div.Kernel(), ulpsAway(f32, q, 4), false},
		{"WGSL div 1e-4 relative", WGSL, hal.Div.Kernel(), q * (1 + 1e-4), false},
		{"WGSL reciprocal 1e-5 relative", WGSL, hal.Reciprocal.Kernel(), q * (1 + 1e-5), false},
		{"WGSL add other neighbour", WGSL, hal.Add.Kernel(), ulpsAway(f32, q, 1), true},
		{"WGSL add 2 ulp", WGSL, hal.Add.Kernel(), ulpsAway(f32, q, 2), false},
		{"IEEE add other neighbour", IEEE, hal.Add.Kernel(), ulpsAway(f32, q, 1), false},
		{"WGSL neg 1 ulp", WGSL, hal.Neg.Kernel(), ulpsAway(f32, q, 1), false},
		{"WGSL sqrt 4 ulp", WGSL, hal.Sqrt.Kernel(), ulpsAway(f32, q, 4), true},
		{"WGSL sqrt 1e-5 relative", WGSL, hal.Sqrt.Kernel(), q * (1 + 1e-5), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The exact result lies just above q, so that q is its nearest
			// float32 and its neighbours are q and the next one up.
			want := q + ULP(f32, q)/8
			var tol []float64
			if c.op == hal.Sqrt.Kernel() {
				tol = []float64{2 * unitRoundoff(f32) * want} // unaryTol's IEEE bound
			}
			assert.Equal(t, c.ok, passes(t, c.ar, c.op, f32, c.got, want, tol))
		})
	}
}

// TestWGSLRows checks the arithmetic's reading of the accuracy table.
func TestWGSLRows(t *testing.T) {
	f32 := hal.Float32
	u := unitRoundoff(f32)
	assert.Equal(t, 5.0, WGSL.primRel(primDiv, f32), "x/y: 2.5 ulp ≤ 5u relative")
	assert.Equal(t, 9.0, WGSL.primRel(primSqrt, f32), "sqrt: 1.0/inverseSqrt(x), 4u + 5u")
	assert.Equal(t, 2.0, WGSL.primRel(primRound, f32), "either neighbour")
	assert.Equal(t, 1.0, IEEE.primRel(primDiv, f32))
	assert.Equal(t, 2.0, WGSL.ExtraULPs(hal.Div.Kernel(), f32))
	assert.Zero(t, IEEE.ExtraULPs(hal.Div.Kernel(), f32))
	assert.Zero(t, WGSL.ExtraULPs(hal.Exp.Kernel(), f32), "math.wgsl's exp uses no division or built-in with latitude")
	assert.Equal(t, 0x1p-126, WGSL.FlushFloor(f32))
	assert.Zero(t, IEEE.FlushFloor(f32))

	// The table itself, at a few points.
	exp := wgslRow("exp", f32)
	assert.Equal(t, 23*ULP(f32, math.Exp(10)), exp.ErrorAt(f32, 10, math.Exp(10)), "3 + 2|x| ulp")
	log := wgslRow("log", f32)
	assert.Equal(t, 0x1p-21, log.ErrorAt(f32, 1.5, math.Log(1.5)), "absolute inside [0.5, 2]")
	assert.Equal(t, 3*ULP(f32, math.Log(8)), log.ErrorAt(f32, 8, math.Log(8)))
	assert.True(t, math.IsInf(wgslRow("sin", f32).ErrorAt(f32, 4, math.Sin(4)), 1), "undefined outside [−π, π]")
	assert.True(t, math.IsInf(wgslRow("x/y", f32).ErrorAt(f32, 0x1p127, 1), 1), "undefined for |y| > 2¹²⁶")
	assert.InDelta(t, 2.5*ULP(hal.Float16, 1.5), wgslRow("x/y", hal.Float16).ErrorAt(hal.Float16, 3, 1.5), 0)
	assert.Equal(t, 9*u*1.9, wgslRow("sqrt", f32).ErrorAt(f32, 1.9*1.9, 1.9), "inherited: 9u relative")
	assert.True(t, math.IsInf(wgslRow("tan", f32).ErrorAt(f32, 1, math.Tan(1)), 1), "inherited from a quotient of bounds it does not state")

	assert.Equal(t, 0x1p-23, ULP(f32, 1))
	assert.Equal(t, 0x1p-23, ULP(f32, 1.99))
	assert.Equal(t, 0x1p-149, ULP(f32, 1e-40), "subnormal spacing")
	assert.Equal(t, 0x1p-10, ULP(hal.Float16, 1))
	assert.Equal(t, 2*u, ULP(f32, 1))
}

// TestNeighbours checks the bracketing the faithful check relies on.
func TestNeighbours(t *testing.T) {
	for _, c := range []struct {
		dt     hal.DType
		x      float64
		lo, hi float64
	}{
		{hal.Float32, 1, 1, 1},
		{hal.Float32, 1 + 0x1p-30, 1, 1 + 0x1p-23},
		{hal.Float32, -(1 + 0x1p-30), -(1 + 0x1p-23), -1},
		{hal.Float32, 1 - 0x1p-30, 1 - 0x1p-24, 1},
		{hal.Float32, 3.5e38, math.MaxFloat32, math.Inf(1)},
		{hal.Float16, 1 + 0x1p-12, 1, 1 + 0x1p-10},
		{hal.Float16, -(1 + 0x1p-12), -(1 + 0x1p-10), -1},
		{hal.Float16, 65510, 65504, math.Inf(1)},
		{hal.Float16, 1e-9, 0, 0x1p-24},
		{hal.Float16, -1e-9, -0x1p-24, 0},
	} {
		lo, hi := neighbours(c.dt, c.x)
		assert.Equal(t, c.lo, lo, "%v below %g", c.dt, c.x)
		assert.Equal(t, c.hi, hi, "%v above %g", c.dt, c.x)
	}
	require.Equal(t, 1+0x1p-22, ulpsAway(hal.Float32, 1, 2))
}
