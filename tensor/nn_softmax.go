package tensor

// Softmax returns exp(x − logsumexp(x, dim)) along dim, as torch.softmax.
// dim may be negative (counting from the end). x must be a float tensor.
//
// It goes through the LogSumExp reduction, which subtracts the maximum
// before exponentiating, so large logits neither overflow nor lose the
// small probabilities; the result has x's shape and dtype.
func Softmax(x *Tensor, dim int) *Tensor {
	const op = "Softmax"
	shifted := logSoftmax(op, x, dim)
	defer shifted.Release()
	return shifted.Exp()
}

// LogSoftmax returns x − logsumexp(x, dim) along dim, as
// torch.log_softmax: the logarithm of Softmax, computed without ever
// forming the (possibly underflowing) probabilities.
func LogSoftmax(x *Tensor, dim int) *Tensor { return logSoftmax("LogSoftmax", x, dim) }

// Softmax returns exp(t − logsumexp(t, dim)) along dim; see the package
// function Softmax.
func (t *Tensor) Softmax(dim int) *Tensor { return Softmax(t, dim) }

// LogSoftmax returns t − logsumexp(t, dim) along dim; see the package
// function LogSoftmax.
func (t *Tensor) LogSoftmax(dim int) *Tensor { return LogSoftmax(t, dim) }

func logSoftmax(op string, x *Tensor, dim int) *Tensor {
	nnCheckFloat(op, "input", x)
	axis := nnAxis(op, x, dim)
	checkOp(op, x.dev, x.dtype)
	if x.Rank() == 0 {
		// A scalar is a distribution over one outcome; give the reduction
		// an axis to work on and drop it again.
		row := x.Reshape(1)
		defer row.Release()
		out := logSoftmax(op, row, 0)
		defer out.Release()
		return out.Reshape()
	}
	lse := x.LogSumExp([]int{axis}, true)
	defer lse.Release()
	return x.Sub(lse)
}
