package nn_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// A nil Momentum is PyTorch's momentum=None: the running mean is the plain
// average of the batch means, counted by num_batches_tracked.
func ExampleBatchNorm_cumulativeAverage() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	bn := nn.NewBatchNorm1d(dev, 1)
	defer nn.Release(bn)
	bn.Momentum = nil
	for _, batch := range [][]float32{{1, 3}, {5, 7}, {0, 2}} { // means 2, 6, 1
		x := graph.Constant(tensor.FromFloat32(dev, batch, 2, 1))
		bn.Forward(x).Release()
		x.Release()
	}
	mean, _ := bn.RunningMean.Float32s()
	count, _ := bn.NumBatchesTracked.Int64s()
	fmt.Println(mean, count, bn.NumBatchesTracked.DType())
	// Output: [3] [3] int64
}
