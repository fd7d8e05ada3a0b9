package tensor

// Shared plumbing of the NN ops: argument checks with uniform messages,
// the batching of unbatched images, and the launches of the HAL's NN
// kernels (Im2Col, Col2Im, Pool2D, GridSample) through the core's compute.

import (
	"fmt"
	"runtime"

	"github.com/webtensor/webtensor/hal"
)

// nnScope collects the intermediate results of a composite op so that
// one deferred call releases them all, whatever path the op returns by.
type nnScope []*Tensor

// add records t for release and returns it.
func (s *nnScope) add(t *Tensor) *Tensor {
	*s = append(*s, t)
	return t
}

func (s *nnScope) release() { releaseAll(*s...) }

// nnDescribe names a tensor in messages by shape and dtype, e.g.
// "[2 3 8 8] float32".
func nnDescribe(t *Tensor) string { return fmt.Sprintf("%v %v", t.shape, t.dtype) }

// nnCheckFloat panics unless t is a live float tensor; what names the
// operand ("input", "weight", …).
func nnCheckFloat(op, what string, t *Tensor) {
	t.checkLive(op)
	if !t.dtype.IsFloat() {
		misuse(op, "%s %s must be a float tensor", what, nnDescribe(t))
	}
}

// nnAxis resolves a possibly negative dim of x. A scalar has one
// position, 0 (or −1), as in PyTorch.
func nnAxis(op string, x *Tensor, dim int) int {
	return axisIn(op, dim, max(x.Rank(), 1), x.Rank())
}

// nnBatched checks that x is a float image batch [N, C, H, W] or an
// unbatched image [C, H, W] on the device of the other operands (nil ones
// are skipped), and returns it as 4-D. unbatched says x was 3-D: the
// returned tensor is then a new view the caller releases, and the result
// goes through nnUnbatched.
func nnBatched(op string, x *Tensor, others ...*Tensor) (x4 *Tensor, unbatched bool) {
	nnCheckFloat(op, "input", x)
	operands := []*Tensor{x}
	for _, t := range others {
		if t != nil {
			operands = append(operands, t)
		}
	}
	sameDevice(op, operands...)
	switch x.Rank() {
	case 4:
		return x, false
	case 3:
		return x.Unsqueeze(0), true
	}
	misuse(op, "input %s must be 3-D [C, H, W] or 4-D [N, C, H, W]", nnDescribe(x))
	return nil, false
}

// nnUnbatched undoes nnBatched on a result: it drops the batch axis that
// nnBatched added, consuming y.
func nnUnbatched(y *Tensor, unbatched bool) *Tensor {
	if !unbatched {
		return y
	}
	defer y.Release()
	return y.Squeeze(0)
}

// nnDims4 returns the four sizes of a 4-D tensor.
func nnDims4(t *Tensor) (a, b, c, d int) { return t.shape[0], t.shape[1], t.shape[2], t.shape[3] }

// nnIm2Col unfolds x [N, C, H, W] into columns [N, C·KH·KW, OH·OW].
func nnIm2Col(op string, x *Tensor, w hal.Window) *Tensor {
	n, c, _, _ := nnDims4(x)
	shape := []int{n, c * w.KH * w.KW, w.OutH * w.OutW}
	return compute(op, x.dev, x.dtype, shape, []*Tensor{x}, func(dst hal.View) error {
		return x.dev.hal.Im2Col(dst, x.view(), w)
	})
}

// nnCol2Im folds columns [N, C·KH·KW, OutH·OutW] into images of shape
// [N, C, H, W], summing overlaps.
func nnCol2Im(op string, cols *Tensor, shape []int, w hal.Window) *Tensor {
	return compute(op, cols.dev, cols.dtype, shape, []*Tensor{cols}, func(dst hal.View) error {
		return cols.dev.hal.Col2Im(dst, cols.view(), w)
	})
}

// nnPool2D pools x [N, C, H, W] into [N, C, OutH, OutW]; PoolMax also
// returns the Int32 argmax indices (nil for PoolAvg).
func nnPool2D(op string, kind hal.PoolOp, x *Tensor, w hal.Window, countIncludePad bool) (values, indices *Tensor) {
	n, c, _, _ := nnDims4(x)
	shape := []int{n, c, w.OutH, w.OutW}
	if kind != hal.PoolMax {
		values = compute(op, x.dev, x.dtype, shape, []*Tensor{x}, func(dst hal.View) error {
			return x.dev.hal.Pool2D(kind, dst, hal.View{}, x.view(), w, countIncludePad)
		})
		return values, nil
	}
	// One kernel writes both results, so a failure of either allocation
	// or of the kernel must reach both.
	indices = empty(op, x.dev, Int32, shape)
	adopt(indices, x)
	values = empty(op, x.dev, x.dtype, shape)
	values.exec(op, []*Tensor{x, indices}, func() error {
		return x.dev.hal.Pool2D(kind, values.view(), indices.view(), x.view(), w, false)
	})
	if values.err != nil && indices.err == nil {
		indices.setFailed(values.err)
	}
	return values, indices
}

// nnGridSample samples x [N, C, H, W] at grid [N, OH, OW, 2] into
// [N, C, OH, OW].
func nnGridSample(op string, x, grid *Tensor, padding GridPadding, alignCorners bool) *Tensor {
	shape := []int{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]}
	return compute(op, x.dev, x.dtype, shape, []*Tensor{x, grid}, func(dst hal.View) error {
		return x.dev.hal.GridSample(dst, x.view(), grid.view(), padding, alignCorners)
	})
}

// nnAssign overwrites dst's elements with src's (same shape and dtype), in
// place, through dst's own strides: the update of BatchNorm's running
// statistics, which PyTorch makes in place. A failure of src, or of the
// copy, is carried by dst from then on (and recorded on the device), since
// its contents are no longer what they claim to be.
func nnAssign(op string, dst, src *Tensor) {
	if err := inputsErr(op, src, dst); err != nil {
		dst.err = err
		return
	}
	if dst.err != nil || dst.Len() == 0 {
		return
	}
	dst.dev.requireKernel(op, dst.dtype, hal.KernelCopy, src.dtype)
	err := dst.dev.hal.Copy(dst.view(), src.view())
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	if err != nil {
		dst.err = dst.dev.fail(op, err)
	}
}
