package nn

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// BatchNorm normalizes each channel (axis 1) of its input, as
// torch.nn.BatchNorm1d and BatchNorm2d. In training it uses the batch's
// statistics, counts the batch in NumBatchesTracked and updates the
// running statistics in place: running = (1 − m)·running + m·batch, the
// variance with Bessel's correction, where m is *Momentum, or with a nil
// Momentum (PyTorch's momentum=None) 1/NumBatchesTracked, the cumulative
// moving average. In evaluation it uses the running statistics.
//
// Its state names are PyTorch's "weight", "bias", "running_mean",
// "running_var" and "num_batches_tracked", so a PyTorch state_dict loads
// strictly. The counter is an Int64 scalar, as PyTorch's; on a WebGPU
// device, which holds Int64 as Int32 (see package tensor), it is Int32
// there and is still saved and loaded under its name.
type BatchNorm struct {
	Weight, Bias *graph.Value // [C] affine parameters; nil for affine=False
	// RunningMean and RunningVar are [C] buffers (graph.Constant); nil for
	// track_running_stats=False, which normalizes with batch statistics
	// in evaluation too.
	RunningMean, RunningVar *graph.Value
	// NumBatchesTracked counts the training batches (a scalar buffer);
	// nil for track_running_stats=False, which sets all three buffers to
	// nil (releasing them first), as PyTorch registers none of them then.
	NumBatchesTracked *graph.Value
	// Momentum is the running statistics' update factor (default 0.1);
	// nil is PyTorch's momentum=None, the cumulative moving average.
	Momentum *float64
	Eps      float64
	op       string
	ranks    []int // the input ranks accepted
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
	momentum := 0.1
	return &BatchNorm{
		Weight:            fullParam(dev, 1, c),
		Bias:              fullParam(dev, 0, c),
		RunningMean:       graph.Constant(tensor.Zeros(dev, c)),
		RunningVar:        graph.Constant(tensor.Ones(dev, c)),
		NumBatchesTracked: graph.Constant(tensor.FromInt64(dev, []int64{0}, []int{}...)),
		Momentum:          &momentum,
		Eps:               1e-5,
		op:                op,
		ranks:             ranks,
		mode:              mode{true},
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
	momentum := 0.0
	if b.training && rm != nil {
		momentum = b.countBatch()
	}
	return graph.BatchNorm(x, rm, rv, b.Weight, b.Bias, b.training || rm == nil, momentum, b.Eps)
}

// countBatch adds one to NumBatchesTracked, as PyTorch's training forward
// does, and returns the running statistics' update factor: *Momentum, or
// 1/count for the cumulative average (which reads the count back, the one
// host read it costs).
func (b *BatchNorm) countBatch() float64 {
	if b.NumBatchesTracked != nil {
		b.NumBatchesTracked.SetTensor(b.NumBatchesTracked.Tensor().AddScalar(1))
	}
	if b.Momentum != nil {
		return *b.Momentum
	}
	if b.NumBatchesTracked == nil {
		misuse(b.op, "momentum nil (the cumulative average) needs NumBatchesTracked")
	}
	n, err := b.NumBatchesTracked.Tensor().Item()
	if err != nil {
		panic(&tensor.Error{Op: b.op, Msg: fmt.Sprintf("reading num_batches_tracked: %v", err), Err: err})
	}
	return 1 / n
}

// Parameters returns "weight" and "bias".
func (b *BatchNorm) Parameters() []Named { return named("weight", b.Weight, "bias", b.Bias) }

// Buffers returns "running_mean", "running_var" and "num_batches_tracked".
func (b *BatchNorm) Buffers() []Named {
	return named("running_mean", b.RunningMean, "running_var", b.RunningVar, "num_batches_tracked", b.NumBatchesTracked)
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
