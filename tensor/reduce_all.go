package tensor

// The whole-tensor reductions: PyTorch's x.sum(), x.mean(), x.amax(),
// x.amin() with no arguments, each the same as its reduction with nil
// dims and keepDim false, a 0-d tensor.

// SumAll is Sum(nil, false): the sum of every element, as a 0-d tensor.
func (t *Tensor) SumAll() *Tensor { return t.Sum(nil, false) }

// MeanAll is Mean(nil, false): the mean of every element, as a 0-d tensor.
func (t *Tensor) MeanAll() *Tensor { return t.Mean(nil, false) }

// MaxAll is Max(nil, false): the largest element, as a 0-d tensor.
func (t *Tensor) MaxAll() *Tensor { return t.Max(nil, false) }

// MinAll is Min(nil, false): the smallest element, as a 0-d tensor.
func (t *Tensor) MinAll() *Tensor { return t.Min(nil, false) }
