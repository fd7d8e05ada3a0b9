package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// lossCheck runs loss, compares its value and the gradient reaching x with
// float64 references, and requires both to be finite.
func lossCheck(t *testing.T, e env, x *graph.Value, loss *graph.Value, want float64, wantGrad []float64) {
	t.Helper()
	defer loss.Release()
	require.Empty(t, loss.Shape())
	got := read(t, loss)[0]
	require.False(t, math.IsNaN(got) || math.IsInf(got, 0), "loss %v", got)
	near(t, []float64{want}, []float64{got}, e.tol*5)
	require.NoError(t, graph.Backward(loss))
	g := read(t, x.Grad())
	for _, v := range g {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "gradient %v", g)
	}
	near(t, wantGrad, g, e.tol*5)
	x.ZeroGrad()
}

func TestRegressionLosses(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		pd, td := randn(200, 12, 1), randn(201, 12, 1)
		td[3] = pd[3] // a zero difference: L1's gradient is 0 there
		p := e.param(pd, 3, 4)
		defer p.Release()
		y := e.constant(td, 3, 4)
		defer y.Release()
		mse, l1 := 0.0, 0.0
		gm, gl := make([]float64, 12), make([]float64, 12)
		for i := range pd {
			d := pd[i] - td[i]
			mse += d * d / 12
			l1 += math.Abs(d) / 12
			gm[i] = 2 * d / 12
			if d > 0 {
				gl[i] = 1.0 / 12
			} else if d < 0 {
				gl[i] = -1.0 / 12
			}
		}
		lossCheck(t, e, p, MSELoss(p, y), mse, gm)
		lossCheck(t, e, p, L1Loss(p, y), l1, gl)

		bad := e.constant(make([]float64, 4), 4)
		defer bad.Release()
		require.ErrorContains(t, tensor.Catch(func() { MSELoss(p, bad) }),
			"nn.MSELoss: input [3 4] and target [4] differ in shape")
	})
}

// logSoftmaxRef returns log-softmax over axis 1 of x [n, c, inner].
func logSoftmaxRef(x []float64, n, c, inner int) []float64 {
	out := make([]float64, len(x))
	for i := range n {
		for k := range inner {
			m := math.Inf(-1)
			for j := range c {
				m = math.Max(m, x[(i*c+j)*inner+k])
			}
			s := 0.0
			for j := range c {
				s += math.Exp(x[(i*c+j)*inner+k] - m)
			}
			for j := range c {
				out[(i*c+j)*inner+k] = x[(i*c+j)*inner+k] - m - math.Log(s)
			}
		}
	}
	return out
}

func TestCrossEntropy(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, c = 4, 5
		xd := randn(210, n*c, 3)
		copy(xd[c:2*c], []float64{100, -100, 0, 50, -50}) // extreme logits
		copy(xd[2*c:3*c], []float64{-100, -100, -100, -100, 100})
		labels := []int32{2, 1, 0, 4}
		x := e.param(xd, n, c)
		defer x.Release()
		lab := e.labels(labels, n)
		defer lab.Release()
		logp := logSoftmaxRef(xd, n, c, 1)
		for _, eps := range []float64{0, 0.1} {
			want := 0.0
			grad := make([]float64, n*c)
			for i, l := range labels {
				mean := 0.0
				for j := range c {
					mean -= logp[i*c+j] / c
					target := eps / c
					if j == int(l) {
						target += 1 - eps
					}
					grad[i*c+j] = (math.Exp(logp[i*c+j]) - target) / n
				}
				want += ((1-eps)*-logp[i*c+int(l)] + eps*mean) / n
			}
			lossCheck(t, e, x, CrossEntropy(x, lab, eps), want, grad)

			// Int64 labels, PyTorch's type, give the same loss (on WebGPU
			// they are held as Int32).
			lab64 := graph.Constant(tensor.FromInt64(e.dev, []int64{2, 1, 0, 4}, n))
			lossCheck(t, e, x, CrossEntropy(x, lab64, eps), want, grad)
			lab64.Release()
		}

		// NLLLoss of the log-probabilities is CrossEntropy without smoothing.
		lp := e.param(logp, n, c)
		defer lp.Release()
		want, grad := 0.0, make([]float64, n*c)
		for i, l := range labels {
			want -= logp[i*c+int(l)] / n
			grad[i*c+int(l)] = -1.0 / n
		}
		lossCheck(t, e, lp, NLLLoss(lp, lab), want, grad)

		// [N, C, d] logits against [N, d] labels.
		x3d := randn(211, 2*3*2, 2)
		x3 := e.param(x3d, 2, 3, 2)
		defer x3.Release()
		l3 := []int32{0, 2, 1, 1}
		lab3 := e.labels(l3, 2, 2)
		defer lab3.Release()
		logp3 := logSoftmaxRef(x3d, 2, 3, 2)
		want, grad = 0.0, make([]float64, 12)
		for i := range 2 {
			for k := range 2 {
				l := int(l3[i*2+k])
				want -= logp3[(i*3+l)*2+k] / 4
				for j := range 3 {
					grad[(i*3+j)*2+k] = math.Exp(logp3[(i*3+j)*2+k]) / 4
				}
				grad[(i*3+l)*2+k] -= 1.0 / 4
			}
		}
		lossCheck(t, e, x3, CrossEntropy(x3, lab3, 0), want, grad)

		require.ErrorContains(t, tensor.Catch(func() { CrossEntropy(x, x, 0) }),
			"nn.CrossEntropy: labels must be int32 or int64 class indices")
		require.ErrorContains(t, tensor.Catch(func() { CrossEntropy(x, lab3, 0) }),
			"nn.CrossEntropy: input [4 5] and labels [2 2] are not [N, C, d…] and [N, d…]")
		require.ErrorContains(t, tensor.Catch(func() { CrossEntropy(x, lab, 1.5) }), "label smoothing 1.5")
	})
}

func TestBCEWithLogits(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		xd := randn(220, 10, 2)
		copy(xd, []float64{100, -100, 0, 100, -100, 30})
		yd := []float64{1, 0, 0.5, 0, 1, 0.25, 0.3, 0.9, 0, 1}
		x := e.param(xd, 2, 5)
		defer x.Release()
		y := e.constant(yd, 2, 5)
		defer y.Release()
		want, grad := 0.0, make([]float64, 10)
		for i, v := range xd {
			want += (math.Max(v, 0) - v*yd[i] + math.Log1p(math.Exp(-math.Abs(v)))) / 10
			grad[i] = (1/(1+math.Exp(-v)) - yd[i]) / 10
		}
		lossCheck(t, e, x, BCEWithLogits(x, y), want, grad)
	})
}
