package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Tolerances against the float64 references.
//
// Add, Mul and ReLU have none: they are compared bit for bit (±0 aside)
// with the float64 result rounded to float32 (see checkExact). That is not
// optimistic: the sum or product of two float32s is exact in float64, so one
// rounding to float32 equals the correctly rounded float32 operation that
// IEEE 754 (and Vulkan, Metal, D3D for these ops) require. Inputs stay in
// normal range, so a GPU that flushes subnormals cannot differ.
const (
	// sigmoidAbsTol and sigmoidRelTol bound |got − ref| ≤ abs + rel·|ref|.
	// GPU exp is approximate (WGSL allows 3 + 2|x| ULP); damped by
	// σ(1−σ) that is well under 1e-6 absolute in 1/(1+e^−x), and 2e-6
	// leaves room for a division that is not correctly rounded (WGSL
	// allows 2.5 ULP). σ lies in [0, 1], so the relative term, 4 float32
	// ulps (≤ 4.8e-7), only adds headroom near 1. Results for x below
	// about −87, where float32 goes subnormal or to zero, pass by the
	// absolute term whether or not the device flushes them.
	sigmoidAbsTol = 2e-6
	sigmoidRelTol = 4 * 0x1p-23

	// matmulTolPerTerm bounds each element as
	// |got − ref| ≤ k · matmulTolPerTerm · Σ_p |a[i,p]·b[p,j]|.
	// A length-k float32 dot product summed in any order, with or without
	// fused multiply-add, is within k·u·Σ|a·b| of the exact value, u = 2^-24
	// (Higham, Accuracy and Stability, §3.1); using 2u gives a factor of two
	// for blocked or tree summation. For k = 0 the bound is 0: dst must be
	// exactly zero.
	matmulTolPerTerm = 0x1p-23
)

// maxReported caps the mismatches listed in one failure message.
const maxReported = 5

// mismatches collects elements that broke a tolerance and reports the
// first few with one assertion, so a 5M-element failure stays readable and
// checking does not cost a testify call per element.
type mismatches struct {
	count int
	first []string
}

func (m *mismatches) add(i int, got float32, want float64, tol float64) {
	m.count++
	if len(m.first) < maxReported {
		m.first = append(m.first, fmt.Sprintf("[%d] got %g, want %g (±%.3g)", i, got, want, tol))
	}
}

func (m *mismatches) assert(t testing.TB, n int) {
	t.Helper()
	assert.Zerof(t, m.count, "%d of %d elements out of tolerance, first: %v", m.count, n, m.first)
}

// checkExact asserts got[i] == float32(want[i]) for every i: zero
// tolerance, for kernels that are a single correctly rounded operation.
func checkExact(t testing.TB, got []float32, want []float64) {
	t.Helper()
	assert.Len(t, got, len(want))
	var bad mismatches
	for i := range min(len(got), len(want)) {
		if got[i] != float32(want[i]) {
			bad.add(i, got[i], want[i], 0)
		}
	}
	bad.assert(t, len(want))
}

// checkClose asserts |got[i] − want[i]| ≤ abs + rel·|want[i]|. NaN in got
// always fails.
func checkClose(t testing.TB, got []float32, want []float64, abs, rel float64) {
	t.Helper()
	assert.Len(t, got, len(want))
	var bad mismatches
	for i := range min(len(got), len(want)) {
		tol := abs + rel*math.Abs(want[i])
		if !(math.Abs(float64(got[i])-want[i]) <= tol) {
			bad.add(i, got[i], want[i], tol)
		}
	}
	bad.assert(t, len(want))
}

// checkBounded asserts |got[i] − want[i]| ≤ tol[i] for every i.
func checkBounded(t testing.TB, got []float32, want, tol []float64) {
	t.Helper()
	assert.Len(t, got, len(want))
	var bad mismatches
	for i := range min(len(got), len(want)) {
		if !(math.Abs(float64(got[i])-want[i]) <= tol[i]) {
			bad.add(i, got[i], want[i], tol[i])
		}
	}
	bad.assert(t, len(want))
}
