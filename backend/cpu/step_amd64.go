package cpu

//go:noescape
func sgdMomentumF32AVX2(p, grad, s *float32, n int, mom, negLR float32)

func init() {
	if hasSIMD {
		sgdMomentumF32 = func(p, g, s []float32, mom, negLR float32) int {
			n := len(p) &^ 7
			if n == 0 {
				return 0
			}
			_, _ = g[n-1], s[n-1]
			sgdMomentumF32AVX2(&p[0], &g[0], &s[0], n, mom, negLR)
			return n
		}
	}
}
