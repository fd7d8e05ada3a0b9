package cpu

// maxPool2x2F32AVX2 pools 2×2 windows at stride 2 of rows r0 and r1
// (2n elements each, n a multiple of 8) into n values and their indices
// base + column (+ w for r1): pool_amd64.s.
//
//go:noescape
func maxPool2x2F32AVX2(dst *float32, idx *int32, r0, r1 *float32, n int, base, w int32)
