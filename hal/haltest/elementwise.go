package haltest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// elementSizes covers empty, single, sub-workgroup, exact-workgroup and
// ragged lengths, and one long enough (5M > 65,535·64) that a GPU must
// dispatch in more than one dimension or loop.
var elementSizes = []int{0, 1, 7, 64, 1000, 1025, 5_000_000}

// sentinel fills output buffers before a kernel runs, so an element the
// kernel skipped (or wrote past n) shows up even where the answer is 0.
const sentinel = float32(-7.25)

// tail is how many elements past n each output buffer holds, to catch
// kernels that write beyond n.
const tail = 3

func testBinary(t *testing.T, dev hal.Device) {
	for _, op := range []hal.BinaryOp{hal.Add, hal.Mul} {
		for _, n := range elementSizes {
			t.Run(fmt.Sprintf("%v/n=%d", op, n), func(t *testing.T) {
				rng := newRand(uint64(op), uint64(n))
				a, b := randValues(rng, n, -10, 10), randValues(rng, n, -10, 10)
				da, db := upload(t, dev, a), upload(t, dev, b)
				dst := upload(t, dev, filled(n+tail, sentinel))
				require.NoError(t, dev.Binary(op, dst, da, db, n))
				got := download(t, dev, dst, n+tail)
				checkExact(t, got[:n], refBinary(op, a, b))
				assert.Equal(t, filled(tail, sentinel), got[n:], "wrote past n")
			})
		}
	}
	t.Run("add/alias-dst-a", func(t *testing.T) {
		const n = 1025
		rng := newRand(1, n)
		a, b := randValues(rng, n, -10, 10), randValues(rng, n, -10, 10)
		da, db := upload(t, dev, a), upload(t, dev, b)
		require.NoError(t, dev.Binary(hal.Add, da, da, db, n))
		checkExact(t, download(t, dev, da, n), refBinary(hal.Add, a, b))
	})
	t.Run("mul/same-input", func(t *testing.T) {
		const n = 1025
		a := randValues(newRand(2, n), n, -10, 10)
		da, dst := upload(t, dev, a), alloc(t, dev, n*4)
		require.NoError(t, dev.Binary(hal.Mul, dst, da, da, n))
		checkExact(t, download(t, dev, dst, n), refBinary(hal.Mul, a, a))
	})
}

func testUnary(t *testing.T, dev hal.Device) {
	for _, op := range []hal.UnaryOp{hal.ReLU, hal.Sigmoid} {
		for _, n := range elementSizes {
			t.Run(fmt.Sprintf("%v/n=%d", op, n), func(t *testing.T) {
				rng := newRand(10+uint64(op), uint64(n))
				x := randValues(rng, n, -10, 10)
				if op == hal.Sigmoid {
					x = sigmoidValues(rng, n)
				}
				src := upload(t, dev, x)
				dst := upload(t, dev, filled(n+tail, sentinel))
				require.NoError(t, dev.Unary(op, dst, src, n))
				got := download(t, dev, dst, n+tail)
				checkUnary(t, op, got[:n], x)
				assert.Equal(t, filled(tail, sentinel), got[n:], "wrote past n")
			})
		}
		t.Run(fmt.Sprintf("%v/alias-dst-src", op), func(t *testing.T) {
			const n = 1025
			x := sigmoidValues(newRand(20+uint64(op), n), n)
			src := upload(t, dev, x)
			require.NoError(t, dev.Unary(op, src, src, n))
			checkUnary(t, op, download(t, dev, src, n), x)
		})
	}
}

func checkUnary(t testing.TB, op hal.UnaryOp, got, x []float32) {
	t.Helper()
	switch op {
	case hal.ReLU:
		checkExact(t, got, refUnary(op, x))
	case hal.Sigmoid:
		checkClose(t, got, refUnary(op, x), sigmoidAbsTol, sigmoidRelTol)
	}
}

// refBinary computes a op b in float64.
func refBinary(op hal.BinaryOp, a, b []float32) []float64 {
	out := make([]float64, len(a))
	for i := range out {
		x, y := float64(a[i]), float64(b[i])
		switch op {
		case hal.Add:
			out[i] = x + y
		case hal.Mul:
			out[i] = x * y
		}
	}
	return out
}

// refUnary computes op(x) in float64.
func refUnary(op hal.UnaryOp, x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		v := float64(v)
		switch op {
		case hal.ReLU:
			out[i] = math.Max(v, 0)
		case hal.Sigmoid:
			// Exponent kept ≤ 0 so it never overflows; float64 makes
			// the result exact to far below the tolerance.
			if v >= 0 {
				out[i] = 1 / (1 + math.Exp(-v))
			} else {
				e := math.Exp(v)
				out[i] = e / (1 + e)
			}
		}
	}
	return out
}
