package tensor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
)

// stepConfigs are option combinations of each update, with whether a
// scale tensor goes along.
var stepConfigs = []struct {
	op     Optimizer
	name   string
	args   StepArgs
	scaled bool
}{
	{SGD, "plain", StepArgs{LR: 0.1}, false},
	{SGD, "momentum/first", StepArgs{LR: 0.1, Momentum: 0.9, FirstStep: true, WeightDecay: 0.01}, true},
	// Plain momentum after the first step: the CPU's vector path.
	{SGD, "momentum", StepArgs{LR: 0.1, Momentum: 0.9}, false},
	{SGD, "nesterov/dampening", StepArgs{LR: 0.05, Momentum: 0.9, Dampening: 0.2, Nesterov: true}, false},
	{Adam, "plain", StepArgs{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, BiasCorrection1: 0.19, BiasCorrection2: 0.001999}, true},
	{Adam, "adamw", StepArgs{LR: 1e-3, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, BiasCorrection1: 0.2, BiasCorrection2: 0.01, WeightDecay: 0.01, Decoupled: true}, false},
	{Adam, "weight-decay", StepArgs{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, BiasCorrection1: 0.1, BiasCorrection2: 0.001, WeightDecay: 0.1}, false},
	{RMSProp, "plain", StepArgs{LR: 1e-2, Alpha: 0.99, Eps: 1e-8}, false},
	{RMSProp, "centered/momentum", StepArgs{LR: 1e-2, Alpha: 0.9, Eps: 1e-8, Momentum: 0.5, Centered: true, WeightDecay: 0.01}, true},
	{Adagrad, "plain", StepArgs{LR: 1e-2, Eps: 1e-10, WeightDecay: 0.01}, true},
}

// stepInputs draws a param, grad, state and scale of n elements: square
// averages positive, RMSProp's above twice the squared mean.
func stepInputs(rng *rand.Rand, dtype DType, op Optimizer, a StepArgs, n int, scaled bool) (param, grad []float64, state [][]float64, scale []float64) {
	param = randomValues(rng, dtype, n, -2, 2)
	grad = randomValues(rng, dtype, n, -1, 1)
	for k := range op.States(a) {
		positive := (k == 0 && op != SGD) || (op == Adam && k == 1)
		if positive {
			state = append(state, randomValues(rng, dtype, n, 0, 0.5))
		} else {
			state = append(state, randomValues(rng, dtype, n, -0.5, 0.5))
		}
	}
	if op == RMSProp && a.Centered {
		mean := state[len(state)-1]
		for i, m := range mean {
			state[0][i] = roundTo(dtype, 2*m*m+state[0][i])
		}
	}
	if scaled {
		scale = randomValues(rng, dtype, 1, 0.1, 1)
	}
	return
}

func TestStep(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, dtype := range []DType{Float32, Float64, Float16} {
			for _, c := range stepConfigs {
				if !Supports(dev, stepName(c.op), dtype) {
					continue
				}
				for _, n := range []int{1, 7, 1000, 1025} {
					t.Run(fmt.Sprintf("%v/%s/%v/n=%d", c.op, c.name, dtype, n), func(t *testing.T) {
						testStepValues(t, dev, dtype, c.op, c.args, n, c.scaled)
					})
				}
			}
		}
	})
}

func testStepValues(t *testing.T, dev *Device, dtype DType, op Optimizer, a StepArgs, n int, scaled bool) {
	p0, g0, s0, sc0 := stepInputs(newRand(t), dtype, op, a, n, scaled)
	param, grad := upload(dev, dtype, p0), upload(dev, dtype, g0)
	state := make([]*Tensor, len(s0))
	for k, v := range s0 {
		state[k] = upload(dev, dtype, v)
	}
	var scale *Tensor
	if scaled {
		scale = upload(dev, dtype, sc0) // shape [1]
	}
	defer func() { releaseAll(append([]*Tensor{param, grad, scale}, state...)...) }()

	reads := dev.Stats().HostReads
	// Two steps: the second reads the state the first wrote.
	Step(op, param, grad, state, scale, a)
	mid := append([]*Tensor{param}, state...)
	midVals := make([][]float64, len(mid))
	require.Equal(t, reads, dev.Stats().HostReads, "Step read back from the device")
	for k, x := range mid {
		midVals[k] = read64(t, x)
	}
	want, tol := haltest.StepReference(op, a, dtype, p0, g0, s0, sc0)
	second := a
	second.FirstStep = false
	reads = dev.Stats().HostReads
	Step(op, param, grad, state, scale, second)
	require.Equal(t, reads, dev.Stats().HostReads, "Step read back from the device")
	want2, tol2 := haltest.StepReference(op, second, dtype, midVals[0], g0, midVals[1:], sc0)

	u := map[DType]float64{Float32: 0x1p-24, Float64: 0x1p-53, Float16: 0x1p-11}[dtype]
	for k, x := range mid {
		checkClose(t, want[k], midVals[k], func(i int) float64 { return tol[k][i] + u*math.Abs(want[k][i]) })
		checkClose(t, want2[k], read64(t, x), func(i int) float64 { return tol2[k][i] + u*math.Abs(want2[k][i]) })
	}
	assert.Equal(t, g0, read64(t, grad), "grad changed")
}

// A strided grad is copied before the kernel; param and state are not.
func TestStepStridedGrad(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		a := StepArgs{LR: 0.5, Momentum: 0.5}
		rng := newRand(t)
		p0, g0 := randomValues(rng, Float32, 6, -1, 1), randomValues(rng, Float32, 6, -1, 1)
		param, buf := upload(dev, Float32, p0, 2, 3), Zeros(dev, 2, 3)
		grad := uploadAs(dev, Float32, g0, []int{2, 3}, transposed)
		defer releaseAll(param, buf, grad)
		Step(SGD, param, grad, []*Tensor{buf}, nil, a)
		want, _ := haltest.StepReference(SGD, a, Float32, p0, g0, [][]float64{make([]float64, 6)}, nil)
		checkClose(t, want[0], read64(t, param), func(int) float64 { return 1e-6 })
		checkClose(t, want[1], read64(t, buf), func(int) float64 { return 1e-6 })
	})
}

func TestStepMisuse(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		other := openCPU(t)
		if dev.Name() == other.Name() {
			other = openSecondCPU(t)
		}
		z := func(shape ...int) *Tensor { return Zeros(dev, shape...) }
		p, g, m, v := z(4), z(4), z(4), z(4)
		adam := StepArgs{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, BiasCorrection1: 0.1, BiasCorrection2: 0.001}
		ints := FromInt32(dev, make([]int32, 4), 4)
		g5, two := z(5), z(2)
		wide := z(4, 2)
		col := wide.Slice(1, 0, 1, 1) // [4 1] with stride 2
		released := z(4)
		released.Release()
		foreign := Zeros(other, 4)
		pv := p.Reshape(2, 2)
		defer releaseAll(p, g, m, v, ints, g5, two, wide, col, foreign, pv)
		cases := []struct {
			name string
			call func()
			want []string
		}{
			{"state count", func() { Step(Adam, p, g, []*Tensor{m}, nil, adam) }, []string{"Step(adam)", "got 1 state tensors, want 2", "exp_avg, exp_avg_sq"}},
			{"sgd momentum", func() { Step(SGD, p, g, nil, nil, StepArgs{LR: 1, Momentum: 0.9}) }, []string{"Step(sgd)", "want 1", "momentum buffer"}},
			{"grad shape", func() { Step(Adam, p, g5, []*Tensor{m, v}, nil, adam) }, []string{"Step(adam)", "grad [5] float32 does not match param [4] float32"}},
			{"dtype", func() { Step(Adam, p, g, []*Tensor{m, ints}, nil, adam) }, []string{"state[1] [4] int32 does not match param [4] float32"}},
			{"int param", func() { Step(Adagrad, ints, g, []*Tensor{m}, nil, StepArgs{LR: 1}) }, []string{"Step(adagrad)", "int32", "unsupported operation"}},
			{"scale elements", func() { Step(SGD, p, g, nil, two, StepArgs{LR: 1}) }, []string{"scale [2] float32 must hold one element"}},
			{"strided state", func() {
				Step(SGD, col.Contiguous(), z(4, 1), []*Tensor{col}, nil, StepArgs{LR: 1, Momentum: 0.9})
			}, []string{"state[0] [4 1] float32 with strides [2 1] is not contiguous"}},
			{"alias", func() { Step(Adam, p, g, []*Tensor{m, m}, nil, adam) }, []string{"state[0] [4] float32 and state[1] [4] float32 share storage"}},
			{"view alias", func() { Step(SGD, pv, p.Reshape(2, 2), nil, nil, StepArgs{LR: 1}) }, []string{"param [2 2] float32 and grad [2 2] float32 share storage"}},
			{"released", func() { Step(SGD, released, g, nil, nil, StepArgs{LR: 1}) }, []string{"Step(sgd)", "use of released tensor [4]"}},
			{"nil", func() { Step(SGD, p, nil, nil, nil, StepArgs{LR: 1}) }, []string{"Step(sgd)", "nil tensor"}},
			{"devices", func() { Step(SGD, p, foreign, nil, nil, StepArgs{LR: 1}) }, []string{"Step(sgd)", "different devices"}},
			{"unknown", func() { Step(Optimizer(9), p, g, nil, nil, StepArgs{}) }, []string{"Step", "unknown optimizer Optimizer(9)"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := Catch(c.call)
				require.Error(t, err)
				var te *Error
				require.True(t, errors.As(err, &te), "%v", err)
				for _, w := range c.want {
					assert.Contains(t, err.Error(), w)
				}
			})
		}
		assert.Equal(t, make([]float64, 4), read64(t, p), "a refused Step changed param")
	})
}

// Int32 has no update: Step refuses it as unsupported, naming the update,
// dtype and device.
func TestStepUnsupported(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		p := FromInt32(dev, []int32{1, 2})
		g := FromInt32(dev, []int32{1, 2})
		defer releaseAll(p, g)
		err := Catch(func() { Step(SGD, p, g, nil, nil, StepArgs{LR: 1}) })
		require.ErrorIs(t, err, hal.ErrUnsupported)
		for _, w := range []string{"Step(sgd)", "int32", dev.Name()} {
			assert.Contains(t, err.Error(), w)
		}
		assert.False(t, Supports(dev, "Step(sgd)", Int32))
		assert.True(t, Supports(dev, "Step(adam)", Float32))
		assert.Equal(t, dev.Name() == "cpu", Supports(dev, "Step(adam)", Float64))
	})
}

// A failure carried by an input lands on param and state instead of
// running the kernel.
func TestStepPropagatesFailure(t *testing.T) {
	dev := openCPU(t)
	p, b := Zeros(dev, 3), Zeros(dev, 3)
	g := failedTensor(dev, Float32, []int{3}, errors.New("earlier failure"))
	defer releaseAll(p, b, g)
	Step(SGD, p, g, []*Tensor{b}, nil, StepArgs{LR: 1, Momentum: 0.5})
	for _, x := range []*Tensor{p, b} {
		_, err := x.Float64s()
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "earlier failure"), "%v", err)
	}
}

func init() {
	for _, o := range hal.Optimizers {
		opRunners[stepName(o)] = func(in *opInputs) *Tensor {
			a := StepArgs{LR: 0.1, Momentum: 0.9, Beta1: 0.9, Beta2: 0.999, BiasCorrection1: 0.1, BiasCorrection2: 0.001,
				Alpha: 0.99, Eps: 1e-8}
			up := func(lo, hi float64) *Tensor {
				return in.keep(upload(in.dev, in.dtype, randomValues(in.rng, in.dtype, 12, lo, hi), 3, 4))
			}
			param, grad := up(-2, 2), up(-1, 1)
			state := make([]*Tensor, o.States(a))
			for k := range state {
				state[k] = up(0, 1)
			}
			Step(o, param, grad, state, nil, a)
			return param.alias()
		}
	}
}
