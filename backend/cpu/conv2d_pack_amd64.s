// AVX2 packing of an implicit-GEMM convolution's B panel (see
// conv2d_pack.go): every kernel tap's row of the panel is a few runs of
// consecutive output pixels, each a contiguous stretch of one input row
// with the padding outside it read as zeros by masked loads.

#include "textflag.h"

// Lane numbers 0..31 for the masks, one per 32-bit half of a load: a
// float32 lane each, and shifted right once, the float64 lanes 0..15 each
// twice (a masked float64 load is two masked 32-bit halves).
DATA convLanes<>+0(SB)/8, $0x0000000100000000
DATA convLanes<>+8(SB)/8, $0x0000000300000002
DATA convLanes<>+16(SB)/8, $0x0000000500000004
DATA convLanes<>+24(SB)/8, $0x0000000700000006
DATA convLanes<>+32(SB)/8, $0x0000000900000008
DATA convLanes<>+40(SB)/8, $0x0000000b0000000a
DATA convLanes<>+48(SB)/8, $0x0000000d0000000c
DATA convLanes<>+56(SB)/8, $0x0000000f0000000e
DATA convLanes<>+64(SB)/8, $0x0000001100000010
DATA convLanes<>+72(SB)/8, $0x0000001300000012
DATA convLanes<>+80(SB)/8, $0x0000001500000014
DATA convLanes<>+88(SB)/8, $0x0000001700000016
DATA convLanes<>+96(SB)/8, $0x0000001900000018
DATA convLanes<>+104(SB)/8, $0x0000001b0000001a
DATA convLanes<>+112(SB)/8, $0x0000001d0000001c
DATA convLanes<>+120(SB)/8, $0x0000001f0000001e
GLOBL convLanes<>(SB), RODATA, $128

// LANE_MASK sets dst to the lanes of one 32-byte load to read: lane
// numbers L at lanes (32-bit halves, shifted right by X9), Y11 the first
// lane's column, Y10 the lanes the segment reads, Y15 wd and Y14 −1:
// dst = (0 ≤ Y11 + L < wd) ∧ (L < Y10). Clobbers Y0, Y1 and Y3.
#define LANE_MASK(lanes, dst) \
	VMOVDQU  lanes, Y0; \
	VPSRLD   X9, Y0, Y0; \
	VPADDD   Y11, Y0, Y1; \
	VPCMPGTD Y14, Y1, dst; \
	VPCMPGTD Y1, Y15, Y3; \
	VPAND    Y3, dst, dst; \
	VPCMPGTD Y0, Y10, Y3; \
	VPAND    Y3, dst, dst

// func convPackRowsAVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, h, wd, shift, rowBytes, stride int, inside bool)
//
// For each of nrows rows r (rows[r] = {off, dy, dx}) and each of nsegs
// segments s (segs[s] = {col, n, base, y0, x0, plain}), writes the lanes
// at panel + r·rowBytes + (col << shift): lane i < n is
// src[base + off + stride·i] (elements of 1 << shift bytes) when row
// y0 + dy lies in [0, h) and column x0 + dx + stride·i in [0, wd), and
// zero otherwise.
//
// A segment whose lanes all lie inside the input row and whose plain flag
// is set (reading stride·rowBytes bytes from its first lane stays inside
// src, and its lanes past n need not be zero because the segments after
// it overwrite them) is copied with plain loads, only as many 32-byte
// stores as its n lanes need; with inside set every segment is such a
// one for every row and nothing is checked (a zero-padded input). Any
// other segment writes all rowBytes bytes from masked loads (a masked
// load costs twice a plain one on Zen), lanes past n zero. Either way a
// segment's stores may run past it into the next segment's lanes, or the
// next row's, which are written after it: the panel needs rowBytes bytes
// of slack at its end. At stride 2 each 32 bytes of the panel come from
// 64 bytes of the input row, whose even elements VSHUFPS (float32) or
// VUNPCKLPD (float64) and VPERMPD gather; the masks then cover the odd
// elements too where they lie inside the row. rowBytes is a multiple of
// 32, at most 128 at stride 1 and 64 at stride 2.
TEXT ·convPackRowsAVX2(SB), NOSPLIT, $8-89
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ nrows+24(FP), R9
	MOVQ shift+64(FP), CX
	LEAQ convLanes<>(SB), R12
	LEAQ -2(CX), R10
	MOVQ R10, X9                    // lane numbers >> (shift − 2)
	VPBROADCASTD wd+56(FP), Y15     // wd in every lane
	VPCMPEQD     Y14, Y14, Y14      // −1 in every lane
	VPXOR        Y13, Y13, Y13      // zero
	TESTQ        R9, R9
	JZ           p_done

p_row:
	MOVQ         0(R8), AX          // off
	VPBROADCASTD 16(R8), Y12        // dx
	MOVQ         segs+32(FP), DX
	MOVQ         nsegs+40(FP), R11

p_seg:
	MOVQ 0(DX), R14                 // where the segment's lanes go: panel + col
	SHLQ CX, R14
	ADDQ DI, R14
	MOVQ 16(DX), R13                // where they come from: src + base + off
	ADDQ AX, R13
	SHLQ CX, R13
	ADDQ SI, R13
	MOVQ 8(DX), BX                  // plain: n << shift bytes to store
	SHLQ CX, BX
	MOVQ $0, masked-8(SP)
	CMPB inside+88(FP), $0
	JNE  p_copy
	MOVQ 24(DX), R10                // row y0 + dy inside [0, h)?
	ADDQ 8(R8), R10
	CMPQ R10, h+48(FP)
	JAE  p_zero
	CMPQ 40(DX), $0
	JEQ  p_masked
	MOVQ 8(DX), R10                 // columns x0 + dx … x0 + dx + stride·(n − 1) inside [0, wd)?
	DECQ R10
	IMULQ stride+80(FP), R10
	MOVQ 32(DX), BX
	ADDQ 16(R8), BX
	JS   p_masked
	ADDQ BX, R10
	CMPQ R10, wd+56(FP)
	JGE  p_masked
	MOVQ 8(DX), BX
	SHLQ CX, BX
	JMP  p_copy

p_masked:
	MOVQ         $1, masked-8(SP)
	VPBROADCASTD 32(DX), Y11        // x0 + dx: the first lane's column
	VPADDD       Y12, Y11, Y11
	MOVQ         8(DX), R10         // stride·n elements to read
	IMULQ        stride+80(FP), R10
	MOVQ         R10, X10
	VPBROADCASTD X10, Y10
	MOVQ         rowBytes+72(FP), BX

p_copy:
	XORQ R10, R10
	CMPQ stride+80(FP), $2
	JEQ  p_chunk2

p_chunk1:
	CMPQ masked-8(SP), $0
	JNE  p_masked1
	VMOVUPS (R13)(R10*1), Y4
	JMP     p_store1

p_masked1:
	LANE_MASK((R12)(R10*1), Y2)
	VMASKMOVPS (R13)(R10*1), Y2, Y4

p_store1:
	VMOVUPS Y4, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, BX
	JB      p_chunk1
	JMP     p_next

p_chunk2:
	CMPQ masked-8(SP), $0
	JNE  p_masked2
	VMOVUPS (R13)(R10*2), Y4
	VMOVUPS 32(R13)(R10*2), Y5
	JMP     p_even

p_masked2:
	LANE_MASK((R12)(R10*2), Y2)
	VMASKMOVPS (R13)(R10*2), Y2, Y4
	LANE_MASK(32(R12)(R10*2), Y2)
	VMASKMOVPS 32(R13)(R10*2), Y2, Y5

p_even:
	CMPQ    CX, $2
	JNE     p_even64
	VSHUFPS $0x88, Y5, Y4, Y6
	JMP     p_store2

p_even64:
	VUNPCKLPD Y5, Y4, Y6

p_store2:
	VPERMPD $0xD8, Y6, Y6
	VMOVUPS Y6, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, BX
	JB      p_chunk2
	JMP     p_next

p_zero:
	XORQ R10, R10

p_zchunk:
	VMOVUPS Y13, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, rowBytes+72(FP)
	JB      p_zchunk

p_next:
	ADDQ $48, DX
	DECQ R11
	JNZ  p_seg
	ADDQ rowBytes+72(FP), DI
	ADDQ $24, R8
	DECQ R9
	JNZ  p_row

p_done:
	VZEROUPPER
	RET
