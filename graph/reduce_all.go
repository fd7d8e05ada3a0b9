package graph

// The whole-tensor reductions, recorded: PyTorch's loss.mean() and
// friends; see tensor.Tensor.SumAll.

// SumAll is Sum(nil, false).
func (x *Value) SumAll() *Value { return x.Sum(nil, false) }

// MeanAll is Mean(nil, false).
func (x *Value) MeanAll() *Value { return x.Mean(nil, false) }

// MaxAll is Max(nil, false).
func (x *Value) MaxAll() *Value { return x.Max(nil, false) }

// MinAll is Min(nil, false).
func (x *Value) MinAll() *Value { return x.Min(nil, false) }
