package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// Higher-order gradients through CreateGraph, against references written
// out here in float64: derivatives of tanh in closed form, and the
// Hessian-vector product of a small network by central differences of its
// hand-written float64 gradient.

// hoTol is the tolerance for float32 results, |Δ| ≤ hoTol·(1 + |want|):
// float32 rounding (6e-8) through the few dozen kernels a third
// derivative goes through, with llvmpipe's transcendentals (a few ulp),
// stays near 1e-7 (the measured worst is 9e-8, on H·v); 1e-5 leaves a
// wide margin while still failing any wrong term of a rule.
const hoTol = 1e-5

func TestHigherOrderTanh(t *testing.T) {
	xs := []float64{-2, -1.3, -0.6, -0.05, 0.4, 1.1, 1.9}
	d1 := make([]float64, len(xs))
	d2 := make([]float64, len(xs))
	d3 := make([]float64, len(xs))
	for i, x := range xs {
		th := math.Tanh(x)
		s := 1 - th*th
		d1[i] = s
		d2[i] = -2 * th * s
		d3[i] = s * (6*th*th - 2)
	}
	check := func(t *testing.T, dev *tensor.Device, dtype tensor.DType, tol float64) {
		x := Param(fromFloat64s(dev, dtype, xs, len(xs)))
		defer x.Release()
		y := Tanh(x)
		defer y.Release()
		sum := y.Sum(nil, false)
		defer sum.Release()

		g1, err := Grad([]*Value{sum}, []*Value{x}, nil, CreateGraph)
		require.NoError(t, err)
		defer releaseValues(g1)
		require.True(t, g1[0].RequiresGrad(), "a gradient taken with CreateGraph is recorded")
		requireNear(t, "tanh'", d1, read(t, g1[0]), tol)

		s1 := g1[0].Sum(nil, false)
		defer s1.Release()
		g2, err := Grad([]*Value{s1}, []*Value{x}, nil, CreateGraph)
		require.NoError(t, err)
		defer releaseValues(g2)
		requireNear(t, "tanh''", d2, read(t, g2[0]), tol)
		require.Nil(t, x.Grad(), "Grad leaves Grad alone")

		// The third derivative through Backward, into Grad. Without
		// RetainGraph it frees everything it went through, the forward
		// Tanh included.
		s2 := g2[0].Sum(nil, false)
		defer s2.Release()
		require.NoError(t, Backward(s2))
		requireNear(t, "tanh'''", d3, read(t, x.Grad()), tol)
		require.ErrorIs(t, Backward(sum), ErrGraphFreed)
		x.ZeroGrad()

		// Backward with CreateGraph leaves a differentiable Grad: the
		// second derivative again, through the first one's Grad.
		y2 := Tanh(x)
		defer y2.Release()
		sum2 := y2.Sum(nil, false)
		defer sum2.Release()
		require.NoError(t, Backward(sum2, CreateGraph))
		gx := x.Grad()
		require.True(t, gx.RequiresGrad())
		requireNear(t, "tanh' by Backward", d1, read(t, gx), tol)
		sg := gx.Sum(nil, false)
		defer sg.Release()
		g2b, err := Grad([]*Value{sg}, []*Value{x}, nil)
		require.NoError(t, err)
		defer releaseValues(g2b)
		requireNear(t, "tanh'' by Backward, then Grad", d2, read(t, g2b[0]), tol)
	}
	t.Run("cpu float64", func(t *testing.T) { check(t, cpuDevice(t), tensor.Float64, 1e-12) })
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) { check(t, dev, tensor.Float32, hoTol) })
}

// mlp64 is a 4-5-3 tanh network with a mean-squared-error loss, its
// parameters flattened in the order w1 [4, 5], b1 [5], w2 [5, 3], b2 [3],
// written out in float64 with its gradient by hand.
type mlp64 struct {
	n    int       // batch size
	x, y []float64 // [n, 4] inputs, [n, 3] targets
}

const (
	mlpIn, mlpHidden, mlpOut = 4, 5, 3
	mlpW1                    = 0
	mlpB1                    = mlpW1 + mlpIn*mlpHidden
	mlpW2                    = mlpB1 + mlpHidden
	mlpB2                    = mlpW2 + mlpHidden*mlpOut
	mlpParams                = mlpB2 + mlpOut
)

var mlpShapes = [][]int{{mlpIn, mlpHidden}, {mlpHidden}, {mlpHidden, mlpOut}, {mlpOut}}
var mlpOffsets = []int{mlpW1, mlpB1, mlpW2, mlpB2, mlpParams}

// grad returns the loss at θ and its gradient.
func (m mlp64) grad(theta []float64) (float64, []float64) {
	w1, b1, w2, b2 := theta[mlpW1:mlpB1], theta[mlpB1:mlpW2], theta[mlpW2:mlpB2], theta[mlpB2:]
	g := make([]float64, mlpParams)
	gw1, gb1, gw2, gb2 := g[mlpW1:mlpB1], g[mlpB1:mlpW2], g[mlpW2:mlpB2], g[mlpB2:]
	scale := 1 / float64(m.n*mlpOut)
	loss := 0.0
	for r := range m.n {
		x := m.x[r*mlpIn : (r+1)*mlpIn]
		h := make([]float64, mlpHidden)
		for j := range mlpHidden {
			z := b1[j]
			for i := range mlpIn {
				z += x[i] * w1[i*mlpHidden+j]
			}
			h[j] = math.Tanh(z)
		}
		dh := make([]float64, mlpHidden)
		for k := range mlpOut {
			o := b2[k]
			for j := range mlpHidden {
				o += h[j] * w2[j*mlpOut+k]
			}
			d := o - m.y[r*mlpOut+k]
			loss += d * d * scale
			do := 2 * d * scale
			gb2[k] += do
			for j := range mlpHidden {
				gw2[j*mlpOut+k] += h[j] * do
				dh[j] += w2[j*mlpOut+k] * do
			}
		}
		for j := range mlpHidden {
			dz := dh[j] * (1 - h[j]*h[j])
			gb1[j] += dz
			for i := range mlpIn {
				gw1[i*mlpHidden+j] += x[i] * dz
			}
		}
	}
	return loss, g
}

// hvp is H(θ)·v by central differences of the gradient: the truncation
// error is O(ε²) ≈ 1e-10 and the rounding error about 1e-16/ε ≈ 1e-11.
func (m mlp64) hvp(theta, v []float64) []float64 {
	const eps = 1e-5
	up, down := make([]float64, mlpParams), make([]float64, mlpParams)
	for i := range theta {
		up[i] = theta[i] + eps*v[i]
		down[i] = theta[i] - eps*v[i]
	}
	_, gu := m.grad(up)
	_, gd := m.grad(down)
	out := make([]float64, mlpParams)
	for i := range out {
		out[i] = (gu[i] - gd[i]) / (2 * eps)
	}
	return out
}

// mlpHVP computes the loss, its gradient and H·v with this package on dev,
// in dtype, returned flattened as float64.
func mlpHVP(t *testing.T, dev *tensor.Device, dtype tensor.DType, m mlp64, theta, v []float64) (float64, []float64, []float64) {
	t.Helper()
	ps := make([]*Value, 4)
	vs := make([]*Value, 4)
	for k := range ps {
		lo, hi := mlpOffsets[k], mlpOffsets[k+1]
		ps[k] = Param(fromFloat64s(dev, dtype, theta[lo:hi], mlpShapes[k]...))
		vs[k] = Constant(fromFloat64s(dev, dtype, v[lo:hi], mlpShapes[k]...))
	}
	defer releaseValues(ps)
	defer releaseValues(vs)
	x := Constant(fromFloat64s(dev, dtype, m.x, m.n, mlpIn))
	y := Constant(fromFloat64s(dev, dtype, m.y, m.n, mlpOut))
	defer x.Release()
	defer y.Release()

	var tmp []*Value
	keep := func(v *Value) *Value { tmp = append(tmp, v); return v }
	defer func() { releaseValues(tmp) }()
	h := keep(Tanh(keep(Add(keep(MatMul(x, ps[0])), ps[1]))))
	o := keep(Add(keep(MatMul(h, ps[2])), ps[3]))
	loss := keep(keep(Square(keep(Sub(o, y)))).Mean(nil, false))

	gs, err := Grad([]*Value{loss}, ps, nil, CreateGraph)
	require.NoError(t, err)
	defer releaseValues(gs)
	var dot *Value
	for k, g := range gs {
		term := keep(keep(Mul(g, vs[k])).Sum(nil, false))
		if dot == nil {
			dot = term
		} else {
			dot = keep(Add(dot, term))
		}
	}
	hv, err := Grad([]*Value{dot}, ps, nil)
	require.NoError(t, err)
	defer releaseValues(hv)

	l := read(t, loss)[0]
	var grad, hvp []float64
	for k := range ps {
		grad = append(grad, read(t, gs[k])...)
		hvp = append(hvp, read(t, hv[k])...)
	}
	return l, grad, hvp
}

func TestHigherOrderHessianVectorProduct(t *testing.T) {
	const n = 3
	m := mlp64{n: n, x: make([]float64, n*mlpIn), y: make([]float64, n*mlpOut)}
	for i := range m.x {
		m.x[i] = math.Sin(float64(3*i+1)) * 1.5
	}
	for i := range m.y {
		m.y[i] = math.Cos(float64(5*i + 2))
	}
	theta := make([]float64, mlpParams)
	v := make([]float64, mlpParams)
	for i := range theta {
		theta[i] = 0.8 * math.Sin(float64(7*i+3))
		v[i] = math.Cos(float64(11*i + 1))
	}
	wantLoss, wantGrad := m.grad(theta)
	wantHVP := m.hvp(theta, v)

	// Float64 on the CPU: the product matches the reference to its
	// accuracy (≈ 1e-10).
	cpu := cpuDevice(t)
	t.Run("cpu float64", func(t *testing.T) {
		l, g, hv := mlpHVP(t, cpu, tensor.Float64, m, theta, v)
		requireNear(t, "loss", []float64{wantLoss}, []float64{l}, 1e-12)
		requireNear(t, "gradient", wantGrad, g, 1e-12)
		requireNear(t, "H·v", wantHVP, hv, 1e-8)
	})

	// Float32: against the reference within hoTol, and WebGPU against
	// the CPU within hoTol relative to the largest element (tighter than
	// the gradient checks' 2e-4: this graph has no reduction long enough
	// for the devices' summation orders to drift apart).
	var cpu32 []float64
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		l, g, hv := mlpHVP(t, dev, tensor.Float32, m, theta, v)
		requireNear(t, "loss", []float64{wantLoss}, []float64{l}, hoTol)
		requireNear(t, "gradient", wantGrad, g, hoTol)
		requireNear(t, "H·v", wantHVP, hv, hoTol)
		if dev.Name() == "cpu" {
			cpu32 = hv
			return
		}
		require.NotNil(t, cpu32, "the cpu subtest runs first")
		scale := 1.0
		for _, x := range cpu32 {
			scale = math.Max(scale, math.Abs(x))
		}
		for i := range cpu32 {
			require.InDelta(t, cpu32[i], hv[i], hoTol*scale, "H·v[%d]: webgpu vs cpu float32", i)
		}
	})
}
