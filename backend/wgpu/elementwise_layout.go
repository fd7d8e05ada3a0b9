//go:build cgo || (js && wasm)

package wgpu

import (
	"slices"
)

// denseOver reports whether strides make a view dense and row-major over
// shape, so that its element i sits at its offset + i. Over the output of
// collapse (no size-1 axes) this is the exact test.
func denseOver(shape, strides []int) bool {
	s := 1
	for k := len(shape) - 1; k >= 0; k-- {
		if strides[k] != s {
			return false
		}
		s *= shape[k]
	}
	return true
}

// overlaps reports whether a view of shape and strides may reach one
// element twice. It is conservative: with the axes sorted by stride, each
// stride must exceed the span of the axes inside it, which every view that
// slicing, permuting or reshaping produces satisfies.
func overlaps(shape, strides []int) bool {
	type axis struct{ size, stride int }
	var axes []axis
	for k, d := range shape {
		if d == 0 {
			return false // no elements at all
		}
		if d > 1 {
			axes = append(axes, axis{d, strides[k]})
		}
	}
	slices.SortFunc(axes, func(a, b axis) int { return a.stride - b.stride })
	span := 0 // the largest offset the inner axes reach
	for _, a := range axes {
		if a.stride <= span {
			return true
		}
		span += (a.size - 1) * a.stride
	}
	return false
}
