package graph

// sumAttrs are a reduction's parameters.
type sumAttrs struct {
	dims    []int
	keepDim bool
}

// Sum is tensor.Tensor.Sum, recorded.
func (x *Value) Sum(dims []int, keepDim bool) *Value {
	t := live("Sum", x)
	return unary("Sum", x, t[0].Sum(dims, keepDim), sumAttrs{dims, keepDim})
}

// Reshape is tensor.Tensor.Reshape, recorded.
func (x *Value) Reshape(shape ...int) *Value {
	t := live("Reshape", x)
	return unary("Reshape", x, t[0].Reshape(shape...), nil)
}

// Expand is tensor.Tensor.Expand, recorded.
func (x *Value) Expand(shape ...int) *Value {
	t := live("Expand", x)
	return unary("Expand", x, t[0].Expand(shape...), nil)
}
