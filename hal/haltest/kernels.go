package haltest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// kernelSpec is how the suite tests one kernel key of hal.Kernels().
type kernelSpec struct {
	// test checks the kernel in a dtype the device declared.
	test func(t *testing.T, s *suite, dt hal.DType)
	// probe makes a small valid call in dt, for the dtypes the device
	// did not declare: it must fail with hal.ErrUnsupported.
	probe func(t *testing.T, s *suite, dt hal.DType) error
}

// zeros makes a contiguous operand of zeros (valid data for every probe:
// index 0 is in range).
func (s *suite) zeros(t testing.TB, dt hal.DType, shape ...int) hal.View {
	return s.operand(t, dt, shape, contiguous, func() float64 { return 0 }).View
}

// probeWindow is a 2×2 window over a 3×3 image: a 2×2 output.
var probeWindow = hal.Window{KH: 2, KW: 2, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1, OutH: 2, OutW: 2}

// kernelSpecs maps every kernel key to its test. A key of hal.Kernels()
// missing here fails the suite (and TestEveryKernelHasACase, without a
// device), so a kernel added to the contract cannot go untested. The
// dtypes a device may declare a kernel for are those of its entry in hal's
// kernel table.
func kernelSpecs() map[string]kernelSpec {
	specs := map[string]kernelSpec{
		hal.KernelFill: {test: testFill, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Fill(s.zeros(t, dt, 4), 1, 0)
		}},
		hal.KernelWhere: {test: testWhere, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Where(s.zeros(t, dt, 4), s.zeros(t, hal.Int32, 4), s.zeros(t, dt, 4), s.zeros(t, dt, 4))
		}},
		hal.KernelMatMul: {test: testMatMul, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.MatMul(s.zeros(t, dt, 2, 2), s.zeros(t, dt, 2, 3), s.zeros(t, dt, 3, 2), 1, 0)
		}},
		hal.KernelGather: {test: testGather, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Gather(s.zeros(t, dt, 2, 3), s.zeros(t, dt, 2, 3), s.zeros(t, hal.Int32, 2, 3), 1)
		}},
		hal.KernelScatterAdd: {test: testScatterAdd, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.ScatterAdd(s.zeros(t, dt, 2, 3), s.zeros(t, hal.Int32, 2, 3), s.zeros(t, dt, 2, 3), 1)
		}},
		hal.KernelIm2Col: {test: testIm2Col, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Im2Col(s.zeros(t, dt, 1, 4, 4), s.zeros(t, dt, 1, 1, 3, 3), probeWindow)
		}},
		hal.KernelCol2Im: {test: func(t *testing.T, s *suite, dt hal.DType) {
			testCol2Im(t, s, dt)
			if s.has(hal.KernelIm2Col, dt) {
				t.Run("adjoint", func(t *testing.T) { testAdjoint(t, s, dt) })
			}
		}, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Col2Im(s.zeros(t, dt, 1, 1, 3, 3), s.zeros(t, dt, 1, 4, 4), probeWindow)
		}},
		hal.KernelGridSample: {test: testGridSample, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.GridSample(s.zeros(t, dt, 1, 1, 2, 2), s.zeros(t, dt, 1, 1, 3, 3), s.zeros(t, dt, 1, 2, 2, 2), hal.GridZeros, false)
		}},
		hal.KernelSoftmax: {test: testSoftmax, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Softmax(s.zeros(t, dt, 2, 3), s.zeros(t, dt, 2, 3), false)
		}},
		hal.KernelLayerNorm: {test: testLayerNorm, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.LayerNorm(s.zeros(t, dt, 2, 3), s.zeros(t, dt, 2, 3), 1e-5)
		}},
		hal.KernelConv2D: {test: testConv2D, probe: func(t *testing.T, s *suite, dt hal.DType) error {
			return s.dev.Conv2D(s.zeros(t, dt, 1, 2, 2, 2), s.zeros(t, dt, 1, 1, 3, 3), s.zeros(t, dt, 2, 1, 2, 2), probeWindow, 1)
		}},
	}
	for _, d := range hal.Distributions {
		specs[d.Kernel()] = kernelSpec{
			test: func(t *testing.T, s *suite, dt hal.DType) { testRandom(t, s, d, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error {
				return s.dev.Random(s.zeros(t, dt, 4), d, 0.5, 1, 0)
			},
		}
	}
	for _, op := range hal.UnaryOps {
		specs[op.Kernel()] = kernelSpec{
			test: func(t *testing.T, s *suite, dt hal.DType) { testUnary(t, s, op, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error {
				return s.dev.Unary(op, s.zeros(t, dt, 4), s.zeros(t, dt, 4), unaryArgs(op, dt)[0])
			},
		}
	}
	for _, op := range hal.BinaryOps {
		specs[op.Kernel()] = kernelSpec{
			test: func(t *testing.T, s *suite, dt hal.DType) { testBinary(t, s, op, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error {
				return s.dev.Binary(op, s.zeros(t, resultType(op, dt), 4), s.zeros(t, dt, 4), s.zeros(t, dt, 4))
			},
		}
	}
	for _, op := range hal.ReduceOps {
		specs[op.Kernel()] = kernelSpec{
			test: func(t *testing.T, s *suite, dt hal.DType) { testReduce(t, s, op, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error {
				return s.dev.Reduce(op, s.zeros(t, reduceType(op, dt), 2), s.zeros(t, dt, 2, 3), 1)
			},
		}
	}
	for _, op := range hal.PoolOps {
		specs[op.Kernel()] = kernelSpec{
			test: func(t *testing.T, s *suite, dt hal.DType) { testPool(t, s, op, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error {
				var indices hal.View
				if op == hal.PoolMax {
					indices = s.zeros(t, hal.Int32, 1, 1, 2, 2)
				}
				return s.dev.Pool2D(op, s.zeros(t, dt, 1, 1, 2, 2), indices, s.zeros(t, dt, 1, 1, 3, 3), probeWindow, false)
			},
		}
	}
	for _, op := range hal.LinalgOps {
		specs[op.Kernel()] = kernelSpec{
			test:  func(t *testing.T, s *suite, dt hal.DType) { testLinalg(t, s, op, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error { return linalgProbe(t, s, op, dt) },
		}
	}
	for _, o := range hal.Optimizers {
		specs[o.Kernel()] = kernelSpec{
			test:  func(t *testing.T, s *suite, dt hal.DType) { testStep(t, s, o, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error { return stepProbe(t, s, o, dt) },
		}
	}
	specs[hal.KernelSort] = kernelSpec{test: testSort, probe: func(t *testing.T, s *suite, dt hal.DType) error {
		return s.dev.Sort(s.zeros(t, dt, 2, 3), s.zeros(t, hal.Int32, 2, 3), s.zeros(t, dt, 2, 3), false, true)
	}}
	for _, op := range hal.ScanOps {
		specs[op.Kernel()] = kernelSpec{
			test: func(t *testing.T, s *suite, dt hal.DType) { testScan(t, s, op, dt) },
			probe: func(t *testing.T, s *suite, dt hal.DType) error {
				return s.dev.Scan(op, s.zeros(t, dt, 2, 3), s.zeros(t, dt, 2, 3))
			},
		}
	}
	specs[hal.KernelResample] = kernelSpec{test: testResample, probe: resampleProbe}
	return specs
}

// testKernels runs every kernel key in every dtype: the full check where
// the device declares it, an hal.ErrUnsupported probe where it does not.
func testKernels(t *testing.T, s *suite) {
	specs := kernelSpecs()
	for _, key := range hal.Kernels() {
		t.Run(key, func(t *testing.T) {
			if key == hal.KernelCopy {
				testCopyPairs(t, s)
				return
			}
			spec, ok := specs[key]
			require.True(t, ok, "the suite has no test for kernel %q", key)
			for _, dt := range hal.DTypes {
				if !s.has(key, dt) {
					t.Run(dt.String()+"/unsupported", func(t *testing.T) {
						checkUnsupported(t, key, dt, spec.probe(t, s, dt))
					})
					continue
				}
				t.Run(dt.String(), func(t *testing.T) {
					entry, _ := hal.LookupKernel(key)
					require.True(t, entry.DTypes.Has(dt), "the contract does not define %s for %s, yet the device declares it", key, dt)
					spec.test(t, s, dt)
				})
			}
		})
	}
}

// testCopyPairs runs Copy between every pair of declared dtypes and
// probes the pairs with an undeclared side.
func testCopyPairs(t *testing.T, s *suite) {
	for _, src := range hal.DTypes {
		for _, dst := range hal.DTypes {
			name := fmt.Sprintf("%v-to-%v", src, dst)
			if !s.has(hal.KernelCopy, src) || !s.has(hal.KernelCopy, dst) {
				t.Run(name+"/unsupported", func(t *testing.T) {
					undeclared := src
					if s.has(hal.KernelCopy, src) {
						undeclared = dst
					}
					checkUnsupported(t, hal.KernelCopy, undeclared, s.dev.Copy(s.zeros(t, dst, 4), s.zeros(t, src, 4)))
				})
				continue
			}
			t.Run(name, func(t *testing.T) { testCopy(t, s, src, dst) })
		}
	}
}

// checkUnsupported asserts err wraps hal.ErrUnsupported and names the
// dtype, so a user learns what they asked for that the device lacks.
func checkUnsupported(t *testing.T, key string, dt hal.DType, err error) {
	t.Helper()
	if assert.ErrorIs(t, err, hal.ErrUnsupported, "%s in %v is not declared, so the call must fail with ErrUnsupported", key, dt) {
		assert.Contains(t, err.Error(), dt.String(), "the message names the dtype")
	}
}

// testCapabilities checks what the device declares against the contract
// (the required tier for float32 at least, see hal.Optional), and that a WebGPU device declares float16 only with shader-f16, without
// which WGSL's "enable f16;" fails shader creation.
func testCapabilities(t *testing.T, s *suite) {
	if s.dev.Info().Backend != "cpu" {
		for key, set := range s.caps {
			if set.Has(hal.Float16) {
				assert.Contains(t, s.dev.Info().Features, "shader-f16", "%s declares float16 without shader-f16", key)
				break
			}
		}
	}
	known := map[string]bool{}
	for _, k := range hal.Kernels() {
		known[k] = true
	}
	for key := range known {
		if !hal.Optional(key) {
			assert.True(t, s.caps.Supports(key, hal.Float32), "required kernel %q is not declared for float32", key)
		}
	}
	for key, set := range s.caps {
		assert.True(t, known[key], "declared kernel %q is not in hal.Kernels()", key)
		for _, dt := range set.List() {
			assert.True(t, dt.Valid(), "kernel %q declares an invalid dtype", key)
		}
	}
}
