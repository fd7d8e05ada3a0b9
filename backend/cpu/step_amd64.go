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

//go:noescape
func adamF32AVX2(p, grad, m, v *float32, n int, k *adamConsts, flags int)

//go:noescape
func adamF32AVX512(p, grad, m, v *float32, n int, k *adamConsts, flags int)

// adamF32Vector runs Adam's float32 update on the longest prefix a vector
// kernel takes: 16 lanes with AVX-512, else 8 with AVX2. It reads
// hasSIMD and hasAVX512 at each call, so tests can force either path.
func adamF32Vector(p, g, m, v []float32, k adamConsts, flags int) int {
	width := 0
	switch {
	case hasAVX512:
		width = 16
	case hasSIMD:
		width = 8
	}
	n := len(p) &^ (width - 1)
	if width == 0 || n == 0 {
		return 0
	}
	_, _, _ = g[n-1], m[n-1], v[n-1]
	if width == 16 {
		adamF32AVX512(&p[0], &g[0], &m[0], &v[0], n, &k, flags)
	} else {
		adamF32AVX2(&p[0], &g[0], &m[0], &v[0], n, &k, flags)
	}
	return n
}

func init() { adamF32 = adamF32Vector }

//go:noescape
func rmspropF32AVX2(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)

//go:noescape
func rmspropF32AVX512(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)

//go:noescape
func adagradF32AVX2(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)

//go:noescape
func adagradF32AVX512(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)

// rmsF32Vector runs RMSProp's (or, with adagrad, Adagrad's) float32
// update on the longest prefix a vector kernel takes, as adamF32Vector
// does. buf and avg may be nil where flags do not use them.
func rmsF32Vector(adagrad bool, p, g, v, buf, avg []float32, k rmsConsts, flags int) int {
	width := 0
	switch {
	case hasAVX512:
		width = 16
	case hasSIMD:
		width = 8
	}
	n := len(p) &^ (width - 1)
	if width == 0 || n == 0 {
		return 0
	}
	_, _ = g[n-1], v[n-1]
	pb, pa := &p[0], &p[0] // unread unless flags say
	if flags&rmsMomentum != 0 {
		_ = buf[n-1]
		pb = &buf[0]
	}
	if flags&rmsCentered != 0 {
		_ = avg[n-1]
		pa = &avg[0]
	}
	// Direct calls, not a func value: k stays on the stack.
	switch {
	case adagrad && width == 16:
		adagradF32AVX512(&p[0], &g[0], &v[0], pb, pa, n, &k, flags)
	case adagrad:
		adagradF32AVX2(&p[0], &g[0], &v[0], pb, pa, n, &k, flags)
	case width == 16:
		rmspropF32AVX512(&p[0], &g[0], &v[0], pb, pa, n, &k, flags)
	default:
		rmspropF32AVX2(&p[0], &g[0], &v[0], pb, pa, n, &k, flags)
	}
	return n
}

func init() { rmsF32 = rmsF32Vector }
