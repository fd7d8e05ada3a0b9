// Max pooling of 2×2 windows at stride 2 (pool_amd64.go), eight outputs
// at a time: the even and odd columns of two input rows are the four
// candidates of each window, compared in window order with the scalar
// rule (a later candidate wins when it is greater, or NaN over a number)
// and blended, values and index offsets alike.

#include "textflag.h"

// Lane i of pool2x2Cols is 2·i, the column of output i's window.
DATA pool2x2Cols<>+0(SB)/4, $0
DATA pool2x2Cols<>+4(SB)/4, $2
DATA pool2x2Cols<>+8(SB)/4, $4
DATA pool2x2Cols<>+12(SB)/4, $6
DATA pool2x2Cols<>+16(SB)/4, $8
DATA pool2x2Cols<>+20(SB)/4, $10
DATA pool2x2Cols<>+24(SB)/4, $12
DATA pool2x2Cols<>+28(SB)/4, $14
GLOBL pool2x2Cols<>(SB), RODATA|NOPTR, $32

// 16 all-ones lanes then 16 zero lanes: the 8 lanes from pool2x2Mask+4·(16−k)
// enable the first k, for a row's last, partial group.
DATA pool2x2Mask<>+0(SB)/8, $-1
DATA pool2x2Mask<>+8(SB)/8, $-1
DATA pool2x2Mask<>+16(SB)/8, $-1
DATA pool2x2Mask<>+24(SB)/8, $-1
DATA pool2x2Mask<>+32(SB)/8, $-1
DATA pool2x2Mask<>+40(SB)/8, $-1
DATA pool2x2Mask<>+48(SB)/8, $-1
DATA pool2x2Mask<>+56(SB)/8, $-1
DATA pool2x2Mask<>+64(SB)/8, $0
DATA pool2x2Mask<>+72(SB)/8, $0
DATA pool2x2Mask<>+80(SB)/8, $0
DATA pool2x2Mask<>+88(SB)/8, $0
DATA pool2x2Mask<>+96(SB)/8, $0
DATA pool2x2Mask<>+104(SB)/8, $0
DATA pool2x2Mask<>+112(SB)/8, $0
DATA pool2x2Mask<>+120(SB)/8, $0
GLOBL pool2x2Mask<>(SB), RODATA|NOPTR, $128

// MASK loads into Y the mask enabling the first K lanes (K in a
// register, clobbered), using R11 and R12.
#define MASK(K, Y) \
	LEAQ pool2x2Mask<>+64(SB), R11; \
	SHLQ $2, K; \
	MOVQ R11, R12; \
	SUBQ K, R12; \
	VMOVDQU (R12), Y

// POOL8 pools the candidates in Y2-Y5 into Y2 (values) and Y6 (indices).
#define POOL8 \
	VSHUFPS $0x88, Y1, Y0, Y2; \
	VSHUFPS $0xDD, Y1, Y0, Y3; \
	VPERMPD $0xD8, Y2, Y2; \
	VPERMPD $0xD8, Y3, Y3; \
	VSHUFPS $0x88, Y10, Y9, Y4; \
	VSHUFPS $0xDD, Y10, Y9, Y5; \
	VPERMPD $0xD8, Y4, Y4; \
	VPERMPD $0xD8, Y5, Y5; \
	VPXOR Y6, Y6, Y6; \
	TAKE(Y3, Y13); \
	TAKE(Y4, Y12); \
	TAKE(Y5, Y11); \
	VPADDD Y15, Y6, Y6

// TAKE blends candidate V (index offset OFF) into the best value Y2 and
// its offset Y6 where V > Y2, or V is NaN and Y2 is not.
#define TAKE(V, OFF) \
	VCMPPS $0x1E, Y2, V, Y7; \
	VCMPPS $3, V, V, Y8; \
	VCMPPS $7, Y2, Y2, Y9; \
	VANDPS Y9, Y8, Y8; \
	VORPS Y8, Y7, Y7; \
	VBLENDVPS Y7, V, Y2, Y2; \
	VBLENDVPS Y7, OFF, Y6, Y6

// func maxPool2x2F32AVX2(dst *float32, idx *int32, r0, r1 *float32, n int, base, w int32)
// r0 and r1 hold 2n elements each (n ≥ 1); idx gets base + 2·i +
// {0, 1, w, w+1}.
TEXT ·maxPool2x2F32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ idx+8(FP), R8
	MOVQ r0+16(FP), SI
	MOVQ r1+24(FP), DX
	MOVQ n+32(FP), CX
	MOVL base+40(FP), AX
	MOVL AX, X15
	VPBROADCASTD X15, Y15
	VPADDD pool2x2Cols<>(SB), Y15, Y15
	MOVL $16, AX
	MOVL AX, X14
	VPBROADCASTD X14, Y14
	MOVL $1, AX
	MOVL AX, X13
	VPBROADCASTD X13, Y13
	MOVL w+44(FP), AX
	MOVL AX, X12
	VPBROADCASTD X12, Y12
	VPADDD Y13, Y12, Y11

	CMPQ CX, $8
	JLT tail

loop:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 0(DX), Y9
	VMOVUPS 32(DX), Y10
	POOL8
	VMOVUPS Y2, 0(DI)
	VMOVDQU Y6, 0(R8)
	VPADDD Y14, Y15, Y15
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, CX
	CMPQ CX, $8
	JGE loop

tail:
	// The last CX < 8 windows: masked loads of their 2·CX columns
	// (masked-off lanes read nothing and give 0), masked stores.
	TESTQ CX, CX
	JZ done
	MOVQ CX, AX
	SHLQ $1, AX
	MOVQ $8, BX
	CMPQ AX, BX
	CMOVQLT AX, BX
	MASK(BX, Y7)
	MOVQ AX, R9
	SUBQ $8, R9
	XORQ R10, R10
	CMPQ R9, R10
	CMOVQLT R10, R9
	MASK(R9, Y8)
	VMASKMOVPS 0(SI), Y7, Y0
	VMASKMOVPS 32(SI), Y8, Y1
	VMASKMOVPS 0(DX), Y7, Y9
	VMASKMOVPS 32(DX), Y8, Y10
	POOL8
	MASK(CX, Y7)
	VMASKMOVPS Y2, Y7, 0(DI)
	VPMASKMOVD Y6, Y7, 0(R8)

done:
	VZEROUPPER
	RET
