package cpu

import "unsafe"

// prefetchRows asks the cache for n rows of width bytes, the first at p
// and each stride bytes past the one before (prefetch_amd64.s): a B
// panel's rows in a matrix whose rows lie far apart, which the hardware
// prefetchers (tracking a few pages each) do not follow. A prefetch never
// faults, so rows past the data are harmless.
//
//go:noescape
func prefetchRows(p unsafe.Pointer, stride, n, width int)

// copyRows copies n rows of width bytes (a multiple of 64), the first at
// src and each stride bytes past the one before, back to back into dst
// (prefetch_amd64.s, AVX): a full B panel of the AVX2 and AVX-512
// kernels (64 or 128 bytes a row) without a memmove call per row. Callers
// check hasSIMD.
//
//go:noescape
func copyRows(dst, src unsafe.Pointer, stride, n, width int)
