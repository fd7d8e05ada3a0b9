package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDropout(t *testing.T) {
	const p = 0.3
	forEachDevice(t, func(t *testing.T, dev *Device) {
		const n = 4000
		data := nnUniform(nnRand(t), n, 1, 2) // never 0, so a 0 is a drop
		x := FromFloat32(dev, data, 40, 100)
		defer x.Release()
		g := NewGenerator(7)
		y := Dropout(x, p, true, g)
		require.Equal(t, []int{40, 100}, y.Shape())
		require.Equal(t, uint64(n), g.Offset(), "the generator advances by one draw per element")
		got := nnRead(t, y)
		dropped := 0
		for i, v := range got {
			if v == 0 {
				dropped++
				continue
			}
			want := float64(data[i]) / (1 - p)
			require.InDelta(t, want, float64(v), nnTolerance.scale*want, "element %d is kept and scaled by 1/(1−p)", i)
		}
		// The number dropped is Binomial(n, p): within 5 standard deviations.
		sd := math.Sqrt(n * p * (1 - p))
		require.InDelta(t, n*p, float64(dropped), 5*sd, "dropped %d of %d", dropped, n)

		// The same generator state gives the same mask; the next call a new one.
		g.SetOffset(0)
		again := nnRead(t, Dropout(x, p, true, g))
		require.Equal(t, got, again)
		next := nnRead(t, Dropout(x, p, true, g))
		require.NotEqual(t, got, next)
	})
}

func TestDropoutIdentityAndZeros(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		data := []float32{1, -2, 3, -4, 5, 6}
		x := FromFloat32(dev, data, 2, 3)
		defer x.Release()
		g := NewGenerator(1)
		for _, tc := range []struct {
			name     string
			p        float64
			training bool
		}{{"eval", 0.5, false}, {"p=0", 0, true}} {
			y := Dropout(x, tc.p, tc.training, g)
			require.Equal(t, data, nnRead(t, y), tc.name)
		}
		require.Equal(t, uint64(0), g.Offset(), "no mask was drawn")
		zeros := nnRead(t, Dropout(x, 1, true, g))
		require.Equal(t, make([]float32, 6), zeros)
	})
}

// TestDropoutSameMaskOnEveryDevice draws masks from the same seed on the
// CPU and on WebGPU: the Bernoulli stream is Philox on the device, so the
// masks must be identical bit for bit.
func TestDropoutSameMaskOnEveryDevice(t *testing.T) {
	forEachWebGPU(t, testDropoutSameMaskOnEveryDevice)
}

func testDropoutSameMaskOnEveryDevice(t *testing.T, gpu *Device) {
	cpu := openCPU(t)
	data := nnUniform(nnRand(t), 3000, -1, 1)
	var masks [2][]float32
	for i, dev := range []*Device{cpu, gpu} {
		x := FromFloat32(dev, data, 3, 1000)
		g := NewGenerator(0x5eed)
		g.SetOffset(12345)
		masks[i] = nnRead(t, Dropout(x, 0.25, true, g))
		x.Release()
	}
	for i := range data {
		require.Equal(t, masks[0][i] == 0, masks[1][i] == 0, "element %d: cpu %v, webgpu %v", i, masks[0][i], masks[1][i])
	}
	for i := range masks[0] {
		require.InDelta(t, masks[0][i], masks[1][i], nnTolerance.scale*3, "element %d", i)
	}
}
