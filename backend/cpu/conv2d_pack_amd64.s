// AVX2 packing of an implicit-GEMM convolution's B panel (see
// conv2d_pack.go): every kernel tap's row of the panel is a few runs of
// consecutive output pixels, each a contiguous stretch of one input row
// with the padding outside it read as zeros by masked loads.

#include "textflag.h"

// Lane numbers for the masks, one per 32-bit half: float32 lanes 0..31,
// and float64 lanes 0..15 each twice (a masked float64 load is two masked
// 32-bit halves).
DATA convLanes32<>+0(SB)/8, $0x0000000100000000
DATA convLanes32<>+8(SB)/8, $0x0000000300000002
DATA convLanes32<>+16(SB)/8, $0x0000000500000004
DATA convLanes32<>+24(SB)/8, $0x0000000700000006
DATA convLanes32<>+32(SB)/8, $0x0000000900000008
DATA convLanes32<>+40(SB)/8, $0x0000000b0000000a
DATA convLanes32<>+48(SB)/8, $0x0000000d0000000c
DATA convLanes32<>+56(SB)/8, $0x0000000f0000000e
DATA convLanes32<>+64(SB)/8, $0x0000001100000010
DATA convLanes32<>+72(SB)/8, $0x0000001300000012
DATA convLanes32<>+80(SB)/8, $0x0000001500000014
DATA convLanes32<>+88(SB)/8, $0x0000001700000016
DATA convLanes32<>+96(SB)/8, $0x0000001900000018
DATA convLanes32<>+104(SB)/8, $0x0000001b0000001a
DATA convLanes32<>+112(SB)/8, $0x0000001d0000001c
DATA convLanes32<>+120(SB)/8, $0x0000001f0000001e
GLOBL convLanes32<>(SB), RODATA, $128

DATA convLanes64<>+0(SB)/8, $0x0000000000000000
DATA convLanes64<>+8(SB)/8, $0x0000000100000001
DATA convLanes64<>+16(SB)/8, $0x0000000200000002
DATA convLanes64<>+24(SB)/8, $0x0000000300000003
DATA convLanes64<>+32(SB)/8, $0x0000000400000004
DATA convLanes64<>+40(SB)/8, $0x0000000500000005
DATA convLanes64<>+48(SB)/8, $0x0000000600000006
DATA convLanes64<>+56(SB)/8, $0x0000000700000007
DATA convLanes64<>+64(SB)/8, $0x0000000800000008
DATA convLanes64<>+72(SB)/8, $0x0000000900000009
DATA convLanes64<>+80(SB)/8, $0x0000000a0000000a
DATA convLanes64<>+88(SB)/8, $0x0000000b0000000b
DATA convLanes64<>+96(SB)/8, $0x0000000c0000000c
DATA convLanes64<>+104(SB)/8, $0x0000000d0000000d
DATA convLanes64<>+112(SB)/8, $0x0000000e0000000e
DATA convLanes64<>+120(SB)/8, $0x0000000f0000000f
GLOBL convLanes64<>(SB), RODATA, $128

// func convPackRowsAVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, h, wd, shift, rowBytes int)
//
// For each of nrows rows r (rows[r] = {off, dy, dx}) and each of nsegs
// segments s (segs[s] = {col, n, base, y0, x0, plain}), writes rowBytes bytes at
// panel + r·rowBytes + (col << shift): lane i < n is
// src[base + off + i] (elements of 1 << shift bytes) when row y0 + dy lies
// in [0, h) and column x0 + dx + i in [0, wd), and zero otherwise, lanes
// past n too. The write runs up to rowBytes − (col << shift) bytes past
// the segment into the next segment's lanes, or the next row's, which are
// written after it: the panel needs rowBytes bytes of slack at its end.
// rowBytes is a multiple of 32 and at most 128. A segment whose lanes all
// lie inside the input row is copied with plain loads (a masked load costs
// twice as much on Zen) when its plain flag says that reading rowBytes
// bytes from its first lane stays inside src and that its lanes past n
// need not be zero (other segments overwrite them).
TEXT ·convPackRowsAVX2(SB), NOSPLIT, $0-80
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ nrows+24(FP), R9
	MOVQ shift+64(FP), CX
	LEAQ convLanes32<>(SB), R12
	CMPQ CX, $2
	JEQ  p_lanes
	LEAQ convLanes64<>(SB), R12

p_lanes:
	VPBROADCASTD wd+56(FP), Y15     // wd in every lane
	VPCMPEQD     Y14, Y14, Y14      // −1 in every lane
	VPXOR        Y13, Y13, Y13      // zero
	TESTQ        R9, R9
	JZ           p_done

p_row:
	MOVQ         0(R8), AX          // off
	MOVQ         8(R8), BX          // dy
	VPBROADCASTD 16(R8), Y12        // dx
	MOVQ         segs+32(FP), DX
	MOVQ         nsegs+40(FP), R11

p_seg:
	MOVQ 0(DX), R14                 // col
	SHLQ CX, R14
	ADDQ DI, R14                    // where the segment's lanes go
	MOVQ 24(DX), R10                // y0 + dy inside [0, h)?
	ADDQ BX, R10
	CMPQ R10, h+48(FP)
	JAE  p_zero
	MOVQ 16(DX), R13                // src + (base + off) elements
	ADDQ AX, R13
	SHLQ CX, R13
	ADDQ SI, R13
	CMPQ 40(DX), $0                 // plain loads allowed?
	JEQ  p_masked
	MOVQ 32(DX), R10                // columns x0 + dx .. x0 + dx + n − 1 inside [0, wd)?
	ADDQ 16(R8), R10
	JS   p_masked
	ADDQ 8(DX), R10
	CMPQ R10, wd+56(FP)
	JGT  p_masked
	XORQ R10, R10

p_plain:
	VMOVUPS (R13)(R10*1), Y4
	VMOVUPS Y4, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, rowBytes+72(FP)
	JB      p_plain
	JMP     p_next

p_masked:
	VPBROADCASTD 32(DX), Y11        // x0 + dx: the first lane's column
	VPADDD       Y12, Y11, Y11
	VPBROADCASTD 8(DX), Y10         // n
	XORQ         R10, R10

p_chunk:
	VMOVDQU    (R12)(R10*1), Y0     // lane numbers L
	VPADDD     Y11, Y0, Y1          // column of lane L
	VPCMPGTD   Y14, Y1, Y2          // column ≥ 0
	VPCMPGTD   Y1, Y15, Y3          // column < wd
	VPAND      Y3, Y2, Y2
	VPCMPGTD   Y0, Y10, Y3          // L < n
	VPAND      Y3, Y2, Y2
	VMASKMOVPS (R13)(R10*1), Y2, Y4
	VMOVUPS    Y4, (R14)(R10*1)
	ADDQ       $32, R10
	CMPQ       R10, rowBytes+72(FP)
	JB         p_chunk
	JMP        p_next

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

// func convPackRows2AVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, h, wd, shift, rowBytes int)
//
// convPackRowsAVX2 for a stride of 2 along the row: lane i of a segment
// is src[base + off + 2i]. Each 32 bytes of the panel row come from 64
// bytes of the input row, two loads masked by the columns they read (the
// odd elements, dropped by the shuffle, only need to lie inside src),
// whose even elements are gathered by VSHUFPS (float32) or VUNPCKLPD
// (float64) and VPERMPD. rowBytes is 32 or 64. A segment's plain flag
// says that reading 2·rowBytes bytes from its first lane stays in src.
TEXT ·convPackRows2AVX2(SB), NOSPLIT, $0-80
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ nrows+24(FP), R9
	MOVQ shift+64(FP), CX
	LEAQ convLanes32<>(SB), R12
	CMPQ CX, $2
	JEQ  q_lanes
	LEAQ convLanes64<>(SB), R12

q_lanes:
	VPBROADCASTD wd+56(FP), Y15
	VPCMPEQD     Y14, Y14, Y14
	VPXOR        Y13, Y13, Y13
	TESTQ        R9, R9
	JZ           q_done

q_row:
	MOVQ         0(R8), AX
	MOVQ         8(R8), BX
	VPBROADCASTD 16(R8), Y12
	MOVQ         segs+32(FP), DX
	MOVQ         nsegs+40(FP), R11

q_seg:
	MOVQ 0(DX), R14
	SHLQ CX, R14
	ADDQ DI, R14
	MOVQ 24(DX), R10
	ADDQ BX, R10
	CMPQ R10, h+48(FP)
	JAE  q_zero
	MOVQ 16(DX), R13
	ADDQ AX, R13
	SHLQ CX, R13
	ADDQ SI, R13
	CMPQ 40(DX), $0
	JEQ  q_masked
	MOVQ 32(DX), R10                // columns x0 + dx .. x0 + dx + 2(n − 1) inside [0, wd)?
	ADDQ 16(R8), R10
	JS   q_masked
	ADDQ 8(DX), R10
	ADDQ 8(DX), R10
	SUBQ $1, R10
	CMPQ R10, wd+56(FP)
	JGT  q_masked
	XORQ R10, R10

q_plain:
	VMOVUPS (R13)(R10*2), Y4
	VMOVUPS 32(R13)(R10*2), Y5
	CMPQ    CX, $2
	JNE     q_plain64
	VSHUFPS $0x88, Y5, Y4, Y6
	JMP     q_plainstore

q_plain64:
	VUNPCKLPD Y5, Y4, Y6

q_plainstore:
	VPERMPD $0xD8, Y6, Y6
	VMOVUPS Y6, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, rowBytes+72(FP)
	JB      q_plain
	JMP     q_next

q_masked:
	VPBROADCASTD 32(DX), Y11        // x0 + dx: the first element's column
	VPADDD       Y12, Y11, Y11
	VPBROADCASTD 8(DX), Y10         // 2n elements
	VPADDD       Y10, Y10, Y10
	XORQ         R10, R10

q_chunk:
	VMOVDQU    (R12)(R10*2), Y0     // element numbers of the first load
	VPADDD     Y11, Y0, Y1
	VPCMPGTD   Y14, Y1, Y2
	VPCMPGTD   Y1, Y15, Y3
	VPAND      Y3, Y2, Y2
	VPCMPGTD   Y0, Y10, Y3
	VPAND      Y3, Y2, Y2
	VMASKMOVPS (R13)(R10*2), Y2, Y4
	VMOVDQU    32(R12)(R10*2), Y0   // and of the second
	VPADDD     Y11, Y0, Y1
	VPCMPGTD   Y14, Y1, Y2
	VPCMPGTD   Y1, Y15, Y3
	VPAND      Y3, Y2, Y2
	VPCMPGTD   Y0, Y10, Y3
	VPAND      Y3, Y2, Y2
	VMASKMOVPS 32(R13)(R10*2), Y2, Y5
	CMPQ       CX, $2
	JNE        q_masked64
	VSHUFPS    $0x88, Y5, Y4, Y6
	JMP        q_maskedstore

q_masked64:
	VUNPCKLPD Y5, Y4, Y6

q_maskedstore:
	VPERMPD $0xD8, Y6, Y6
	VMOVUPS Y6, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, rowBytes+72(FP)
	JB      q_chunk
	JMP     q_next

q_zero:
	XORQ R10, R10

q_zchunk:
	VMOVUPS Y13, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, rowBytes+72(FP)
	JB      q_zchunk

q_next:
	ADDQ $48, DX
	DECQ R11
	JNZ  q_seg
	ADDQ rowBytes+72(FP), DI
	ADDQ $24, R8
	DECQ R9
	JNZ  q_row

q_done:
	VZEROUPPER
	RET

// func convPackPlainAVX2(panel, src unsafe.Pointer, rows *convRow, nrows int, segs *convSeg, nsegs, shift, stride, rowBytes int)
//
// convPackRowsAVX2 (stride 1) or convPackRows2AVX2 (stride 2) for a
// panel whose segments are all inside the input for every row and plain
// (a zero-padded input): no bounds, no masks, and only as many 32-byte
// stores per segment as its n lanes need, the rest of the row being
// written by the segments after it.
TEXT ·convPackPlainAVX2(SB), NOSPLIT, $0-72
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ nrows+24(FP), R9
	MOVQ shift+48(FP), CX
	MOVQ stride+56(FP), BX
	TESTQ R9, R9
	JZ    l_done

l_row:
	MOVQ 0(R8), AX                  // off
	MOVQ segs+32(FP), DX
	MOVQ nsegs+40(FP), R11

l_seg:
	MOVQ 0(DX), R14                 // panel + (col << shift)
	SHLQ CX, R14
	ADDQ DI, R14
	MOVQ 16(DX), R13                // src + (base + off) << shift
	ADDQ AX, R13
	SHLQ CX, R13
	ADDQ SI, R13
	MOVQ 8(DX), R12                 // n << shift: bytes to write
	SHLQ CX, R12
	XORQ R10, R10
	CMPQ BX, $2
	JEQ  l_chunk2

l_chunk1:
	VMOVUPS (R13)(R10*1), Y4
	VMOVUPS Y4, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, R12
	JB      l_chunk1
	JMP     l_next

l_chunk2:
	VMOVUPS (R13)(R10*2), Y4
	VMOVUPS 32(R13)(R10*2), Y5
	CMPQ    CX, $2
	JNE     l_chunk2d
	VSHUFPS $0x88, Y5, Y4, Y6
	JMP     l_chunk2s

l_chunk2d:
	VUNPCKLPD Y5, Y4, Y6

l_chunk2s:
	VPERMPD $0xD8, Y6, Y6
	VMOVUPS Y6, (R14)(R10*1)
	ADDQ    $32, R10
	CMPQ    R10, R12
	JB      l_chunk2

l_next:
	ADDQ $48, DX
	DECQ R11
	JNZ  l_seg
	ADDQ rowBytes+64(FP), DI
	ADDQ $24, R8
	DECQ R9
	JNZ  l_row

l_done:
	VZEROUPPER
	RET
