package nn

import (
	"slices"

	"github.com/webtensor/webtensor/graph"
)

// The losses reduce by the mean over every element (PyTorch's
// reduction="mean") and return a scalar value that the caller releases.
// They release their intermediates; the graph keeps what backward needs.

// MSELoss is the mean of (pred − target)², as torch.nn.functional.mse_loss.
// pred and target must have the same shape.
func MSELoss(pred, target *graph.Value) *graph.Value {
	sameShape("MSELoss", pred, target)
	d := graph.Sub(pred, target)
	defer d.Release()
	sq := d.Square()
	defer sq.Release()
	return sq.Mean(nil, false)
}

// L1Loss is the mean of |pred − target|, as torch.nn.functional.l1_loss
// (its gradient at a zero difference is 0).
func L1Loss(pred, target *graph.Value) *graph.Value {
	sameShape("L1Loss", pred, target)
	d := graph.Sub(pred, target)
	defer d.Release()
	a := d.Abs()
	defer a.Release()
	return a.Mean(nil, false)
}

// CrossEntropy is the softmax cross-entropy of logits [N, C] (or
// [N, C, d…]) against class indices labels [N] (or [N, d…]; Int32, or
// Int64 as PyTorch's), as
// torch.nn.functional.cross_entropy with label_smoothing: with ε =
// labelSmoothing, each element's loss is (1−ε)·(−log p_label) +
// ε·mean_c(−log p_c). It is computed from LogSoftmax, which subtracts the
// maximum first, so logits of any size stay finite; the gradient is
// (softmax − smoothed one-hot)/N. Labels must lie in [0, C).
func CrossEntropy(logits, labels *graph.Value, labelSmoothing float64) *graph.Value {
	const op = "CrossEntropy"
	if !(labelSmoothing >= 0 && labelSmoothing <= 1) {
		misuse(op, "label smoothing %v is outside [0, 1]", labelSmoothing)
	}
	checkClassInput(op, logits, labels)
	logp := logits.LogSoftmax(1)
	defer logp.Release()
	nll := nllMean(logp, labels) // mean of log p_label
	defer nll.Release()
	if labelSmoothing == 0 {
		return nll.Neg()
	}
	all := logp.Mean(nil, false) // mean over classes and elements
	defer all.Release()
	a := nll.MulScalar(labelSmoothing - 1)
	defer a.Release()
	b := all.MulScalar(-labelSmoothing)
	defer b.Release()
	return graph.Add(a, b)
}

// NLLLoss is the negative log-likelihood of log-probabilities logProbs
// [N, C] (or [N, C, d…]) at class indices labels [N] (or [N, d…]; Int32
// or Int64),
// as torch.nn.functional.nll_loss: the mean of −logProbs[i, label_i].
func NLLLoss(logProbs, labels *graph.Value) *graph.Value {
	checkClassInput("NLLLoss", logProbs, labels)
	m := nllMean(logProbs, labels)
	defer m.Release()
	return m.Neg()
}

// nllMean is the mean of logp at the labels along axis 1.
func nllMean(logp, labels *graph.Value) *graph.Value {
	idx := labels.Unsqueeze(1)
	defer idx.Release()
	picked := logp.Gather(1, idx)
	defer picked.Release()
	return picked.Mean(nil, false)
}

func checkClassInput(op string, x, labels *graph.Value) {
	xs, ls := x.Shape(), labels.Shape()
	if !labels.DType().IsInteger() {
		misuse(op, "labels must be int32 or int64 class indices, got %v", labels.DType())
	}
	if len(xs) < 2 || len(ls) != len(xs)-1 || ls[0] != xs[0] || !slices.Equal(ls[1:], xs[2:]) {
		misuse(op, "input %v and labels %v are not [N, C, d…] and [N, d…]", xs, ls)
	}
}

// BCEWithLogits is the binary cross-entropy of sigmoid(logits) against
// targets in [0, 1], as torch.nn.functional.binary_cross_entropy_with_logits:
// the mean of max(x, 0) − x·y + log(1 + e^−|x|), which never exponentiates
// a positive number, so it stays finite for logits of any size. Its
// gradient is (sigmoid(x) − y)/n, also at x = 0.
func BCEWithLogits(logits, targets *graph.Value) *graph.Value {
	sameShape("BCEWithLogits", logits, targets)
	// MaximumScalar's gradient splits ties evenly (½ at x = 0), and Abs's
	// is 0 there, so the two kinks add up to sigmoid(0) = ½.
	pos := logits.MaximumScalar(0)
	defer pos.Release()
	xy := graph.Mul(logits, targets)
	defer xy.Release()
	abs := logits.Abs()
	defer abs.Release()
	neg := abs.Neg()
	defer neg.Release()
	e := neg.Exp()
	defer e.Release()
	sp := e.Log1p()
	defer sp.Release()
	d := graph.Sub(pos, xy)
	defer d.Release()
	l := graph.Add(d, sp)
	defer l.Release()
	return l.Mean(nil, false)
}

func sameShape(op string, a, b *graph.Value) {
	if !slices.Equal(a.Shape(), b.Shape()) {
		misuse(op, "input %v and target %v differ in shape", a.Shape(), b.Shape())
	}
}
