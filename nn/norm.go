package nn

import (
	"slices"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// BatchNorm normalizes each channel (axis 1) of its input, as
// torch.nn.BatchNorm1d and BatchNorm2d. In training it uses the batch's
// statistics and updates the running ones in place:
// running = (1 − Momentum)·running + Momentum·batch, the variance with
// Bessel's correction. In evaluation it uses the running statistics.
//
// Its state names are PyTorch's "weight", "bias", "running_mean" and
// "running_var"; PyTorch's "num_batches_tracked" counter is not kept (it
// matters only with momentum=None, the cumulative average, which this
// layer does not offer), so a PyTorch checkpoint's counter must be dropped
// before LoadStateDict.
type BatchNorm struct {
	Weight, Bias *graph.Value // [C] affine parameters; nil for affine=False
	// RunningMean and RunningVar are [C] buffers (graph.Constant); nil for
	// track_running_stats=False, which normalizes with batch statistics
	// in evaluation too.
	RunningMean, RunningVar *graph.Value
	Momentum, Eps           float64
	op                      string
	ranks                   []int // the input ranks accepted
	mode
}

// NewBatchNorm1d returns a BatchNorm over [N, C] or [N, C, L] inputs,
// with PyTorch's defaults: weight 1, bias 0, running mean 0 and variance
// 1, momentum 0.1, eps 1e-5.
func NewBatchNorm1d(dev *tensor.Device, c int) *BatchNorm {
	return newBatchNorm("BatchNorm1d", dev, c, 2, 3)
}

// NewBatchNorm2d returns a BatchNorm over [N, C, H, W] inputs, with the
// defaults of NewBatchNorm1d.
func NewBatchNorm2d(dev *tensor.Device, c int) *BatchNorm {
	return newBatchNorm("BatchNorm2d", dev, c, 4)
}

func newBatchNorm(op string, dev *tensor.Device, c int, ranks ...int) *BatchNorm {
	if c <= 0 {
		misuse("New"+op, "channel count %d must be positive", c)
	}
	return &BatchNorm{
		Weight:      fullParam(dev, 1, c),
		Bias:        fullParam(dev, 0, c),
		RunningMean: graph.Constant(tensor.Zeros(dev, c)),
		RunningVar:  graph.Constant(tensor.Ones(dev, c)),
		Momentum:    0.1,
		Eps:         1e-5,
		op:          op,
		ranks:       ranks,
		mode:        mode{true},
	}
}

// Forward normalizes x.
func (b *BatchNorm) Forward(x *graph.Value) *graph.Value {
	if len(b.ranks) > 0 && !slices.Contains(b.ranks, x.Rank()) {
		misuse(b.op, "input %v has rank %d, want one of %v", x.Shape(), x.Rank(), b.ranks)
	}
	var rm, rv *tensor.Tensor
	if b.RunningMean != nil && b.RunningVar != nil {
		rm, rv = b.RunningMean.Tensor(), b.RunningVar.Tensor()
	}
	return graph.BatchNorm(x, rm, rv, b.Weight, b.Bias, b.training || rm == nil, b.Momentum, b.Eps)
}

// Parameters returns "weight" and "bias".
func (b *BatchNorm) Parameters() []Named { return named("weight", b.Weight, "bias", b.Bias) }

// Buffers returns "running_mean" and "running_var".
func (b *BatchNorm) Buffers() []Named {
	return named("running_mean", b.RunningMean, "running_var", b.RunningVar)
}

// LayerNorm normalizes over the trailing Shape axes of its input, as
// torch.nn.LayerNorm, with an elementwise affine transform.
type LayerNorm struct {
	Weight, Bias *graph.Value // of Shape; nil for elementwise_affine=False
	Shape        []int
	Eps          float64
	mode
}

// NewLayerNorm returns a LayerNorm over the trailing axes shape, with
// PyTorch's defaults: weight 1, bias 0, eps 1e-5.
func NewLayerNorm(dev *tensor.Device, shape []int) *LayerNorm {
	if len(shape) == 0 {
		misuse("NewLayerNorm", "empty normalized shape")
	}
	return &LayerNorm{
		Weight: fullParam(dev, 1, shape...),
		Bias:   fullParam(dev, 0, shape...),
		Shape:  slices.Clone(shape),
		Eps:    1e-5,
		mode:   mode{true},
	}
}

// Forward normalizes x.
func (l *LayerNorm) Forward(x *graph.Value) *graph.Value {
	return graph.LayerNorm(x, l.Shape, l.Weight, l.Bias, l.Eps)
}

// Parameters returns "weight" and "bias".
func (l *LayerNorm) Parameters() []Named { return named("weight", l.Weight, "bias", l.Bias) }

// Buffers returns nothing.
func (l *LayerNorm) Buffers() []Named { return nil }
