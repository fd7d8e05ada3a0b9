package cpu

// The Winograd lane transforms in conv2d_winograd_amd64.s: eight float32
// lanes at a time in YMM registers (AVX2+FMA).

//go:noescape
func inputLanesF32AVX2(dst *float32, ds int, src *float32, ss, n int)

//go:noescape
func outputLanesF32AVX2(dst *float32, ds int, src *float32, ss, n int)

func init() {
	if !hasSIMD {
		return
	}
	inputLanesF32 = func(dst []float32, ds int, src []float32, ss, n int) {
		_, _ = dst[5*ds+n-1], src[5*ss+n-1]
		inputLanesF32AVX2(&dst[0], ds, &src[0], ss, n)
	}
	outputLanesF32 = func(dst []float32, ds int, src []float32, ss, n int) {
		_, _ = dst[3*ds+n-1], src[5*ss+n-1]
		outputLanesF32AVX2(&dst[0], ds, &src[0], ss, n)
	}
}
