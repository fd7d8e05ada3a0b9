package cpu

import "golang.org/x/sys/cpu"

// hasSIMD says the float32 kernels of simd_amd64.s can run: they use AVX2
// and FMA. Tests clear it to cover the portable loops too.
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func addF32AVX2(out, a, b *float32, n int)

//go:noescape
func subF32AVX2(out, a, b *float32, n int)

//go:noescape
func mulF32AVX2(out, a, b *float32, n int)

//go:noescape
func divF32AVX2(out, a, b *float32, n int)

//go:noescape
func reluF32AVX2(out, x *float32, n int)

//go:noescape
func reluGradF32AVX2(out, a, b *float32, n int)

//go:noescape
func sumF32AVX2(x *float32, n int) float64

//go:noescape
func maxF32AVX2(x *float32, n int) float32

//go:noescape
func expSumF32AVX2(dst, x *float32, n int, m float32) float32

//go:noescape
func scaleF32AVX2(x *float32, n int, s float32)

//go:noescape
func shiftF32AVX2(dst, x *float32, n int, m, l float32)

// hasAVX512 selects the 8-lane float64 sum.
var hasAVX512 = hasSIMD && cpu.X86.HasAVX512F

//go:noescape
func sumF32AVX512(x *float32, n int) float64

//go:noescape
func sumF32x2AVX512(x, y *float32, n int) float64

//go:noescape
func maxNaNF32AVX2(x *float32, n int) (m float32, nan bool)

//go:noescape
func minNaNF32AVX2(x *float32, n int) (m float32, nan bool)

//go:noescape
func addF32NT(out, a, b *float32, n int)

//go:noescape
func subF32NT(out, a, b *float32, n int)

//go:noescape
func mulF32NT(out, a, b *float32, n int)

//go:noescape
func divF32NT(out, a, b *float32, n int)

//go:noescape
func reluF32NT(out, x *float32, n int)
