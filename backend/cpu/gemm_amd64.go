package cpu

// Assembly microkernels in gemm_amd64.s: 6×16 float32 and 6×8 float64
// tiles in twelve YMM accumulators (AVX2+FMA), and the same tiles twice as
// wide in ZMM registers (AVX-512F).

//go:noescape
func gemmKernelF32AVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemmKernelF64AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)

//go:noescape
func gemmKernelF32AVX512(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemmKernelF64AVX512(k int, a, b, c *float64, ldc int, alpha, beta float64)

//go:noescape
func packT8F32(dst, src *float32, ld, blocks, width int)

//go:noescape
func packT6F32(dst, src *float32, ld, blocks int)

// interleave6F32AVX2 packs the first rows of a full six-lane A panel with
// 6×8 register transposes (packT6F32), leaving at least one row, which
// its last block's store spills into, to the caller; it returns how many
// rows it packed.
func interleave6F32AVX2(panel, data []float32, base, ld, kb int) int {
	blocks := (kb - 1) / 8
	if blocks == 0 {
		return 0
	}
	_, _ = panel[6*kb-1], data[base+5*ld+8*blocks-1]
	packT6F32(&panel[0], &data[base], ld, blocks)
	return 8 * blocks
}

// interleaveF32AVX2 packs width (a multiple of 8) full lanes into a panel with
// 8×8 register transposes, eight times the speed of the scalar loop; the
// forward pass x·Wᵀ packs all of W this way on every call.
func interleaveF32AVX2(panel, data []float32, base, ld, width, kb int) bool {
	blocks := kb / 8
	if blocks == 0 || width%8 != 0 {
		return false
	}
	_, _ = panel[width*kb-1], data[base+(width-1)*ld+kb-1]
	for l := 0; l < width; l += 8 {
		packT8F32(&panel[l], &data[base+l*ld], ld, blocks, width)
	}
	if kb%8 != 0 {
		// The last kb%8 rows: one more 8×8 transpose of the last eight,
		// which rewrites a few rows with the same values, in place of a
		// scalar loop (a weight gradient's window rows, 14 or 28 long,
		// left 6 or 4 of them to it, at a third of the time of the rest).
		tail := kb - 8
		for l := 0; l < width; l += 8 {
			packT8F32(&panel[width*tail+l], &data[base+l*ld+tail], ld, 1, width)
		}
	}
	return true
}

// interleaveLanesF32AVX2 is interleaveF32AVX2 for the first lanes lanes of
// the panel only (a multiple of 8), leaving lanes past them untouched: a
// convolution's B panel with fewer images than the tile is wide.
func interleaveLanesF32AVX2(panel, data []float32, base, ld, lanes, width, kb int) bool {
	blocks := kb / 8
	if blocks == 0 || lanes%8 != 0 || lanes > width {
		return false
	}
	_, _ = panel[width*(kb-1)+lanes-1], data[base+(lanes-1)*ld+kb-1]
	for l := 0; l < lanes; l += 8 {
		packT8F32(&panel[l], &data[base+l*ld], ld, blocks, width)
	}
	if kb%8 != 0 { // as in interleaveF32AVX2
		tail := kb - 8
		for l := 0; l < lanes; l += 8 {
			packT8F32(&panel[width*tail+l], &data[base+l*ld+tail], ld, 1, width)
		}
	}
	return true
}

func runF32AVX2(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	_, _, _ = a[6*k-1], b[16*k-1], c[5*ldc+15]
	gemmKernelF32AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

func runF64AVX2(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	_, _, _ = a[6*k-1], b[8*k-1], c[5*ldc+7]
	gemmKernelF64AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

func runF32AVX512(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	_, _, _ = a[6*k-1], b[32*k-1], c[5*ldc+31]
	gemmKernelF32AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

func runF64AVX512(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	_, _, _ = a[6*k-1], b[16*k-1], c[5*ldc+15]
	gemmKernelF64AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

func init() {
	if !hasSIMD {
		return
	}
	interleaveF32 = interleaveF32AVX2
	interleaveLanesF32 = interleaveLanesF32AVX2
	interleave6F32 = interleave6F32AVX2
	kernelsF32 = append([]*gemmKernel[float32]{{"avx2", 6, 16, 144, 256, 4080, runF32AVX2}}, kernelsF32...)
	kernelsF64 = append([]*gemmKernel[float64]{{"avx2", 6, 8, 96, 256, 2040, runF64AVX2}}, kernelsF64...)
	if hasAVX512 {
		kernelsF32 = append([]*gemmKernel[float32]{{"avx512", 6, 32, 144, 256, 4096, runF32AVX512}}, kernelsF32...)
		kernelsF64 = append([]*gemmKernel[float64]{{"avx512", 6, 16, 96, 256, 2048, runF64AVX512}}, kernelsF64...)
	}
}
