package cpu

// maxPool2x2F32AVX2 pools n ≥ 1 2×2 windows at stride 2 of rows r0 and
// r1 (2n elements each) into n values and their indices base + column
// (+ w for r1), eight at a time, the last group masked: pool_amd64.s.
//
//go:noescape
func maxPool2x2F32AVX2(dst *float32, idx *int32, r0, r1 *float32, n int, base, w int32)
