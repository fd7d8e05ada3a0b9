package tensor

import "slices"

// numElements returns the product of shape, panicking on negative
// dimensions or an element count that would not fit in memory anyway.
func numElements(op string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			misuse(op, "negative dimension in shape %v", shape)
		}
		if d != 0 && n > maxElements/d {
			misuse(op, "shape %v has too many elements", shape)
		}
		n *= d
	}
	return n
}

// maxElements keeps byte sizes (4 per element) representable as int64 on
// every platform, including 32-bit ones.
const maxElements = int(^uint(0)>>1) / 4

func sameShape(a, b []int) bool { return slices.Equal(a, b) }
