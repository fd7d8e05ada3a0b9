//go:build cgo

package wgpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// TestFusionLinearReLU checks the acceptance case of fusion: relu(x·W + b)
// written with tensor ops (MatMul, a broadcast Add, ReLU) is one dispatch
// on the WebGPU device, and its values match a float64 reference.
func TestFusionLinearReLU(t *testing.T) { forEachFusionDevice(t, testFusionLinearReLU) }

func testFusionLinearReLU(t *testing.T, dev *tensor.Device) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{2, 7, 5}, {7, 33, 1025}, {65, 100, 70}} {
		m, k, n := sz[0], sz[1], sz[2]
		random := func(count int) []float32 {
			v := make([]float32, count)
			for i := range v {
				v[i] = float32(rng.Float64()*2 - 1)
			}
			return v
		}
		xs, ws, bs := random(m*k), random(k*n), random(n)
		x := tensor.FromFloat32(dev, xs, m, k)
		w := tensor.FromFloat32(dev, ws, k, n)
		b := tensor.FromFloat32(dev, bs, n)
		require.NoError(t, dev.Sync())

		before := dev.Stats().Dispatches
		xw := tensor.MatMul(x, w)
		pre := tensor.Add(xw, b)
		y := tensor.ReLU(pre)
		xw.Release()
		pre.Release()
		got, err := y.Float64s()
		require.NoError(t, err)
		require.Equal(t, int64(1), dev.Stats().Dispatches-before, "relu(x·W + b) of %dx%d·%dx%d is one dispatch", m, k, k, n)

		for i := range m {
			for j := range n {
				s := float64(bs[j])
				for l := range k {
					s += float64(xs[i*k+l]) * float64(ws[l*n+j])
				}
				want := math.Max(s, 0)
				require.InDelta(t, want, got[i*n+j], 1e-5*(1+math.Abs(want)*float64(k)), "element (%d, %d) of %dx%d·%dx%d", i, j, m, k, k, n)
			}
		}
		for _, v := range []*tensor.Tensor{x, w, b, y} {
			v.Release()
		}
	}
}
