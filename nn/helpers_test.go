package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// The devices every test runs on (internal/testdevice).
var (
	ci            = testdevice.CI
	cpuDevice     = testdevice.CPU
	forEachWebGPU = testdevice.ForEachWebGPU
)

// env is one configuration a layer test runs in: a device, the dtype of
// its data and parameters, and the tolerance of a comparison with a
// float64 reference.
type env struct {
	dev *tensor.Device
	dt  tensor.DType
	tol float64
}

// forEachDevice runs f on the CPU in float64 and float32 and on each
// WebGPU adapter in float32.
func forEachDevice(t *testing.T, f func(t *testing.T, e env)) {
	t.Run("cpu-float64", func(t *testing.T) { f(t, env{cpuDevice(t), tensor.Float64, 1e-10}) })
	t.Run("cpu-float32", func(t *testing.T) { f(t, env{cpuDevice(t), tensor.Float32, 2e-5}) })
	forEachWebGPU(t, func(t *testing.T, dev *tensor.Device) { f(t, env{dev, tensor.Float32, 1e-4}) })
}

// tensorOf makes a tensor of e's dtype from float64 data.
func (e env) tensorOf(data []float64, shape ...int) *tensor.Tensor {
	if e.dt == tensor.Float64 {
		return tensor.FromFloat64(e.dev, data, shape...)
	}
	f := make([]float32, len(data))
	for i, v := range data {
		f[i] = float32(v)
	}
	return tensor.FromFloat32(e.dev, f, shape...)
}

func (e env) constant(data []float64, shape ...int) *graph.Value {
	return graph.Constant(e.tensorOf(data, shape...))
}

func (e env) param(data []float64, shape ...int) *graph.Value {
	return graph.Param(e.tensorOf(data, shape...))
}

func (e env) labels(data []int32, shape ...int) *graph.Value {
	return graph.Constant(tensor.FromInt32(e.dev, data, shape...))
}

// randn returns n values N(0, scale²) from a fixed-seed stream, rounded to
// float32 so that every dtype computes from the same inputs.
func randn(seed uint64, n int, scale float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(float32(r.NormFloat64() * scale))
	}
	return out
}

// read returns x's elements as float64.
func read(t testing.TB, x *graph.Value) []float64 { t.Helper(); return readTensor(t, x.Tensor()) }

var readTensor = testdevice.Float64s

// near requires got ≈ want elementwise within tol, absolute and relative.
func near(t testing.TB, want, got []float64, tol float64, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*(1+math.Abs(want[i]))) {
			require.Failf(t, "mismatch", "element %d: want %v, got %v (tol %g) %v", i, want[i], got[i], tol, msgAndArgs)
		}
	}
}

// setParam replaces *p by a parameter of e's dtype holding data.
func setParam(e env, p **graph.Value, data []float64) {
	shape := (*p).Shape()
	(*p).Release()
	*p = e.param(data, shape...)
}

// castModule makes every parameter and buffer of m e's dtype, keeping
// values (modules are built in Float32).
func castModule(e env, m Module) {
	cast := func(p **graph.Value, isParam bool) {
		if *p == nil {
			return
		}
		old := *p
		t := old.Tensor().Cast(e.dt)
		old.Release()
		if isParam {
			*p = graph.Param(t)
		} else {
			*p = graph.Constant(t)
		}
	}
	switch m := m.(type) {
	case *Linear:
		cast(&m.Weight, true)
		cast(&m.Bias, true)
	case *Conv2d:
		cast(&m.Weight, true)
		cast(&m.Bias, true)
	case *ConvTranspose2d:
		cast(&m.Weight, true)
		cast(&m.Bias, true)
	case *Embedding:
		cast(&m.Weight, true)
	case *LayerNorm:
		cast(&m.Weight, true)
		cast(&m.Bias, true)
	case *BatchNorm:
		cast(&m.Weight, true)
		cast(&m.Bias, true)
		cast(&m.RunningMean, false)
		cast(&m.RunningVar, false)
	case *MultiHeadAttention:
		// Its parameters are registered in Base: register the casts again.
		for _, p := range []struct {
			name string
			v    **graph.Value
		}{{"in_proj_weight", &m.InProjWeight}, {"q_proj_weight", &m.QProjWeight}, {"k_proj_weight", &m.KProjWeight},
			{"v_proj_weight", &m.VProjWeight}, {"in_proj_bias", &m.InProjBias}, {"bias_k", &m.BiasK}, {"bias_v", &m.BiasV}} {
			if *p.v != nil {
				cast(p.v, true)
				AddParam(m, p.name, *p.v)
			}
		}
		castModule(e, m.OutProj)
	case interface{ Children() []Child }:
		for _, c := range m.Children() {
			castModule(e, c.Module)
		}
	case *Sequential:
		for _, c := range m.Modules {
			castModule(e, c)
		}
	}
}

// randomize gives every parameter of m random values (so that biases and
// norm weights are not 0 and 1), in e's dtype.
func randomize(e env, m Module, seed uint64) {
	castModule(e, m)
	for i, p := range m.Parameters() {
		data := randn(seed+uint64(i), p.Value.Len(), 0.5)
		p.Value.SetTensor(e.tensorOf(data, p.Value.Shape()...))
	}
}

// names returns the names of ns.
func names(ns []Named) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

// backwardSum runs Backward on the sum of y and releases it.
func backwardSum(t testing.TB, y *graph.Value) {
	t.Helper()
	s := y.Sum(nil, false)
	defer s.Release()
	require.NoError(t, graph.Backward(s))
}

// requireGrads requires every parameter of m to have a gradient with a
// nonzero element.
func requireGrads(t testing.TB, m Module) {
	t.Helper()
	for _, p := range m.Parameters() {
		g := p.Value.Grad()
		require.NotNil(t, g, "no gradient for %s", p.Name)
		nonzero := false
		for _, v := range read(t, g) {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "gradient of %s is not finite", p.Name)
			nonzero = nonzero || v != 0
		}
		require.True(t, nonzero, "gradient of %s is zero", p.Name)
	}
}

var quietGC = testdevice.QuietGC

// ---- float64 references ----

// matmulT returns x [n, k] · wᵀ (w [m, k]) + b.
func matmulT(x []float64, n, k int, w []float64, m int, b []float64) []float64 {
	out := make([]float64, n*m)
	for i := range n {
		for j := range m {
			s := 0.0
			if b != nil {
				s = b[j]
			}
			for l := range k {
				s += x[i*k+l] * w[j*k+l]
			}
			out[i*m+j] = s
		}
	}
	return out
}

// layerNormRef normalizes each of the rows of x (length k).
func layerNormRef(x []float64, k int, w, b []float64, eps float64) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x); r += k {
		mean, v := 0.0, 0.0
		for _, a := range x[r : r+k] {
			mean += a
		}
		mean /= float64(k)
		for _, a := range x[r : r+k] {
			v += (a - mean) * (a - mean)
		}
		v /= float64(k)
		for j := range k {
			out[r+j] = (x[r+j]-mean)/math.Sqrt(v+eps)*w[j] + b[j]
		}
	}
	return out
}

// softmaxRows applies softmax to each row (length k) of x in place.
func softmaxRows(x []float64, k int) {
	for r := 0; r < len(x); r += k {
		m := math.Inf(-1)
		for _, a := range x[r : r+k] {
			m = math.Max(m, a)
		}
		s := 0.0
		for j := range k {
			x[r+j] = math.Exp(x[r+j] - m)
			s += x[r+j]
		}
		for j := range k {
			x[r+j] /= s
		}
	}
}
