package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The whole-tensor reductions against float64 sums of the same random,
// odd-sized data, on every device.
func TestReduceAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	data := randomFloat32s(rng, 7*13)
	var sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range data {
		sum += float64(v)
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	forEachDevice(t, func(t *testing.T, dev *Device) {
		x := FromFloat32(dev, data, 7, 13)
		defer x.Release()
		for _, c := range []struct {
			name string
			f    func() *Tensor
			want float64
		}{
			{"SumAll", x.SumAll, sum},
			{"MeanAll", x.MeanAll, sum / float64(len(data))},
			{"MaxAll", x.MaxAll, hi},
			{"MinAll", x.MinAll, lo},
		} {
			y := c.f()
			assert.Empty(t, y.Shape(), c.name)
			got, err := y.Item()
			require.NoError(t, err)
			assert.InDelta(t, c.want, got, 1e-5*(1+math.Abs(c.want)), c.name)
			y.Release()
		}
	})
}
