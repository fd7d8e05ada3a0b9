package cpu

import "unsafe"

// prefetchRows asks for n rows of width bytes, the first at p and each
// stride bytes past the one before, to be brought into L2
// (prefetch_amd64.s, PREFETCHT1): a B panel's rows in a matrix whose rows
// lie far apart, which the hardware prefetchers (tracking a few pages
// each) do not follow. L2 rather than L1, where the panel being
// multiplied (16 KB for the AVX2 kernels, 32 KB for AVX-512's) must stay;
// the copy out of L2 is a few hundred cycles against some 17000 of
// arithmetic per panel. A prefetch never faults, so rows past the data
// are harmless.
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
