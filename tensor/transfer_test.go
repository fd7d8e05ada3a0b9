package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadBack checks the read paths: a dtype read as itself goes straight
// into the result (the large size takes the WebGPU device's uncached
// staging buffer, twice, then a small read takes a cached one), another
// dtype is converted.
func TestReadBack(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		rng := newRand(t)
		for _, n := range []int{1, 7, 1025, 5<<20 + 3, 1025} {
			host := randomFloat32s(rng, n)
			x := FromFloat32(dev, host, n)
			got, err := x.Float32s()
			require.NoError(t, err)
			require.Equal(t, host, got, "n=%d", n)
			if n < 1<<20 {
				wide, err := x.Float64s()
				require.NoError(t, err)
				for i, v := range host {
					require.Equal(t, float64(v), wide[i])
				}
				ints, err := x.Int32s()
				require.NoError(t, err)
				for i, v := range host {
					require.Equal(t, toInt32(float64(v)), ints[i])
				}
			}
			x.Release()
		}
		labels := []int32{3, -1, 1 << 30, 0, 7}
		y := FromInt32(dev, labels)
		defer y.Release()
		got, err := y.Int32s()
		require.NoError(t, err)
		require.Equal(t, labels, got)
		// A view with an offset is packed on the device before the read.
		tail := y.Slice(0, 2, 5, 1)
		defer tail.Release()
		got, err = tail.Int32s()
		require.NoError(t, err)
		require.Equal(t, labels[2:], got)
	})
}
