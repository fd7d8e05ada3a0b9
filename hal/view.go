package hal

import (
	"fmt"
	"slices"
)

// MaxRank is the largest number of axes a view may have.
const MaxRank = 8

// View is a strided window onto a buffer: element (i₀, …, iₙ₋₁) lives at
// element Offset + Σ iₖ·Strides[k] of the buffer, counted in units of
// DType. Strides are non-negative; a stride of 0 repeats one element along
// that axis (broadcasting). A View with a nil Buf is the zero View: it
// stands for "no operand".
type View struct {
	Buf     Buffer
	DType   DType
	Offset  int
	Shape   []int
	Strides []int
}

// Contiguous returns the row-major view of shape over the start of buf.
func Contiguous(buf Buffer, dtype DType, shape ...int) View {
	return View{Buf: buf, DType: dtype, Shape: shape, Strides: RowMajorStrides(shape)}
}

// RowMajorStrides returns the strides of a densely packed row-major array.
func RowMajorStrides(shape []int) []int {
	strides := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	return strides
}

// Elements is the number of elements, the product of the shape.
func (v View) Elements() int {
	n := 1
	for _, d := range v.Shape {
		n *= d
	}
	return n
}

// Contiguous reports whether the view is densely packed in row-major
// order (from any offset). Axes of size 1 may have any stride, and an
// empty view is contiguous whatever its strides.
func (v View) Contiguous() bool {
	if v.Elements() == 0 {
		return true
	}
	s := 1
	for i := len(v.Shape) - 1; i >= 0; i-- {
		if v.Shape[i] != 1 && v.Strides[i] != s {
			return false
		}
		s *= v.Shape[i]
	}
	return true
}

// Span is the number of buffer elements from Offset to the last element
// the view reaches, plus one; 0 for an empty view.
func (v View) Span() int {
	if v.Elements() == 0 {
		return 0
	}
	last := 0
	for i, d := range v.Shape {
		last += (d - 1) * v.Strides[i]
	}
	return last + 1
}

// Same reports whether two views address the same elements of the same
// buffer in the same order.
func (v View) Same(w View) bool {
	return v.Buf == w.Buf && v.DType == w.DType && v.Offset == w.Offset &&
		slices.Equal(v.Shape, w.Shape) && slices.Equal(v.Strides, w.Strides)
}

func (v View) String() string {
	return fmt.Sprintf("%v%v(offset %d, strides %v)", v.DType, v.Shape, v.Offset, v.Strides)
}

// Check validates the view's own consistency and that it lies inside its
// buffer: a valid dtype, rank ≤ MaxRank, as many strides as axes, no
// negative sizes, strides or offset. Backends call it on every operand.
func (v View) Check() error {
	switch {
	case v.Buf == nil:
		return fmt.Errorf("view %v has no buffer: %w", v, ErrInvalid)
	case !v.DType.Valid():
		return fmt.Errorf("view has invalid dtype %v: %w", v.DType, ErrInvalid)
	case len(v.Shape) > MaxRank:
		return fmt.Errorf("view %v has rank %d > %d: %w", v, len(v.Shape), MaxRank, ErrUnsupported)
	case len(v.Strides) != len(v.Shape):
		return fmt.Errorf("view %v has %d strides for %d axes: %w", v, len(v.Strides), len(v.Shape), ErrInvalid)
	case v.Offset < 0:
		return fmt.Errorf("view %v has a negative offset: %w", v, ErrInvalid)
	}
	for i, d := range v.Shape {
		if d < 0 || v.Strides[i] < 0 {
			return fmt.Errorf("view %v has a negative size or stride: %w", v, ErrInvalid)
		}
	}
	if v.Elements() > 0 {
		need := (int64(v.Offset) + int64(v.Span())) * int64(v.DType.Size())
		if need > v.Buf.Size() {
			return fmt.Errorf("view %v needs %d bytes, its buffer has %d: %w", v, need, v.Buf.Size(), ErrInvalid)
		}
	}
	return nil
}
