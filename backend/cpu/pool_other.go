//go:build !amd64

package cpu

func maxPool2x2F32AVX2(dst *float32, idx *int32, r0, r1 *float32, n int, base, w int32) {
	panic("cpu: no SIMD kernels")
}
