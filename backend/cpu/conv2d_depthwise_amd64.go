package cpu

// depthwiseTapsAVX2 is depthwiseTaps in assembly (conv2d_depthwise_amd64.s)
// for n a positive multiple of 8: the nine weights stay in registers and
// each output is nine fused multiply-adds and one store, 32 at a time.
//
//go:noescape
func depthwiseTapsAVX2(out, in *float32, offs *[9]int, w *[9]float32, n int)

// depthwiseSplitAVX2 is depthwiseSplit's body in assembly for n a
// positive multiple of 8.
//
//go:noescape
func depthwiseSplitAVX2(even, odd, src *float32, n int)

func init() {
	if hasSIMD {
		depthwiseTapsAsm = func(out, in []float32, offs *[9]int, w *[9]float32) {
			n := len(out)
			if n%8 != 0 {
				depthwiseTaps(out, in, offs, w)
				return
			}
			for _, o := range offs {
				_ = in[o : o+n] // the kernel reads these runs: bounds as depthwiseTaps
			}
			depthwiseTapsAVX2(&out[0], &in[0], offs, w, n)
		}
		depthwiseSplitAsm = func(even, odd, src []float32) int {
			n := min(len(even), len(odd)) &^ 7
			if n == 0 {
				return 0
			}
			_ = src[2*n-1]
			depthwiseSplitAVX2(&even[0], &odd[0], &src[0], n)
			return n
		}
	}
}
