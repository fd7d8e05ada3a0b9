package cpu

// packA copies rows [ic, ic+mb) × columns [pc, pc+kb) of a into panels of
// mr rows, each stored column by column (dst[p*mr+i] within a panel), the
// order in which the microkernel broadcasts them. Rows past mb are zero so
// an edge tile computes garbage-free.
func packA[T float32 | float64](dst []T, a strided[T], ic, pc, mb, kb, mr int) {
	for i0 := 0; i0 < mb; i0 += mr {
		h := min(mr, mb-i0)
		panel := dst[i0*kb : i0*kb+mr*kb]
		base := a.off + (ic+i0)*a.rs + pc*a.cs
		switch {
		case a.rs == 1 && h == mr:
			// Transposed a: each column of the panel is contiguous.
			for p := range kb {
				copy(panel[p*mr:p*mr+mr], a.data[base+p*a.cs:base+p*a.cs+mr])
			}
		case a.cs == 1:
			interleave(panel, a.data, base, a.rs, h, mr, kb)
		default:
			for i := range h {
				o := base + i*a.rs
				for p := range kb {
					panel[p*mr+i] = a.data[o+p*a.cs]
				}
			}
			zeroRows(panel, h, mr, kb)
		}
	}
}

// packB copies rows [pc, pc+kb) × columns [jc, jc+nb) of b into panels of
// nr columns, each stored row by row (dst[p*nr+j] within a panel), with
// columns past nb zero.
func packB[T float32 | float64](dst []T, b strided[T], pc, jc, kb, nb, nr int) {
	for j0 := 0; j0 < nb; j0 += nr {
		w := min(nr, nb-j0)
		panel := dst[j0*kb : j0*kb+nr*kb]
		base := b.off + pc*b.rs + (jc+j0)*b.cs
		switch {
		case b.cs == 1 && w == nr:
			for p := range kb {
				copy(panel[p*nr:p*nr+nr], b.data[base+p*b.rs:base+p*b.rs+nr])
			}
		case b.rs == 1:
			// Transposed b: each column of the panel is contiguous.
			if !fastInterleave(panel, b.data, base, b.cs, w, nr, kb) {
				interleave(panel, b.data, base, b.cs, w, nr, kb)
			}
		default:
			for p := range kb {
				o := base + p*b.rs
				row := panel[p*nr : p*nr+nr]
				for j := range w {
					row[j] = b.data[o+j*b.cs]
				}
			}
			zeroRows(panel, w, nr, kb)
		}
	}
}

// zeroRows clears lanes [used, width) of every one of kb groups in panel.
func zeroRows[T float32 | float64](panel []T, used, width, kb int) {
	if used == width {
		return
	}
	for p := range kb {
		clear(panel[p*width+used : p*width+width])
	}
}

// interleaveF32, where set, packs width full float32 lanes into a panel
// (see interleave) and reports whether it did.
var interleaveF32 func(panel, data []float32, base, ld, width, kb int) bool

// interleaveLanesF32, where set, packs the first lanes lanes (a multiple
// of 8) of a panel of width lanes, kb groups, and reports whether it did.
var interleaveLanesF32 func(panel, data []float32, base, ld, lanes, width, kb int) bool

// fastInterleaveLanes is fastInterleave for a panel's first lanes lanes.
func fastInterleaveLanes[T float32 | float64](panel, data []T, base, ld, lanes, width, kb int) bool {
	if interleaveLanesF32 == nil {
		return false
	}
	p, ok := any(panel).([]float32)
	if !ok {
		return false
	}
	return interleaveLanesF32(p, any(data).([]float32), base, ld, lanes, width, kb)
}

func fastInterleave[T float32 | float64](panel, data []T, base, ld, n, width, kb int) bool {
	if n != width || interleaveF32 == nil {
		return false
	}
	p, ok := any(panel).([]float32)
	if !ok {
		return false
	}
	return interleaveF32(p, any(data).([]float32), base, ld, width, kb)
}

// interleave6F32, where set, packs the first rows of a full six-lane
// float32 panel (see interleave) and returns how many; at least one row
// is left to the caller.
var interleave6F32 func(panel, data []float32, base, ld, kb int) int

// interleave packs n contiguous source lanes of kb elements, lane l at
// data[base+l*ld:], into panel as kb groups of width (panel[p*width+l]),
// zero past n. It walks the panel in order and the lanes side by side, so
// writes are sequential and the reads are n sequential streams.
func interleave[T float32 | float64](panel, data []T, base, ld, n, width, kb int) {
	var lanes [32][]T
	if width > len(lanes) {
		panic("cpu: gemm tile wider than 32")
	}
	for l := range n {
		lanes[l] = data[base+l*ld : base+l*ld+kb]
	}
	if n < width {
		zeros := zeroLanes[T](kb)
		for l := n; l < width; l++ {
			lanes[l] = zeros
		}
	}
	if width == 6 {
		// The assembly kernels' A panels: a full one by 6×8 transposes
		// where the CPU has them (three times the speed of the loop
		// below, which packs the rows they leave), else unrolled, about
		// twice as fast as the general loop.
		start := 0
		if p, ok := any(panel).([]float32); ok && n == 6 && interleave6F32 != nil {
			start = interleave6F32(p, any(data).([]float32), base, ld, kb)
		}
		l0, l1, l2, l3, l4, l5 := lanes[0][:kb], lanes[1][:kb], lanes[2][:kb], lanes[3][:kb], lanes[4][:kb], lanes[5][:kb]
		for p := start; p < kb; p++ {
			g := panel[p*6 : p*6+6 : p*6+6]
			g[0], g[1], g[2], g[3], g[4], g[5] = l0[p], l1[p], l2[p], l3[p], l4[p], l5[p]
		}
		return
	}
	for p := range kb {
		group := panel[p*width : p*width+width]
		for l := range group {
			group[l] = lanes[l][p]
		}
	}
}

// The zeros that interleave reads for an edge panel's missing lanes, shared
// and never written, so that edge panels allocate nothing.
var (
	zerosF32 [4096]float32
	zerosF64 [4096]float64
)

// zeroLanes returns kb zeros: a slice of the shared zeros, or for a k
// longer than they are (beyond any kc), a new slice.
func zeroLanes[T float32 | float64](kb int) []T {
	if kb <= len(zerosF32) {
		var z T
		if _, ok := any(z).(float32); ok {
			return any(zerosF32[:kb]).([]T)
		}
		return any(zerosF64[:kb]).([]T)
	}
	return make([]T, kb)
}
