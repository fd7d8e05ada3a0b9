#include "textflag.h"

// Microkernels for gemm: a 6-row tile of c lives in Y0-Y11 (two YMM per
// row), B's packed row is loaded into Y12/Y13 and each A element broadcast
// into Y14/Y15. K is unrolled by four.

#define ZERO12 \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; VXORPS Y9, Y9, Y9; VXORPS Y10, Y10, Y10; VXORPS Y11, Y11, Y11

#define STEPS(ao, bo) \
	VMOVUPS bo(BX), Y12; \
	VMOVUPS bo+32(BX), Y13; \
	VBROADCASTSS ao(AX), Y14; \
	VBROADCASTSS ao+4(AX), Y15; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VFMADD231PS Y12, Y15, Y2; \
	VFMADD231PS Y13, Y15, Y3; \
	VBROADCASTSS ao+8(AX), Y14; \
	VBROADCASTSS ao+12(AX), Y15; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y6; \
	VFMADD231PS Y13, Y15, Y7; \
	VBROADCASTSS ao+16(AX), Y14; \
	VBROADCASTSS ao+20(AX), Y15; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VFMADD231PS Y12, Y15, Y10; \
	VFMADD231PS Y13, Y15, Y11

#define STEPD(ao, bo) \
	VMOVUPD bo(BX), Y12; \
	VMOVUPD bo+32(BX), Y13; \
	VBROADCASTSD ao(AX), Y14; \
	VBROADCASTSD ao+8(AX), Y15; \
	VFMADD231PD Y12, Y14, Y0; \
	VFMADD231PD Y13, Y14, Y1; \
	VFMADD231PD Y12, Y15, Y2; \
	VFMADD231PD Y13, Y15, Y3; \
	VBROADCASTSD ao+16(AX), Y14; \
	VBROADCASTSD ao+24(AX), Y15; \
	VFMADD231PD Y12, Y14, Y4; \
	VFMADD231PD Y13, Y14, Y5; \
	VFMADD231PD Y12, Y15, Y6; \
	VFMADD231PD Y13, Y15, Y7; \
	VBROADCASTSD ao+32(AX), Y14; \
	VBROADCASTSD ao+40(AX), Y15; \
	VFMADD231PD Y12, Y14, Y8; \
	VFMADD231PD Y13, Y14, Y9; \
	VFMADD231PD Y12, Y15, Y10; \
	VFMADD231PD Y13, Y15, Y11

// Row r of the tile, Y(2r) and Y(2r+1), to c at DI, then DI moves a row on.
#define STORE(op, x, y) \
	op x, (DI); op y, 32(DI); ADDQ R8, DI

// Touch the tile's six rows of c while the k loop runs, so the final
// loads and stores hit L1.
#define PREFETCHC \
	MOVQ DI, SI; \
	PREFETCHT0 (SI); PREFETCHT0 63(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 63(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 63(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 63(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 63(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 63(SI)

#define ACCS(fma, x, y) \
	fma (DI), Y15, x; fma 32(DI), Y15, y; ADDQ R8, DI

// func gemmKernelF32AVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·gemmKernelF32AVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	PREFETCHC
	ZERO12
	MOVQ CX, DX
	SHRQ $2, DX
	ANDQ $3, CX
	TESTQ DX, DX
	JZ   s_tail

s_loop4:
	PREFETCHT0 384(AX)
	STEPS(0, 0)
	STEPS(24, 64)
	PREFETCHT0 448(AX)
	STEPS(48, 128)
	STEPS(72, 192)
	ADDQ $96, AX
	ADDQ $256, BX
	DECQ DX
	JNZ  s_loop4

s_tail:
	TESTQ CX, CX
	JZ    s_done

s_loop1:
	STEPS(0, 0)
	ADDQ $24, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  s_loop1

s_done:
	VBROADCASTSS alpha+40(FP), Y14
	VMULPS Y14, Y0, Y0; VMULPS Y14, Y1, Y1; VMULPS Y14, Y2, Y2; VMULPS Y14, Y3, Y3
	VMULPS Y14, Y4, Y4; VMULPS Y14, Y5, Y5; VMULPS Y14, Y6, Y6; VMULPS Y14, Y7, Y7
	VMULPS Y14, Y8, Y8; VMULPS Y14, Y9, Y9; VMULPS Y14, Y10, Y10; VMULPS Y14, Y11, Y11
	MOVSS   beta+44(FP), X15
	VXORPS  X13, X13, X13
	UCOMISS X13, X15
	JNE     s_beta
	JPS     s_beta
	STORE(VMOVUPS, Y0, Y1)
	STORE(VMOVUPS, Y2, Y3)
	STORE(VMOVUPS, Y4, Y5)
	STORE(VMOVUPS, Y6, Y7)
	STORE(VMOVUPS, Y8, Y9)
	STORE(VMOVUPS, Y10, Y11)
	VZEROUPPER
	RET

s_beta:
	VBROADCASTSS beta+44(FP), Y15
	MOVQ DI, SI
	ACCS(VFMADD231PS, Y0, Y1)
	ACCS(VFMADD231PS, Y2, Y3)
	ACCS(VFMADD231PS, Y4, Y5)
	ACCS(VFMADD231PS, Y6, Y7)
	ACCS(VFMADD231PS, Y8, Y9)
	ACCS(VFMADD231PS, Y10, Y11)
	MOVQ SI, DI
	STORE(VMOVUPS, Y0, Y1)
	STORE(VMOVUPS, Y2, Y3)
	STORE(VMOVUPS, Y4, Y5)
	STORE(VMOVUPS, Y6, Y7)
	STORE(VMOVUPS, Y8, Y9)
	STORE(VMOVUPS, Y10, Y11)
	VZEROUPPER
	RET

// func gemmKernelF64AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)
TEXT ·gemmKernelF64AVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $3, R8
	PREFETCHC
	ZERO12
	MOVQ CX, DX
	SHRQ $2, DX
	ANDQ $3, CX
	TESTQ DX, DX
	JZ   d_tail

d_loop4:
	PREFETCHT0 384(AX)
	STEPD(0, 0)
	PREFETCHT0 448(AX)
	STEPD(48, 64)
	PREFETCHT0 512(AX)
	STEPD(96, 128)
	STEPD(144, 192)
	ADDQ $192, AX
	ADDQ $256, BX
	DECQ DX
	JNZ  d_loop4

d_tail:
	TESTQ CX, CX
	JZ    d_done

d_loop1:
	STEPD(0, 0)
	ADDQ $48, AX
	ADDQ $64, BX
	DECQ CX
	JNZ  d_loop1

d_done:
	VBROADCASTSD alpha+40(FP), Y14
	VMULPD Y14, Y0, Y0; VMULPD Y14, Y1, Y1; VMULPD Y14, Y2, Y2; VMULPD Y14, Y3, Y3
	VMULPD Y14, Y4, Y4; VMULPD Y14, Y5, Y5; VMULPD Y14, Y6, Y6; VMULPD Y14, Y7, Y7
	VMULPD Y14, Y8, Y8; VMULPD Y14, Y9, Y9; VMULPD Y14, Y10, Y10; VMULPD Y14, Y11, Y11
	MOVSD   beta+48(FP), X15
	VXORPD  X13, X13, X13
	UCOMISD X13, X15
	JNE     d_beta
	JPS     d_beta
	STORE(VMOVUPD, Y0, Y1)
	STORE(VMOVUPD, Y2, Y3)
	STORE(VMOVUPD, Y4, Y5)
	STORE(VMOVUPD, Y6, Y7)
	STORE(VMOVUPD, Y8, Y9)
	STORE(VMOVUPD, Y10, Y11)
	VZEROUPPER
	RET

d_beta:
	VBROADCASTSD beta+48(FP), Y15
	MOVQ DI, SI
	ACCS(VFMADD231PD, Y0, Y1)
	ACCS(VFMADD231PD, Y2, Y3)
	ACCS(VFMADD231PD, Y4, Y5)
	ACCS(VFMADD231PD, Y6, Y7)
	ACCS(VFMADD231PD, Y8, Y9)
	ACCS(VFMADD231PD, Y10, Y11)
	MOVQ SI, DI
	STORE(VMOVUPD, Y0, Y1)
	STORE(VMOVUPD, Y2, Y3)
	STORE(VMOVUPD, Y4, Y5)
	STORE(VMOVUPD, Y6, Y7)
	STORE(VMOVUPD, Y8, Y9)
	STORE(VMOVUPD, Y10, Y11)
	VZEROUPPER
	RET

// func packT8F32(dst, src *float32, ld, blocks, width int)
// Transposes blocks 8×8 tiles: tile t takes 8 elements from each of 8
// source lanes (lane l at src+l*ld, elements 8t..8t+7) and writes element
// q of all lanes as 8 consecutive floats at dst + (8t+q)*width floats, the
// layout of a width-wide packed B panel.
TEXT ·packT8F32(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R9
	MOVQ blocks+24(FP), CX
	MOVQ width+32(FP), R12
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	SHLQ $2, R12
	LEAQ (R12)(R12*2), R13
	TESTQ CX, CX
	JZ   t_done

t_loop:
	LEAQ    (SI)(R9*4), R11
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R9*1), Y1
	VMOVUPS (SI)(R9*2), Y2
	VMOVUPS (SI)(R10*1), Y3
	VMOVUPS (R11), Y4
	VMOVUPS (R11)(R9*1), Y5
	VMOVUPS (R11)(R9*2), Y6
	VMOVUPS (R11)(R10*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R12*1)
	VMOVUPS Y10, (DI)(R12*2)
	VMOVUPS Y11, (DI)(R13*1)
	LEAQ    (DI)(R12*4), DI
	VMOVUPS Y12, (DI)
	VMOVUPS Y13, (DI)(R12*1)
	VMOVUPS Y14, (DI)(R12*2)
	VMOVUPS Y15, (DI)(R13*1)
	LEAQ    (DI)(R12*4), DI
	ADDQ $32, SI
	DECQ CX
	JNZ  t_loop

t_done:
	VZEROUPPER
	RET

// AVX-512 kernels: the same 6-row tile twice as wide (6×32 float32, 6×16
// float64) in Z0-Z11, for CPUs whose FMA units are 512 bits wide.

#define ZZERO12 \
	VPXORD Z0, Z0, Z0; VPXORD Z1, Z1, Z1; VPXORD Z2, Z2, Z2; VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; VPXORD Z5, Z5, Z5; VPXORD Z6, Z6, Z6; VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; VPXORD Z9, Z9, Z9; VPXORD Z10, Z10, Z10; VPXORD Z11, Z11, Z11

// ZSTEP is one k step; bcast/fma/mov pick the element type and es is its
// size in bytes.
#define ZSTEP(bcast, fma, mov, es, ao, bo) \
	mov bo(BX), Z12; \
	mov bo+64(BX), Z13; \
	bcast ao(AX), Z14; \
	bcast ao+es(AX), Z15; \
	fma Z12, Z14, Z0; \
	fma Z13, Z14, Z1; \
	fma Z12, Z15, Z2; \
	fma Z13, Z15, Z3; \
	bcast ao+2*es(AX), Z14; \
	bcast ao+3*es(AX), Z15; \
	fma Z12, Z14, Z4; \
	fma Z13, Z14, Z5; \
	fma Z12, Z15, Z6; \
	fma Z13, Z15, Z7; \
	bcast ao+4*es(AX), Z14; \
	bcast ao+5*es(AX), Z15; \
	fma Z12, Z14, Z8; \
	fma Z13, Z14, Z9; \
	fma Z12, Z15, Z10; \
	fma Z13, Z15, Z11

#define ZSTORE(mov, x, y) \
	mov x, (DI); mov y, 64(DI); ADDQ R8, DI

#define ZACCS(fma, x, y) \
	fma (DI), Z15, x; fma 64(DI), Z15, y; ADDQ R8, DI

#define ZPREFETCHC \
	MOVQ DI, SI; \
	PREFETCHT0 (SI); PREFETCHT0 64(SI); PREFETCHT0 127(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 64(SI); PREFETCHT0 127(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 64(SI); PREFETCHT0 127(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 64(SI); PREFETCHT0 127(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 64(SI); PREFETCHT0 127(SI); ADDQ R8, SI; \
	PREFETCHT0 (SI); PREFETCHT0 64(SI); PREFETCHT0 127(SI)

#define ZSCALE(mul) \
	mul Z14, Z0, Z0; mul Z14, Z1, Z1; mul Z14, Z2, Z2; mul Z14, Z3, Z3; \
	mul Z14, Z4, Z4; mul Z14, Z5, Z5; mul Z14, Z6, Z6; mul Z14, Z7, Z7; \
	mul Z14, Z8, Z8; mul Z14, Z9, Z9; mul Z14, Z10, Z10; mul Z14, Z11, Z11

#define ZSTOREALL(mov) \
	ZSTORE(mov, Z0, Z1); ZSTORE(mov, Z2, Z3); ZSTORE(mov, Z4, Z5); \
	ZSTORE(mov, Z6, Z7); ZSTORE(mov, Z8, Z9); ZSTORE(mov, Z10, Z11)

#define ZACCSALL(fma) \
	ZACCS(fma, Z0, Z1); ZACCS(fma, Z2, Z3); ZACCS(fma, Z4, Z5); \
	ZACCS(fma, Z6, Z7); ZACCS(fma, Z8, Z9); ZACCS(fma, Z10, Z11)

// func gemmKernelF32AVX512(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·gemmKernelF32AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	ZPREFETCHC
	ZZERO12
	MOVQ CX, DX
	SHRQ $2, DX
	ANDQ $3, CX
	TESTQ DX, DX
	JZ   zs_tail

zs_loop4:
	PREFETCHT0 384(AX)
	ZSTEP(VBROADCASTSS, VFMADD231PS, VMOVUPS, 4, 0, 0)
	ZSTEP(VBROADCASTSS, VFMADD231PS, VMOVUPS, 4, 24, 128)
	PREFETCHT0 448(AX)
	ZSTEP(VBROADCASTSS, VFMADD231PS, VMOVUPS, 4, 48, 256)
	ZSTEP(VBROADCASTSS, VFMADD231PS, VMOVUPS, 4, 72, 384)
	ADDQ $96, AX
	ADDQ $512, BX
	DECQ DX
	JNZ  zs_loop4

zs_tail:
	TESTQ CX, CX
	JZ    zs_done

zs_loop1:
	ZSTEP(VBROADCASTSS, VFMADD231PS, VMOVUPS, 4, 0, 0)
	ADDQ $24, AX
	ADDQ $128, BX
	DECQ CX
	JNZ  zs_loop1

zs_done:
	VBROADCASTSS alpha+40(FP), Z14
	ZSCALE(VMULPS)
	MOVSS   beta+44(FP), X15
	VXORPS  X13, X13, X13
	UCOMISS X13, X15
	JNE     zs_beta
	JPS     zs_beta
	ZSTOREALL(VMOVUPS)
	VZEROUPPER
	RET

zs_beta:
	VBROADCASTSS beta+44(FP), Z15
	MOVQ DI, SI
	ZACCSALL(VFMADD231PS)
	MOVQ SI, DI
	ZSTOREALL(VMOVUPS)
	VZEROUPPER
	RET

// func gemmKernelF64AVX512(k int, a, b, c *float64, ldc int, alpha, beta float64)
TEXT ·gemmKernelF64AVX512(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	SHLQ $3, R8
	ZPREFETCHC
	ZZERO12
	MOVQ CX, DX
	SHRQ $2, DX
	ANDQ $3, CX
	TESTQ DX, DX
	JZ   zd_tail

zd_loop4:
	PREFETCHT0 384(AX)
	ZSTEP(VBROADCASTSD, VFMADD231PD, VMOVUPD, 8, 0, 0)
	PREFETCHT0 448(AX)
	ZSTEP(VBROADCASTSD, VFMADD231PD, VMOVUPD, 8, 48, 128)
	PREFETCHT0 512(AX)
	ZSTEP(VBROADCASTSD, VFMADD231PD, VMOVUPD, 8, 96, 256)
	ZSTEP(VBROADCASTSD, VFMADD231PD, VMOVUPD, 8, 144, 384)
	ADDQ $192, AX
	ADDQ $512, BX
	DECQ DX
	JNZ  zd_loop4

zd_tail:
	TESTQ CX, CX
	JZ    zd_done

zd_loop1:
	ZSTEP(VBROADCASTSD, VFMADD231PD, VMOVUPD, 8, 0, 0)
	ADDQ $48, AX
	ADDQ $128, BX
	DECQ CX
	JNZ  zd_loop1

zd_done:
	VBROADCASTSD alpha+40(FP), Z14
	ZSCALE(VMULPD)
	MOVSD   beta+48(FP), X15
	VXORPD  X13, X13, X13
	UCOMISD X13, X15
	JNE     zd_beta
	JPS     zd_beta
	ZSTOREALL(VMOVUPD)
	VZEROUPPER
	RET

zd_beta:
	VBROADCASTSD beta+48(FP), Z15
	MOVQ DI, SI
	ZACCSALL(VFMADD231PD)
	MOVQ SI, DI
	ZSTOREALL(VMOVUPD)
	VZEROUPPER
	RET

// func packT6F32(dst, src *float32, ld, blocks int)
// packT8F32 for an A panel of six lanes: block t takes 8 elements from
// each of 6 source lanes (lane l at src+l*ld, elements 8t..8t+7) and
// writes element q of the six as 6 consecutive floats at dst + (8t+q)*6.
// The transpose is packT8F32's with lanes 6 and 7 zero; each group is
// stored as 8 floats, in order, so that the next group's store overwrites
// the two extra, and the last block's spill 2 floats past its 48: the
// caller leaves at least one row after the blocks for that.
TEXT ·packT6F32(SB), NOSPLIT, $0-32
	MOVQ   dst+0(FP), DI
	MOVQ   src+8(FP), SI
	MOVQ   ld+16(FP), R9
	MOVQ   blocks+24(FP), CX
	SHLQ   $2, R9
	LEAQ   (R9)(R9*2), R10
	VXORPS Y6, Y6, Y6
	TESTQ  CX, CX
	JZ     t6_done

t6_loop:
	LEAQ       (SI)(R9*4), R11
	VMOVUPS    (SI), Y0
	VMOVUPS    (SI)(R9*1), Y1
	VMOVUPS    (SI)(R9*2), Y2
	VMOVUPS    (SI)(R10*1), Y3
	VMOVUPS    (R11), Y4
	VMOVUPS    (R11)(R9*1), Y5
	VUNPCKLPS  Y1, Y0, Y8
	VUNPCKHPS  Y1, Y0, Y9
	VUNPCKLPS  Y3, Y2, Y10
	VUNPCKHPS  Y3, Y2, Y11
	VUNPCKLPS  Y5, Y4, Y12
	VUNPCKHPS  Y5, Y4, Y13
	VSHUFPS    $0x44, Y10, Y8, Y0  // lanes 0-3 of q=0 | q=4
	VSHUFPS    $0xEE, Y10, Y8, Y1  // q=1 | q=5
	VSHUFPS    $0x44, Y11, Y9, Y2  // q=2 | q=6
	VSHUFPS    $0xEE, Y11, Y9, Y3  // q=3 | q=7
	VSHUFPS    $0x44, Y6, Y12, Y4  // lanes 4, 5 and two zeros
	VSHUFPS    $0xEE, Y6, Y12, Y5
	VSHUFPS    $0x44, Y6, Y13, Y7
	VSHUFPS    $0xEE, Y6, Y13, Y14
	VPERM2F128 $0x20, Y4, Y0, Y8   // q=0
	VPERM2F128 $0x20, Y5, Y1, Y9   // q=1
	VPERM2F128 $0x20, Y7, Y2, Y10  // q=2
	VPERM2F128 $0x20, Y14, Y3, Y11 // q=3
	VPERM2F128 $0x31, Y4, Y0, Y12  // q=4
	VPERM2F128 $0x31, Y5, Y1, Y13  // q=5
	VPERM2F128 $0x31, Y7, Y2, Y15  // q=6
	VPERM2F128 $0x31, Y14, Y3, Y0  // q=7
	VMOVUPS    Y8, (DI)
	VMOVUPS    Y9, 24(DI)
	VMOVUPS    Y10, 48(DI)
	VMOVUPS    Y11, 72(DI)
	VMOVUPS    Y12, 96(DI)
	VMOVUPS    Y13, 120(DI)
	VMOVUPS    Y15, 144(DI)
	VMOVUPS    Y0, 168(DI)
	ADDQ       $192, DI
	ADDQ       $32, SI
	DECQ       CX
	JNZ        t6_loop

t6_done:
	VZEROUPPER
	RET
