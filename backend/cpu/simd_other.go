//go:build !amd64

package cpu

// hasSIMD is false off amd64: the portable loops of simd.go run instead,
// and these stand-ins are never called.
var hasSIMD, hasAVX512 = false, false

func sumF32AVX512(x *float32, n int) float64 { panic("cpu: no SIMD kernels") }

func sumF32x2AVX512(x, y *float32, n int) float64 { panic("cpu: no SIMD kernels") }

func addF32AVX2(out, a, b *float32, n int)                    { panic("cpu: no SIMD kernels") }
func subF32AVX2(out, a, b *float32, n int)                    { panic("cpu: no SIMD kernels") }
func mulF32AVX2(out, a, b *float32, n int)                    { panic("cpu: no SIMD kernels") }
func divF32AVX2(out, a, b *float32, n int)                    { panic("cpu: no SIMD kernels") }
func reluF32AVX2(out, x *float32, n int)                      { panic("cpu: no SIMD kernels") }
func reluGradF32AVX2(out, a, b *float32, n int)               { panic("cpu: no SIMD kernels") }
func sumF32AVX2(x *float32, n int) float64                    { panic("cpu: no SIMD kernels") }
func maxF32AVX2(x *float32, n int) float32                    { panic("cpu: no SIMD kernels") }
func expSumF32AVX2(dst, x *float32, n int, m float32) float32 { panic("cpu: no SIMD kernels") }
func scaleF32AVX2(x *float32, n int, s float32)               { panic("cpu: no SIMD kernels") }
func shiftF32AVX2(dst, x *float32, n int, m, l float32)       { panic("cpu: no SIMD kernels") }

func maxNaNF32AVX2(x *float32, n int) (m float32, nan bool) { panic("cpu: no SIMD kernels") }
func minNaNF32AVX2(x *float32, n int) (m float32, nan bool) { panic("cpu: no SIMD kernels") }

func addF32NT(out, a, b *float32, n int) { panic("cpu: no SIMD kernels") }
func subF32NT(out, a, b *float32, n int) { panic("cpu: no SIMD kernels") }
func mulF32NT(out, a, b *float32, n int) { panic("cpu: no SIMD kernels") }
func divF32NT(out, a, b *float32, n int) { panic("cpu: no SIMD kernels") }
func reluF32NT(out, x *float32, n int)   { panic("cpu: no SIMD kernels") }
