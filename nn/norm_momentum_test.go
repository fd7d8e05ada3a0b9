package nn

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// counter reads a BatchNorm's num_batches_tracked.
func counter(t *testing.T, b *BatchNorm) []int64 {
	t.Helper()
	v, err := b.NumBatchesTracked.Int64s()
	require.NoError(t, err)
	return v
}

// TestBatchNormCumulativeAverage: with Momentum nil (PyTorch's
// momentum=None) the running statistics are the plain averages of the
// batches' mean and unbiased variance, computed here in float64 from the
// batches themselves; the counter is Int64 on the CPU and Int32 where the
// device holds Int64 as Int32.
func TestBatchNormCumulativeAverage(t *testing.T) {
	forEachDevice(t, func(t *testing.T, e env) {
		const n, c, batches = 5, 3, 3
		bn := NewBatchNorm1d(e.dev, c)
		defer Release(bn)
		castModule(e, bn)
		bn.Momentum = nil
		wantType := tensor.Int64
		if !tensor.HoldsInt64(e.dev) {
			wantType = tensor.Int32
		}
		require.Equal(t, wantType, bn.NumBatchesTracked.DType())

		avgMean, avgVar := make([]float64, c), make([]float64, c)
		for k := range batches {
			xd := randn(uint64(200+k), n*c, float64(k+1))
			for i := range xd {
				xd[i] += float64(k * (i % c)) // a different mean per batch
			}
			for ch := range c {
				var mean, ss float64
				for i := range n {
					mean += xd[i*c+ch]
				}
				mean /= n
				for i := range n {
					d := xd[i*c+ch] - mean
					ss += d * d
				}
				avgMean[ch] += mean / batches
				avgVar[ch] += ss / (n - 1) / batches
			}
			x := e.constant(xd, n, c)
			bn.Forward(x).Release()
			x.Release()
		}
		require.Equal(t, []int64{batches}, counter(t, bn))
		near(t, avgMean, read(t, bn.RunningMean), e.tol*10)
		near(t, avgVar, read(t, bn.RunningVar), e.tol*10)
	})
}

// TestBatchNormCounterMoves: To carries num_batches_tracked to a WebGPU
// device, where it is Int32, and back, keeping its count; training there
// counts as on the CPU.
func TestBatchNormCounterMoves(t *testing.T) {
	forEachWebGPU(t, func(t *testing.T, dev *tensor.Device) {
		cpu := cpuDevice(t)
		bn := NewBatchNorm1d(cpu, 2)
		defer Release(bn)
		bn.NumBatchesTracked.SetTensor(tensor.FromInt64(cpu, []int64{41}, []int{}...))
		require.NoError(t, To(bn, dev))
		require.Equal(t, tensor.Int32, bn.NumBatchesTracked.DType())
		x := graph.Constant(tensor.FromFloat32(dev, []float32{1, 2, 3, 5, 8, 13}, 3, 2))
		defer x.Release()
		bn.Forward(x).Release()
		require.Equal(t, []int64{42}, counter(t, bn))
		require.NoError(t, To(bn, cpu))
		require.Equal(t, []int64{42}, counter(t, bn))
	})
}
