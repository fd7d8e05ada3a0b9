package tensor

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// opInputs makes deterministic random inputs for one op run: the same op
// and dtype give the same values on every device, so results can be
// compared across devices.
type opInputs struct {
	dev   *Device
	dtype DType
	rng   *rand.Rand
	owned []*Tensor
}

func newOpInputs(dev *Device, op string, dtype DType) *opInputs {
	h := fnv.New64a()
	fmt.Fprint(h, op, dtype)
	return &opInputs{dev: dev, dtype: dtype, rng: rand.New(rand.NewPCG(h.Sum64(), 7))}
}

func (in *opInputs) keep(t *Tensor) *Tensor {
	in.owned = append(in.owned, t)
	return t
}

func (in *opInputs) release() { releaseAll(in.owned...) }

// in returns a tensor of the op's dtype with values in [lo, hi); rank-2+
// shapes come transposed, so every op also sees a strided operand.
func (in *opInputs) in(lo, hi float64, shape ...int) *Tensor {
	values := randomValues(in.rng, in.dtype, product(shape), lo, hi)
	return in.keep(uploadAs(in.dev, in.dtype, values, shape, transposed))
}

func (in *opInputs) x(shape ...int) *Tensor { return in.in(-2, 2, shape...) }

func (in *opInputs) pos(shape ...int) *Tensor { return in.in(0.25, 2, shape...) }

// index returns Int32 indices in [0, size).
func (in *opInputs) index(size int, shape ...int) *Tensor {
	values := make([]float64, product(shape))
	for i := range values {
		values[i] = float64(in.rng.IntN(size))
	}
	return in.keep(upload(in.dev, Int32, values, shape...))
}

// mask returns an Int32 0/1 tensor.
func (in *opInputs) mask(shape ...int) *Tensor { return in.index(2, shape...) }

// opRunners runs each op of the op table on small random inputs. Every op
// outside the NN family must have one (TestOpTableIsCovered); the NN ops'
// tests may add theirs.
var opRunners = map[string]func(in *opInputs) *Tensor{}

func init() {
	binaries := map[string]func(a, b *Tensor) *Tensor{
		"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Pow": Pow, "Maximum": Maximum, "Minimum": Minimum,
		"Eq": Eq, "Ne": Ne, "Lt": Lt, "Le": Le, "Gt": Gt, "Ge": Ge, "ReLUGrad": ReLUGrad,
	}
	scalars := map[string]func(*Tensor, float64) *Tensor{
		"Add": (*Tensor).AddScalar, "Sub": (*Tensor).SubScalar, "Mul": (*Tensor).MulScalar,
		"Div": (*Tensor).DivScalar, "Pow": (*Tensor).PowScalar, "Maximum": (*Tensor).MaximumScalar,
		"Minimum": (*Tensor).MinimumScalar, "Eq": (*Tensor).EqScalar, "Ne": (*Tensor).NeScalar,
		"Lt": (*Tensor).LtScalar, "Le": (*Tensor).LeScalar, "Gt": (*Tensor).GtScalar, "Ge": (*Tensor).GeScalar,
		"ReLUGrad": (*Tensor).ReLUGradScalar,
	}
	for name, f := range binaries {
		opRunners[name] = func(in *opInputs) *Tensor {
			if name == "Div" || name == "Pow" {
				return f(in.x(3, 5), in.pos(5))
			}
			return f(in.x(3, 5), in.x(3, 1))
		}
		s := scalars[name]
		opRunners[name+"Scalar"] = func(in *opInputs) *Tensor { return s(in.pos(4, 6), 2) }
	}
	for _, c := range unaryCases {
		opRunners[c.name] = func(in *opInputs) *Tensor { return c.op(in.in(c.lo, c.hi, 4, 6)) }
	}
	for _, c := range reduceCases {
		opRunners[c.name] = func(in *opInputs) *Tensor {
			if c.name == "Prod" {
				return c.op(in.pos(3, 4, 5), []int{1}, false)
			}
			return c.op(in.x(3, 4, 5), []int{-1}, true)
		}
	}
	for name, f := range map[string]func(in *opInputs) *Tensor{
		"FromFloat32": func(in *opInputs) *Tensor { return FromFloat32(in.dev, []float32{1, 2.5}) },
		"FromFloat64": func(in *opInputs) *Tensor { return FromFloat64(in.dev, []float64{1, 2.5}) },
		"FromInt32":   func(in *opInputs) *Tensor { return FromInt32(in.dev, []int32{1, -2}) },
		"Zeros":       func(in *opInputs) *Tensor { return Zeros(in.dev, 3, 4) },
		"Ones":        func(in *opInputs) *Tensor { return Ones(in.dev, 3, 4) },
		"Full":        func(in *opInputs) *Tensor { return Full(in.dev, in.dtype, -1.5, 3, 4) },
		"ZerosLike":   func(in *opInputs) *Tensor { return ZerosLike(in.x(2, 3)) },
		"OnesLike":    func(in *opInputs) *Tensor { return OnesLike(in.x(2, 3)) },
		"FullLike":    func(in *opInputs) *Tensor { return FullLike(in.x(2, 3), 7) },
		"Arange":      func(in *opInputs) *Tensor { return Arange(in.dev, in.dtype, -3, 40, 3) },
		"Linspace":    func(in *opInputs) *Tensor { return Linspace(in.dev, -1, 2, 33) },
		"Eye":         func(in *opInputs) *Tensor { return Eye(in.dev, 4, 6) },
		"Rand":        func(in *opInputs) *Tensor { return NewGenerator(5).Rand(in.dev, 100) },
		"Randn":       func(in *opInputs) *Tensor { return NewGenerator(5).Randn(in.dev, 100) },
		"Bernoulli":   func(in *opInputs) *Tensor { return NewGenerator(5).Bernoulli(in.dev, 0.25, 100) },
		"Where":       func(in *opInputs) *Tensor { return Where(in.mask(3, 1), in.x(3, 4), in.x(4)) },
		"Cast": func(in *opInputs) *Tensor {
			to := Float32
			if in.dtype == Float32 {
				to = Int32
			}
			return in.x(3, 4).MulScalar(3).Cast(to)
		},
		"Contiguous": func(in *opInputs) *Tensor { return in.x(3, 4).Contiguous() },
		"MatMul":     func(in *opInputs) *Tensor { return MatMul(in.x(2, 3, 7), in.x(7, 5)) },
		"Gemm": func(in *opInputs) *Tensor {
			return Gemm(0.5, in.x(7, 3), true, in.x(5, 7), true, 2, in.x(5))
		},
		"MatVec":      func(in *opInputs) *Tensor { return MatVec(in.x(4, 7), in.x(7)) },
		"Outer":       func(in *opInputs) *Tensor { return Outer(in.x(4), in.x(5)) },
		"T":           func(in *opInputs) *Tensor { return in.x(3, 4).T() },
		"Transpose":   func(in *opInputs) *Tensor { return in.x(2, 3, 4).Transpose(0, 2) },
		"Permute":     func(in *opInputs) *Tensor { return in.x(2, 3, 4).Permute(1, 2, 0) },
		"Reshape":     func(in *opInputs) *Tensor { return in.x(3, 4).Reshape(2, -1) },
		"Flatten":     func(in *opInputs) *Tensor { return in.x(2, 3, 4).Flatten(0, 1) },
		"Squeeze":     func(in *opInputs) *Tensor { return in.x(3, 1).Squeeze() },
		"Unsqueeze":   func(in *opInputs) *Tensor { return in.x(3, 4).Unsqueeze(1) },
		"Expand":      func(in *opInputs) *Tensor { return in.x(3, 1).Expand(2, 3, 4) },
		"BroadcastTo": func(in *opInputs) *Tensor { return in.x(4).BroadcastTo(3, 4) },
		"Slice":       func(in *opInputs) *Tensor { return in.x(5, 6).Slice(1, 1, -1, 2) },
		"Split":       func(in *opInputs) *Tensor { return in.x(5, 6).Split(0, 2)[1] },
		"Chunk":       func(in *opInputs) *Tensor { return in.x(5, 6).Chunk(1, 4)[2] },
		"Concat":      func(in *opInputs) *Tensor { return Concat(1, in.x(3, 2), in.x(3, 5)) },
		"Stack":       func(in *opInputs) *Tensor { return Stack(1, in.x(3, 2), in.x(3, 2)) },
		"Pad":         func(in *opInputs) *Tensor { return in.x(3, 4).Pad([]int{1, 2, 0, 1}, PadConstant, 3) },
		"Pad(reflect)": func(in *opInputs) *Tensor {
			return in.x(3, 4).Pad([]int{2, 1, 1, 1}, PadReflect, 0)
		},
		"Gather":      func(in *opInputs) *Tensor { return in.x(3, 5).Gather(1, in.index(5, 3, 7)) },
		"IndexSelect": func(in *opInputs) *Tensor { return in.x(9, 4).IndexSelect(0, in.index(9, 12)) },
		"ScatterAdd": func(in *opInputs) *Tensor {
			return in.x(3, 5).ScatterAdd(1, in.index(5, 3, 7), in.x(3, 7))
		},
		"OneHot": func(in *opInputs) *Tensor { return OneHot(in.index(6, 2, 5), 6) },
	} {
		opRunners[name] = f
	}
}

// TestOpTableIsCovered keeps the op table and the runners in step.
func TestOpTableIsCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range Ops() {
		assert.False(t, seen[op.Name], "%s listed twice", op.Name)
		seen[op.Name] = true
		assert.NotEmpty(t, op.DTypes, op.Name)
		assert.NotNil(t, op.Kernels, op.Name)
		for _, dt := range op.DTypes {
			for _, k := range op.Kernels(dt) {
				assert.Contains(t, hal.Kernels(), k.Name, "%s needs an unknown kernel", op.Name)
			}
		}
		if _, ok := opRunners[op.Name]; !ok {
			if op.Family == FamilyNN {
				t.Logf("NN op %s has no runner in opRunners: not covered by the agreement test", op.Name)
				continue
			}
			t.Errorf("op %s has no runner in opRunners", op.Name)
		}
	}
}

// TestSupportsMatchesBehaviour runs every op for every dtype on every
// device: where Supports says yes the op must run cleanly, where it says
// no it must panic with hal.ErrUnsupported naming op, dtype and device.
func TestSupportsMatchesBehaviour(t *testing.T) { forEachDevice(t, testSupportsMatchesBehaviour) }

func testSupportsMatchesBehaviour(t *testing.T, dev *Device) {
	for _, op := range Ops() {
		run, ok := opRunners[op.Name]
		if !ok {
			continue
		}
		for _, dtype := range DTypes {
			if len(op.DTypes) == 1 && op.DTypes[0] != dtype {
				continue // an op of one fixed dtype (Zeros, OneHot…) takes no dtype
			}
			t.Run(op.Name+"/"+dtype.String(), func(t *testing.T) {
				if dtype == Int64 && !HoldsInt64(dev) {
					// No Int64 tensor exists there: Int64 data moved to
					// it becomes Int32 (TestInt64Narrowing).
					t.Skipf("%v holds int64 as int32", dev)
				}
				in := newOpInputs(dev, op.Name, dtype)
				defer in.release()
				var out *Tensor
				err := Catch(func() { out = run(in) })
				defer out.Release()
				if !Supports(dev, op.Name, dtype) {
					require.Error(t, err, "Supports says no, yet it ran")
					require.ErrorIs(t, err, hal.ErrUnsupported)
					msg := err.Error()
					for _, part := range []string{dtype.String(), dev.Name()} {
						if !strings.Contains(msg, part) {
							// Inputs of another dtype may be refused first
							// (FromFloat32 on a device without float32).
							assert.True(t, dtype.String() == part && strings.Contains(msg, "unsupported"), "%q lacks %q", msg, part)
						}
					}
					return
				}
				require.NoError(t, err)
				_, err = out.Float64s()
				require.NoError(t, err)
			})
		}
	}
}

// agreementTol is how far the CPU and a GPU may differ on the same inputs
// (both results carry their own rounding), per result dtype and op family.
func agreementTol(dtype DType, family string) tolerance {
	kind := 0 // exact families
	switch family {
	case FamilyUnary, FamilyRandom:
		kind = 1
	case FamilyReduction, FamilyLinalg, FamilyNN, FamilySort:
		kind = 2
	}
	return map[DType][3]tolerance{
		Float32: {{rel: 0x1p-22}, {rel: 16 * 0x1p-23, abs: 4e-6}, {rel: 1e-5, abs: 1e-5}},
		Float16: {{rel: 0x1p-10, abs: 0x1p-24}, {rel: 0x1p-9, abs: 1e-3}, {rel: 4e-3, abs: 4e-3}},
		Float64: {{rel: 0x1p-51}, {rel: 1e-14, abs: 1e-14}, {rel: 1e-12, abs: 1e-12}},
		Int32:   {{}, {}, {}},
	}[dtype][kind]
}

// TestCPUAgreesWithWebGPU runs every op on the same random inputs on both
// backends and compares, for every dtype both support.
func TestCPUAgreesWithWebGPU(t *testing.T) { forEachWebGPU(t, testCPUAgreesWithWebGPU) }

func testCPUAgreesWithWebGPU(t *testing.T, gpu *Device) {
	cpu := openCPU(t)
	for _, op := range Ops() {
		run, ok := opRunners[op.Name]
		if !ok {
			continue
		}
		for _, dtype := range DTypes {
			if !Supports(cpu, op.Name, dtype) || !Supports(gpu, op.Name, dtype) {
				continue
			}
			t.Run(op.Name+"/"+dtype.String(), func(t *testing.T) {
				results := make([][]float64, 2)
				var resultType DType
				for i, dev := range []*Device{cpu, gpu} {
					in := newOpInputs(dev, op.Name, dtype)
					out := run(in)
					results[i] = read64(t, out)
					resultType = out.DType()
					out.Release()
					in.release()
				}
				tol := agreementTol(resultType, op.Family)
				checkClose(t, results[0], results[1], func(i int) float64 {
					return tol.rel*math.Abs(results[0][i]) + tol.abs
				})
			})
		}
	}
}

func TestUnsupportedErrorText(t *testing.T) {
	dev := openCPU(t)
	i := FromInt32(dev, []int32{1, 2})
	defer i.Release()
	err := Catch(func() { i.GELU() })
	require.ErrorIs(t, err, hal.ErrUnsupported)
	var te *Error
	require.True(t, errors.As(err, &te))
	assert.Equal(t, "GELU", te.Op)
	assert.Equal(t, "tensor: GELU: int32 on "+dev.String()+": unsupported operation: GELU is not defined for int32", err.Error())

	// A device that lacks a kernel is named with the kernel it lacks.
	limited := limitedDevice(t, hal.Exp.Kernel())
	x := FromFloat32(limited, []float32{1})
	defer x.Release()
	assert.False(t, Supports(limited, "Exp", Float32))
	assert.True(t, Supports(limited, "Log", Float32))
	assert.Equal(t, "tensor: Exp: float32 on "+limited.String()+": unsupported operation (no unary.exp kernel for float32)",
		panicMessage(t, func() { x.Exp() }))
}

// limitedDevice is the CPU backend with some kernels undeclared.
func limitedDevice(t *testing.T, without ...string) *Device {
	cpu, _ := hal.Lookup(cpuBackend)
	hd, err := cpu.Open(0)
	require.NoError(t, err)
	dev := newDevice("limited", hd)
	for _, k := range without {
		delete(dev.capabilities, k)
	}
	return dev
}
