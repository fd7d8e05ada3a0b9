// depthwiseTapsAVX2 for conv2d_depthwise.go: out[j] = Σ_t w[t]·in[offs[t]+j]
// over nine taps, with the weights broadcast in Y7-Y15 and 32 outputs per
// iteration in four independent accumulators (Y0-Y3), then 8 at a time.

#include "textflag.h"

// TAP4(P, W) adds W times the 32 floats at P+SI into Y0-Y3.
#define TAP4(P, W) \
	VFMADD231PS 0(P)(SI*1), W, Y0; \
	VFMADD231PS 32(P)(SI*1), W, Y1; \
	VFMADD231PS 64(P)(SI*1), W, Y2; \
	VFMADD231PS 96(P)(SI*1), W, Y3

// TAPPTR(I, R) sets R to in + 4·offs[I/8] (in at SI, offs at AX).
#define TAPPTR(I, R) \
	MOVQ I(AX), R; \
	LEAQ (SI)(R*4), R

// func depthwiseTapsAVX2(out, in *float32, offs *[9]int, w *[9]float32, n int)
TEXT ·depthwiseTapsAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ offs+16(FP), AX
	MOVQ w+24(FP), DX
	MOVQ n+32(FP), CX
	// One pointer per tap: in + 4·offs[t], the last one over AX.
	TAPPTR(0, R8)
	TAPPTR(8, R9)
	TAPPTR(16, R10)
	TAPPTR(24, R11)
	TAPPTR(32, R12)
	TAPPTR(40, R13)
	TAPPTR(48, R14)
	TAPPTR(56, BX)
	TAPPTR(64, AX)
	VBROADCASTSS 0(DX), Y7
	VBROADCASTSS 4(DX), Y8
	VBROADCASTSS 8(DX), Y9
	VBROADCASTSS 12(DX), Y10
	VBROADCASTSS 16(DX), Y11
	VBROADCASTSS 20(DX), Y12
	VBROADCASTSS 24(DX), Y13
	VBROADCASTSS 28(DX), Y14
	VBROADCASTSS 32(DX), Y15
	SHLQ $2, CX          // n in bytes
	XORQ SI, SI          // byte offset of the current outputs

loop32:
	LEAQ 128(SI), DX
	CMPQ DX, CX
	JGT  loop8
	VMULPS 0(R8)(SI*1), Y7, Y0
	VMULPS 32(R8)(SI*1), Y7, Y1
	VMULPS 64(R8)(SI*1), Y7, Y2
	VMULPS 96(R8)(SI*1), Y7, Y3
	TAP4(R9, Y8)
	TAP4(R10, Y9)
	TAP4(R11, Y10)
	TAP4(R12, Y11)
	TAP4(R13, Y12)
	TAP4(R14, Y13)
	TAP4(BX, Y14)
	TAP4(AX, Y15)
	VMOVUPS Y0, 0(DI)(SI*1)
	VMOVUPS Y1, 32(DI)(SI*1)
	VMOVUPS Y2, 64(DI)(SI*1)
	VMOVUPS Y3, 96(DI)(SI*1)
	MOVQ DX, SI
	JMP  loop32

loop8:
	CMPQ SI, CX
	JGE  done
	VMULPS 0(R8)(SI*1), Y7, Y0
	VFMADD231PS 0(R9)(SI*1), Y8, Y0
	VFMADD231PS 0(R10)(SI*1), Y9, Y0
	VFMADD231PS 0(R11)(SI*1), Y10, Y0
	VFMADD231PS 0(R12)(SI*1), Y11, Y0
	VFMADD231PS 0(R13)(SI*1), Y12, Y0
	VFMADD231PS 0(R14)(SI*1), Y13, Y0
	VFMADD231PS 0(BX)(SI*1), Y14, Y0
	VFMADD231PS 0(AX)(SI*1), Y15, Y0
	VMOVUPS Y0, 0(DI)(SI*1)
	ADDQ $32, SI
	JMP  loop8

done:
	VZEROUPPER
	RET

// func depthwiseSplitAVX2(even, odd, src *float32, n int)
// even[k] = src[2k], odd[k] = src[2k+1] for k < n, n a positive multiple
// of 8: two loads, two in-lane shuffles and two cross-lane permutes per 16.
TEXT ·depthwiseSplitAVX2(SB), NOSPLIT, $0-32
	MOVQ even+0(FP), DI
	MOVQ odd+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX

split8:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2 // per lane: src 0 2 of Y0, then of Y1
	VSHUFPS $0xDD, Y1, Y0, Y3 // per lane: src 1 3 of Y0, then of Y1
	VPERMPD $0xD8, Y2, Y2     // pairs in order 0 2 1 3: the lanes interleaved back
	VPERMPD $0xD8, Y3, Y3
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 0(DX)
	ADDQ $64, SI
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $8, CX
	JNZ  split8
	VZEROUPPER
	RET
