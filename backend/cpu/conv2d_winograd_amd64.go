package cpu

// The Winograd lane transforms in conv2d_winograd_amd64.s: eight float32
// lanes at a time in YMM registers (AVX2+FMA).

//go:noescape
func inputLanesF32AVX2(dst *float32, ds int, src *float32, ss, n int)

//go:noescape
func outputLanesF32AVX2(dst *float32, ds int, src *float32, ss, n int)

//go:noescape
func gatherPatchesF32AVX2(dst *float32, ld int, src *float32, offs *[8]int, sy int)

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
	gatherPatchesF32 = func(dst []float32, ld int, src []float32, offs *[8]int, sy int) {
		_ = dst[(wgPos-1)*ld+7]
		for _, o := range offs { // every row read, eight elements from its start
			_, _ = src[o], src[o+(wgIn-1)*sy+7]
		}
		gatherPatchesF32AVX2(&dst[0], ld, &src[0], offs, sy)
	}
}
