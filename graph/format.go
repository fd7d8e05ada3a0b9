package graph

import (
	"fmt"
	"io"

	"github.com/webtensor/webtensor/tensor"
)

// Format implements fmt.Formatter as tensor.Tensor's Format does (the same
// verbs, flags and device sync), and marks what autodiff knows of x as
// PyTorch's repr does: ", requires_grad=True" for a leaf that requires a
// gradient, ", grad_fn=<MatMulBackward>" for a value computed by a
// recorded op (the op's name here, where PyTorch names its C++ node class,
// MmBackward0).
func (x *Value) Format(f fmt.State, verb rune) {
	if verb != 'v' && verb != 's' {
		fmt.Fprintf(f, "%%!%c(%s)", verb, x.String())
		return
	}
	o := tensor.DefaultPrintOptions
	if p, ok := f.Precision(); ok {
		o.Precision = p
	}
	o.Shape = f.Flag('+')
	io.WriteString(f, x.Repr(o))
}

// Repr returns x's printed form under o; see Format.
func (x *Value) Repr(o tensor.PrintOptions) string {
	if x == nil {
		return "tensor(<nil>)"
	}
	if x.released.Load() {
		return "tensor(<released>)"
	}
	switch {
	case x.v == nil:
	case x.v.node != nil:
		o.Suffixes = append(o.Suffixes[:len(o.Suffixes):len(o.Suffixes)], "grad_fn=<"+x.v.node.op+"Backward>")
	default:
		o.Suffixes = append(o.Suffixes[:len(o.Suffixes):len(o.Suffixes)], "requires_grad=True")
	}
	return x.t.Repr(o)
}

// Released reports whether Release was called on x (see
// tensor.Tensor.Released).
func (x *Value) Released() bool { return x.released.Load() }
