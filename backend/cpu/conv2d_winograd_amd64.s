// AVX2/FMA lane transforms of the Winograd convolution
// (conv2d_winograd.go): eight lanes per YMM register, n a multiple of 8.
// Strides are in elements. Row k of an operand lies k strides past its
// first row; rows 1, 3 and 5 are addressed from a second base one stride
// in, since an index scale of 3 or 5 does not exist.

#include "textflag.h"

// LANES_ARGS loads func(dst *float32, ds int, src *float32, ss, n int):
// dst rows from DI (and R10, one row in) R11 bytes apart, src rows from
// SI (and R9) R8 bytes apart, n in CX.
#define LANES_ARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ ds+8(FP), R11; \
	MOVQ src+16(FP), SI; \
	MOVQ ss+24(FP), R8; \
	MOVQ n+32(FP), CX; \
	SHLQ $2, R11; \
	SHLQ $2, R8; \
	LEAQ (DI)(R11*1), R10; \
	LEAQ (SI)(R8*1), R9

// LOAD6 loads eight lanes of the six src rows into Y0-Y5.
#define LOAD6 \
	VMOVUPS (SI), Y0; \
	VMOVUPS (SI)(R8*1), Y1; \
	VMOVUPS (SI)(R8*2), Y2; \
	VMOVUPS (R9)(R8*2), Y3; \
	VMOVUPS (SI)(R8*4), Y4; \
	VMOVUPS (R9)(R8*4), Y5

// NEXT8 moves every row pointer eight lanes on and counts them off.
#define NEXT8 \
	ADDQ $32, SI; \
	ADDQ $32, R9; \
	ADDQ $32, DI; \
	ADDQ $32, R10; \
	SUBQ $8, CX

// 2, 4, 5 and 8 as float32, broadcast from here.
DATA wgc<>+0(SB)/4, $0x40000000
DATA wgc<>+4(SB)/4, $0x40800000
DATA wgc<>+8(SB)/4, $0x40a00000
DATA wgc<>+12(SB)/4, $0x41000000
GLOBL wgc<>(SB), RODATA|NOPTR, $16

// func inputLanesF32AVX2(dst *float32, ds int, src *float32, ss, n int)
TEXT ·inputLanesF32AVX2(SB), NOSPLIT, $0-40
	LANES_ARGS
	VBROADCASTSS wgc<>+4(SB), Y12 // 4
	VBROADCASTSS wgc<>+8(SB), Y13 // 5

inloop:
	LOAD6

	// t0 = x4 − 4x2, t1 = x3 − 4x1: rows 1 and 2 are t0 ± t1.
	VMOVAPS Y4, Y6
	VFNMADD231PS Y12, Y2, Y6
	VMOVAPS Y3, Y7
	VFNMADD231PS Y12, Y1, Y7

	// t2 = x4 − x2, t3 = 2(x3 − x1): rows 3 and 4 are t2 ± t3.
	VSUBPS Y2, Y4, Y8
	VSUBPS Y1, Y3, Y9
	VADDPS Y9, Y9, Y9

	// Row 0 = 4x0 − 5x2 + x4, row 5 = 4x1 − 5x3 + x5.
	VMOVAPS Y4, Y10
	VFMADD231PS Y12, Y0, Y10
	VFNMADD231PS Y13, Y2, Y10
	VMOVAPS Y5, Y11
	VFMADD231PS Y12, Y1, Y11
	VFNMADD231PS Y13, Y3, Y11

	VADDPS Y7, Y6, Y0
	VSUBPS Y7, Y6, Y1
	VADDPS Y9, Y8, Y2
	VSUBPS Y9, Y8, Y3

	VMOVUPS Y10, (DI)
	VMOVUPS Y0, (DI)(R11*1)
	VMOVUPS Y1, (DI)(R11*2)
	VMOVUPS Y2, (R10)(R11*2)
	VMOVUPS Y3, (DI)(R11*4)
	VMOVUPS Y11, (R10)(R11*4)

	NEXT8
	JNZ  inloop
	VZEROUPPER
	RET

// func outputLanesF32AVX2(dst *float32, ds int, src *float32, ss, n int)
TEXT ·outputLanesF32AVX2(SB), NOSPLIT, $0-40
	LANES_ARGS
	VBROADCASTSS wgc<>+0(SB), Y12 // 2
	VBROADCASTSS wgc<>+4(SB), Y13 // 4
	VBROADCASTSS wgc<>+12(SB), Y14 // 8

outloop:
	LOAD6

	VADDPS Y2, Y1, Y6 // a = x1 + x2
	VSUBPS Y2, Y1, Y7 // b = x1 − x2
	VADDPS Y4, Y3, Y8 // c = x3 + x4
	VSUBPS Y4, Y3, Y9 // d = x3 − x4

	VADDPS Y6, Y0, Y0 // row 0 = x0 + a + c
	VADDPS Y8, Y0, Y0
	VMOVAPS Y7, Y1 // row 1 = b + 2d
	VFMADD231PS Y12, Y9, Y1
	VMOVAPS Y6, Y2 // row 2 = a + 4c
	VFMADD231PS Y13, Y8, Y2
	VADDPS Y5, Y7, Y3 // row 3 = b + x5 + 8d
	VFMADD231PS Y14, Y9, Y3

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(R11*1)
	VMOVUPS Y2, (DI)(R11*2)
	VMOVUPS Y3, (R10)(R11*2)

	NEXT8
	JNZ  outloop
	VZEROUPPER
	RET

// GATHER_ROW copies row i of eight lanes' patches: loads eight floats
// at SI + 4·offset for the offsets in AX, BX, CX, DX, R9, R10, R12, R13,
// transposes the 8×8 block and stores its first six columns (positions
// j = 0…5, eight lanes each) R11 bytes apart from DI; then moves DI on
// six positions and SI one input row (R8 bytes).
#define GATHER_ROW \
	VMOVUPS (SI)(AX*4), Y0; \
	VMOVUPS (SI)(BX*4), Y1; \
	VMOVUPS (SI)(CX*4), Y2; \
	VMOVUPS (SI)(DX*4), Y3; \
	VMOVUPS (SI)(R9*4), Y4; \
	VMOVUPS (SI)(R10*4), Y5; \
	VMOVUPS (SI)(R12*4), Y6; \
	VMOVUPS (SI)(R13*4), Y7; \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VUNPCKLPS Y5, Y4, Y12; \
	VUNPCKHPS Y5, Y4, Y13; \
	VUNPCKLPS Y7, Y6, Y14; \
	VUNPCKHPS Y7, Y6, Y15; \
	VSHUFPS $0x44, Y10, Y8, Y0; \
	VSHUFPS $0xEE, Y10, Y8, Y1; \
	VSHUFPS $0x44, Y11, Y9, Y2; \
	VSHUFPS $0xEE, Y11, Y9, Y3; \
	VSHUFPS $0x44, Y14, Y12, Y4; \
	VSHUFPS $0xEE, Y14, Y12, Y5; \
	VSHUFPS $0x44, Y15, Y13, Y6; \
	VSHUFPS $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x20, Y5, Y1, Y9; \
	VPERM2F128 $0x20, Y6, Y2, Y10; \
	VPERM2F128 $0x20, Y7, Y3, Y11; \
	VPERM2F128 $0x31, Y4, Y0, Y12; \
	VPERM2F128 $0x31, Y5, Y1, Y13; \
	VMOVUPS Y8, (DI); \
	VMOVUPS Y9, (DI)(R11*1); \
	VMOVUPS Y10, (DI)(R11*2); \
	LEAQ (DI)(R11*2), DI; \
	ADDQ R11, DI; \
	VMOVUPS Y11, (DI); \
	VMOVUPS Y12, (DI)(R11*1); \
	VMOVUPS Y13, (DI)(R11*2); \
	LEAQ (DI)(R11*2), DI; \
	ADDQ R11, DI; \
	ADDQ R8, SI

// func gatherPatchesF32AVX2(dst *float32, ld int, src *float32, offs *[8]int, sy int)
TEXT ·gatherPatchesF32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ld+8(FP), R11
	MOVQ src+16(FP), SI
	MOVQ offs+24(FP), R8
	MOVQ 0(R8), AX
	MOVQ 8(R8), BX
	MOVQ 16(R8), CX
	MOVQ 24(R8), DX
	MOVQ 32(R8), R9
	MOVQ 40(R8), R10
	MOVQ 48(R8), R12
	MOVQ 56(R8), R13
	MOVQ sy+32(FP), R8
	SHLQ $2, R11
	SHLQ $2, R8
	GATHER_ROW
	GATHER_ROW
	GATHER_ROW
	GATHER_ROW
	GATHER_ROW
	GATHER_ROW
	VZEROUPPER
	RET
