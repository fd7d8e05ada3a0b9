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
// n is a multiple of 8; r0 and r1 hold 2n elements each; idx gets
// base + 2·i + {0, 1, w, w+1}.
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

loop:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xDD, Y1, Y0, Y3
	VPERMPD $0xD8, Y2, Y2
	VPERMPD $0xD8, Y3, Y3
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VSHUFPS $0x88, Y1, Y0, Y4
	VSHUFPS $0xDD, Y1, Y0, Y5
	VPERMPD $0xD8, Y4, Y4
	VPERMPD $0xD8, Y5, Y5
	VPXOR Y6, Y6, Y6
	TAKE(Y3, Y13)
	TAKE(Y4, Y12)
	TAKE(Y5, Y11)
	VPADDD Y15, Y6, Y6
	VMOVUPS Y2, 0(DI)
	VMOVDQU Y6, 0(R8)
	VPADDD Y14, Y15, Y15
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, CX
	JNZ loop
	VZEROUPPER
	RET
