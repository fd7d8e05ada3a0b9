package nn

// RMSNorm is not in PyTorch 1.13, so its reference is PyTorch 2.4's
// formula in float64 here, y = x / √(mean(x²) + eps) · w, with its
// gradients written out analytically: with s = (mean(x²) + eps)^(−1/2)
// over a row of k elements and upstream gradient r,
//
//	∂L/∂w_j = Σ_rows r_j·x_j·s
//	∂L/∂x_i = s·r_i·w_i − s³·x_i/k · Σ_j r_j·w_j·x_j

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// rmsNormRef returns y, ∂L/∂x and ∂L/∂w (nil w: no affine) of
// L = Σ y·r, for rows of length k.
func rmsNormRef(x, w, r []float64, k int, eps float64) (y, dx, dw []float64) {
	y, dx = make([]float64, len(x)), make([]float64, len(x))
	dw = make([]float64, k)
	weight := func(j int) float64 {
		if w == nil {
			return 1
		}
		return w[j]
	}
	for row := 0; row < len(x); row += k {
		ms := 0.0
		for _, a := range x[row : row+k] {
			ms += a * a
		}
		s := 1 / math.Sqrt(ms/float64(k)+eps)
		dot := 0.0
		for j := range k {
			y[row+j] = x[row+j] * s * weight(j)
			dw[j] += r[row+j] * x[row+j] * s
			dot += r[row+j] * weight(j) * x[row+j]
		}
		for j := range k {
			dx[row+j] = s*r[row+j]*weight(j) - s*s*s*x[row+j]/float64(k)*dot
		}
	}
	return y, dx, dw
}

func TestRMSNorm(t *testing.T) {
	// torch.finfo(dtype).eps, PyTorch's eps=None, computed independently
	// of the layer's table.
	machineEps := map[tensor.DType]float64{
		tensor.Float64: math.Nextafter(1, 2) - 1,
		tensor.Float32: float64(math.Nextafter32(1, 2) - 1),
	}
	cases := []struct {
		shape, norm []int
		eps         float64
		affine      bool
	}{
		{[]int{3, 4, 7}, []int{7}, 1e-5, true},
		{[]int{2, 3, 5}, []int{3, 5}, 0, true}, // eps=None
		{[]int{5, 9}, []int{9}, 1e-3, false},
		{[]int{6, 4}, []int{4}, 0, false}, // rows of tiny values, where eps=None matters
	}
	for ci, c := range cases {
		t.Run(fmt.Sprintf("%v_over_%v_eps%g_affine%v", c.shape, c.norm, c.eps, c.affine), func(t *testing.T) {
			forEachDevice(t, func(t *testing.T, e env) {
				n, k := 1, 1
				for _, d := range c.shape {
					n *= d
				}
				for _, d := range c.norm {
					k *= d
				}
				xData := randn(uint64(100+ci), n, 1)
				// Rows at scales from 1 down to 1e-4, so that eps is
				// visible: a row's mean square 1e-8 is below float32's
				// machine epsilon.
				for row := 0; row < n; row += k {
					scale := math.Pow(10, -float64((row/k)%5))
					for j := range k {
						xData[row+j] = float64(float32(xData[row+j] * scale))
					}
				}
				rData := randn(uint64(200+ci), n, 1)
				wData := randn(uint64(300+ci), k, 0.5)

				m := NewRMSNorm(e.dev, c.norm, c.eps, c.affine)
				defer Release(m)
				castLayer(e, m)
				require.Equal(t, c.affine, m.Weight != nil)
				var w []float64
				if c.affine {
					w = wData
					setParam(e, &m.Weight, w)
					require.Equal(t, []string{"weight"}, names(m.Parameters()))
				}
				eps := c.eps
				if eps == 0 {
					eps = machineEps[e.dt]
				}
				wantY, wantDx, wantDw := rmsNormRef(xData, w, rData, k, eps)

				x := e.param(xData, c.shape...)
				defer x.Release()
				y := m.Forward(x)
				defer y.Release()
				require.Equal(t, c.shape, y.Shape())
				near(t, wantY, read(t, y), e.tol, "output")
				loss := weightedSum(e, y, &goldenTensor{Shape: c.shape, Data: rData})
				defer loss.Release()
				require.NoError(t, graph.Backward(loss))
				near(t, wantDx, read(t, x.Grad()), e.tol, "gradient of x")
				if c.affine {
					near(t, wantDw, read(t, m.Weight.Grad()), e.tol, "gradient of weight")
				}
			})
		})
	}
}

func TestRMSNormMisuse(t *testing.T) {
	dev := cpuDevice(t)
	var terr *tensor.Error
	require.ErrorAs(t, tensor.Catch(func() { NewRMSNorm(dev, nil, 0, true) }), &terr)
	require.ErrorAs(t, tensor.Catch(func() { NewRMSNorm(dev, []int{3}, -1, true) }), &terr)
	m := NewRMSNorm(dev, []int{4}, 0, true)
	defer Release(m)
	x := graph.Constant(tensor.Zeros(dev, 2, 5))
	defer x.Release()
	err := tensor.Catch(func() { m.Forward(x).Release() })
	require.ErrorAs(t, err, &terr)
	require.Contains(t, err.Error(), "RMSNorm")
	require.Contains(t, err.Error(), "[2 5]")
}
