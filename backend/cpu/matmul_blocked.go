package cpu

// Block sizes for the pure-Go kernel. A kc×nc panel of b (128×512 float32,
// 256 KiB) stays in L2 while every row of a streams over it, and the nc-wide
// slice of a dst row (2 KiB) stays in L1 across the kc updates.
const (
	kc = 128
	nc = 512
	// matmulGrain is the number of multiply-adds a worker must get before
	// the product is split across goroutines.
	matmulGrain = 1 << 16
)

// matmulGo computes dst[m×n] = a[m×k]·b[k×n] (row-major) in pure Go,
// splitting rows of dst across GOMAXPROCS goroutines.
func matmulGo(dst, a, b []float32, m, k, n int) {
	if m == 0 || n == 0 {
		return
	}
	// Rows needed per worker so that each does matmulGrain multiply-adds.
	rowGrain := max(1, matmulGrain/max(1, k*n))
	parallelFor(m, rowGrain, func(i0, i1 int) {
		matmulRows(dst, a, b, i0, i1, k, n)
	})
}

// matmulRows computes rows [i0, i1) of dst with an i-k-j loop over cache
// blocks. The inner loop folds four rows of b into one dst row at a time,
// so each dst element is loaded and stored once per four multiply-adds
// instead of once per one; with a0…a3 held in registers that halves the
// memory traffic of a plain axpy loop.
func matmulRows(dst, a, b []float32, i0, i1, k, n int) {
	clear(dst[i0*n : i1*n]) // Alloc leaves contents undefined; k may be 0
	for p0 := 0; p0 < k; p0 += kc {
		p1 := min(p0+kc, k)
		for j0 := 0; j0 < n; j0 += nc {
			j1 := min(j0+nc, n)
			for i := i0; i < i1; i++ {
				c := dst[i*n+j0 : i*n+j1]
				ar := a[i*k+p0 : i*k+p1]
				p := 0
				for ; p+4 <= len(ar); p += 4 {
					row := (p0 + p) * n
					a0, a1, a2, a3 := ar[p], ar[p+1], ar[p+2], ar[p+3]
					// Equal-length reslices let the compiler drop the
					// bounds checks in the loop below.
					b0 := b[row+j0 : row+j1]
					b1 := b[row+n+j0 : row+n+j1][:len(b0)]
					b2 := b[row+2*n+j0 : row+2*n+j1][:len(b0)]
					b3 := b[row+3*n+j0 : row+3*n+j1][:len(b0)]
					c := c[:len(b0)]
					for j, v := range b0 {
						c[j] += a0*v + a1*b1[j] + a2*b2[j] + a3*b3[j]
					}
				}
				for ; p < len(ar); p++ {
					row := (p0 + p) * n
					ap := ar[p]
					b0 := b[row+j0 : row+j1]
					c := c[:len(b0)]
					for j, v := range b0 {
						c[j] += ap * v
					}
				}
			}
		}
	}
}
