package cpu

import "unsafe"

// gemmStreamB is gemmSerial for a product whose A, all m rows of one kc
// block, fits the mc×kc space and whose B has contiguous rows: a
// pointwise convolution, c = W·X with m = Cout often 64 or less and X's
// rows (input channels) H·W apart, and its input gradient Wᵀ·dY with a
// short k = Cout (issue 17). gemmSerial's order packs a whole kc×nc
// block of B before multiplying any of it: for such a product that is a
// copy of megabytes out of memory, 256 rows on 256 pages that the
// hardware prefetchers do not follow, with no arithmetic to hide the
// misses (a quarter of a 1×1 convolution's time at one thread), and the
// packed block is read back from L3. Here B is packed one nr-wide panel
// at a time, multiplied at once by every A panel while it is in L1, and
// the next panel's rows are prefetched a slice before each of those
// multiplies, so that its misses overlap the arithmetic of the current
// one.
func gemmStreamB[T float32 | float64](ker *gemmKernel[T], m, n, k int, alpha T, a, b strided[T], beta T, c []T, ldc int, buf *gemmBuffers[T]) {
	mr, nr := ker.mr, ker.nr
	kc := min(ker.kc, k)
	panels := ceilDiv(m, mr)
	buf.a = grow(buf.a, panels*mr*kc)
	buf.b = grow(buf.b, nr*kc)
	buf.tile = grow(buf.tile, mr*nr)
	size := int(unsafe.Sizeof(b.data[0]))
	stride := b.rs * size
	// A full panel row of the assembly kernels is one or two 64-byte
	// copies.
	width := nr * size
	fast := hasSIMD && width%64 == 0
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		packA(buf.a, a, 0, pc, m, kb, mr)
		countPacked(m, kb)
		be := T(1)
		if pc == 0 {
			be = beta
		}
		row0 := b.off + pc*b.rs // B's element (pc, 0)
		prefetchRows(unsafe.Pointer(&b.data[row0]), stride, kb, width)
		for jr := 0; jr < n; jr += nr {
			w := min(nr, n-jr)
			if fast && w == nr {
				_ = b.data[row0+(kb-1)*b.rs+jr+nr-1] // the panel's last element
				copyRows(unsafe.Pointer(&buf.b[0]), unsafe.Pointer(&b.data[row0+jr]), stride, kb, width)
			} else {
				packB(buf.b, b, pc, jr, kb, w, nr)
			}
			countPacked(w, kb)
			for i := range panels {
				if jr+nr < n {
					// Rows [p0, p1) of the next panel: kb/panels of them
					// per multiply.
					p0, p1 := i*kb/panels, (i+1)*kb/panels
					if p1 > p0 {
						prefetchRows(unsafe.Pointer(&b.data[row0+p0*b.rs+jr+nr]), stride, p1-p0, width)
					}
				}
				ir := i * mr
				gemmTile(ker, kb, buf.a[ir*kb:(ir+mr)*kb], buf.b, min(mr, m-ir), w, alpha, be, c[ir*ldc+jr:], ldc, buf.tile)
			}
		}
	}
}
