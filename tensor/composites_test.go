package tensor

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// forEachTier runs f on every device twice: as opened ("fused"), where
// the ops take the device's fused kernels, and through
// haltest.RequiredOnly ("composed"), a second device on the same adapter
// that declares only the required tier, where the ops run their
// compositions (composites.go).
func forEachTier(t *testing.T, f func(t *testing.T, dev *Device)) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		t.Run("fused", func(t *testing.T) { f(t, dev) })
		t.Run("composed", func(t *testing.T) { f(t, requiredOnly(t, dev)) })
	})
}

// requiredOnly opens dev's adapter again without its optional tier.
func requiredOnly(t *testing.T, dev *Device) *Device {
	composed := OpenWrappedForTest(t, dev.Name(), haltest.RequiredOnly)
	for kernel := range composed.caps() {
		require.False(t, hal.Optional(kernel), "%s is declared through RequiredOnly", kernel)
	}
	return composed
}

// TestCompositionsUseRequiredKernels: every optional kernel but conv2d
// (whose composition, im2col and a matmul, is Conv2d's own) and the linalg
// family (routed to the CPU, see hal.LinalgOp) has a
// composition here, and a composition issues required kernels only, so
// that a device without the optional tier runs it.
func TestCompositionsUseRequiredKernels(t *testing.T) {
	for _, kernel := range hal.Kernels() {
		uses, composed := compositionUses[kernel]
		if !hal.Optional(kernel) {
			assert.False(t, composed, "%s is required, yet composed", kernel)
			continue
		}
		if kernel == hal.KernelConv2D {
			continue
		}
		if k, _ := hal.LookupKernel(kernel); k.Family == hal.FamilyLinalg {
			continue // none: the ops go to the CPU instead (linalg_decomp.go)
		}
		if assert.True(t, composed, "optional %s has no composition", kernel) {
			for _, u := range uses {
				assert.False(t, hal.Optional(u), "%s's composition uses the optional %s", kernel, u)
				assert.Contains(t, hal.Kernels(), u)
			}
		}
	}
}

// stableSigmoid is σ(x) without overflow or cancellation.
func stableSigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// composedUnaryCases are the optional unary ops, with float64 references
// that stay accurate where a naive formula cancels (x ≪ 0).
var composedUnaryCases = []struct {
	name   string
	kernel hal.UnaryOp
	op     func(*Tensor) *Tensor
	ref    func(float64) float64
	family opFamily
}{
	{"Sigmoid", hal.Sigmoid, Sigmoid, stableSigmoid, familyTranscendental},
	{"SiLU", hal.SiLU, SiLU, func(x float64) float64 { return x * stableSigmoid(x) }, familyTranscendental},
	{"GELU", hal.GELU, GELU, func(x float64) float64 { return x / 2 * math.Erfc(-x/math.Sqrt2) }, familyTranscendental},
	{"GELUTanh", hal.GELUTanh, GELUTanh, func(x float64) float64 {
		return x * stableSigmoid(2*math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))
	}, familyTranscendental},
	{"ELU", hal.ELU, func(x *Tensor) *Tensor { return x.ELU(0.7) }, func(x float64) float64 {
		if x > 0 || math.IsNaN(x) {
			return x
		}
		return 0.7 * math.Expm1(x)
	}, familyTranscendental},
	{"LeakyReLU", hal.LeakyReLU, func(x *Tensor) *Tensor { return x.LeakyReLU(0.1) }, func(x float64) float64 {
		if x >= 0 || math.IsNaN(x) {
			return x
		}
		return 0.1 * x
	}, familyExact},
	{"Softplus", hal.Softplus, func(x *Tensor) *Tensor { return x.Softplus(2, 3) }, stableSoftplus(2, 3), familyTranscendental},
	{"Softplus", hal.Softplus, func(x *Tensor) *Tensor { return x.Softplus(0.5, 20) }, stableSoftplus(0.5, 20), familyTranscendental},
}

func stableSoftplus(beta, threshold float64) func(float64) float64 {
	return func(x float64) float64 {
		z := beta * x
		if z > threshold {
			return x
		}
		return (math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))) / beta
	}
}

// edgeValues are the inputs where a composition may part from the kernel:
// signed zeros, values near 0 (cancellation), past where e^±x
// overflows, the infinities and NaN.
var edgeValues = []float64{0, math.Copysign(0, -1), 1e-6, -1e-6, 1e-3, -1e-3, 0.5, -0.5, 3, -3, 10, -10,
	30, -30, 100, -100, 1e4, -1e4, math.Inf(1), math.Inf(-1), math.NaN()}

// TestComposedUnaryOps holds the optional unary ops, fused and composed,
// to float64 references on random inputs of odd sizes and on edge values.
func TestComposedUnaryOps(t *testing.T) {
	forEachTier(t, func(t *testing.T, dev *Device) {
		for _, c := range composedUnaryCases {
			t.Run(c.name, func(t *testing.T) {
				for _, dtype := range floatTypes {
					if !Supports(dev, c.name, dtype) {
						continue
					}
					t.Run(dtype.String(), func(t *testing.T) {
						edges := make([]float64, len(edgeValues))
						for i, v := range edgeValues {
							edges[i] = roundTo(dtype, v)
						}
						inputs := [][]float64{edges}
						for _, n := range []int{1, 7, 1025} {
							inputs = append(inputs, randomValues(newRand(t), dtype, n, -8, 8))
						}
						for _, xv := range inputs {
							x := upload(dev, dtype, xv)
							got := c.op(x)
							want := apply(c.ref, xv)
							checkClose(t, want, read64(t, got), familyTol(dtype, c.family, want))
							releaseAll(x, got)
						}
						// A strided operand goes through the composition as through
						// the kernel.
						shape := []int{3, 5, 7}
						xv := randomValues(newRand(t), dtype, product(shape), -8, 8)
						x := uploadAs(dev, dtype, xv, shape, transposed)
						got := c.op(x)
						defer releaseAll(x, got)
						want := apply(c.ref, xv)
						checkClose(t, want, read64(t, got), familyTol(dtype, c.family, want))
					})
				}
			})
		}
	})
}

// softmaxRef is softmax (log-softmax when log) of each row of n in
// float64; a row of −Inf only gives NaN.
func softmaxRef(x []float64, n int, log bool) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x); r += n {
		row := x[r : r+n]
		m := slices.Max(row)
		var sum float64
		for _, v := range row {
			sum += math.Exp(v - m)
		}
		for i, v := range row {
			switch {
			case math.IsInf(m, -1):
				out[r+i] = math.NaN()
			case log:
				out[r+i] = v - m - math.Log(sum)
			default:
				out[r+i] = math.Exp(v-m) / sum
			}
		}
	}
	return out
}

// TestComposedSoftmax holds Softmax and LogSoftmax, fused and composed,
// to a float64 reference over rows of odd lengths, along the last axis
// and across it, with large logits and −Inf.
func TestComposedSoftmax(t *testing.T) {
	inf := math.Inf(-1)
	edges := []float64{1000, 1001, 1002, 999, -1000, -1001, -1002, -999, 88, 89, 90, -1e4,
		0, inf, 0, inf, inf, inf, inf, inf}
	forEachTier(t, func(t *testing.T, dev *Device) {
		for _, dtype := range floatTypes {
			if !Supports(dev, "Softmax", dtype) {
				continue
			}
			for _, log := range []bool{false, true} {
				op := map[bool]func(*Tensor, int) *Tensor{false: Softmax, true: LogSoftmax}[log]
				t.Run(fmt.Sprintf("%v/log=%v", dtype, log), func(t *testing.T) {
					check := func(xv []float64, rows, n int, transpose bool) {
						x := upload(dev, dtype, xv, rows, n)
						var got *Tensor
						want := softmaxRef(xv, n, log)
						if transpose {
							// The rows lie along the first axis of x's transpose.
							xt := x.Transpose(0, 1).Contiguous()
							defer xt.Release()
							y := op(xt, 0)
							defer y.Release()
							got = y.Transpose(0, 1)
						} else {
							got = op(x, -1)
						}
						defer releaseAll(x, got)
						checkClose(t, want, read64(t, got), familyTol(dtype, familyTranscendental, want))
					}
					for _, n := range []int{1, 7, 1025} {
						check(randomValues(newRand(t), dtype, 3*n, -4, 4), 3, n, false)
						check(randomValues(newRand(t), dtype, 5*n, -4, 4), 5, n, true)
					}
					edge := make([]float64, len(edges))
					for i, v := range edges {
						edge[i] = roundTo(dtype, v)
					}
					check(edge, 5, 4, false)
				})
			}
		}
	})
}

// TestComposedStep runs every update configuration, fused and composed,
// against haltest.StepReference, as TestStep does.
func TestComposedStep(t *testing.T) {
	forEachTier(t, func(t *testing.T, dev *Device) {
		for _, dtype := range floatTypes {
			for _, c := range stepConfigs {
				if !Supports(dev, stepName(c.op), dtype) {
					continue
				}
				for _, n := range []int{1, 7, 1025} {
					t.Run(fmt.Sprintf("%v/%s/%v/n=%d", c.op, c.name, dtype, n), func(t *testing.T) {
						testStepValues(t, dev, dtype, c.op, c.args, n, c.scaled)
					})
				}
			}
		}
	})
}

// TestSupportsMatchesBehaviourRequiredOnly is TestSupportsMatchesBehaviour
// on devices without the optional tier: every op still runs where
// Supports says so (through its compositions), and refuses where not.
func TestSupportsMatchesBehaviourRequiredOnly(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) { testSupportsMatchesBehaviour(t, requiredOnly(t, dev)) })
}

// TestComposedOpsSupported: a device without the optional tier supports
// exactly the dtypes of each composed op that the full device does.
func TestComposedOpsSupported(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		composed := requiredOnly(t, dev)
		for _, op := range []string{"Sigmoid", "SiLU", "GELU", "GELUTanh", "ELU", "LeakyReLU", "Softplus",
			"Softmax", "LogSoftmax", "Conv2d", stepName(Adam), stepName(SGD), stepName(RMSProp), stepName(Adagrad)} {
			for _, dtype := range DTypes {
				assert.Equal(t, Supports(dev, op, dtype), Supports(composed, op, dtype), "%s on %v", op, dtype)
			}
		}
	})
}
