//go:build !amd64

package cpu

import "unsafe"

// prefetchRows is a no-op off amd64: the rows are then read when packed.
func prefetchRows(p unsafe.Pointer, stride, n, width int) {}

// copyRows is never called off amd64, where hasSIMD is false.
func copyRows(dst, src unsafe.Pointer, stride, n, width int) {
	panic("cpu: copyRows without SIMD")
}
