#include "textflag.h"

// func prefetchRows(p unsafe.Pointer, stride, n, width int)
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), AX
	MOVQ stride+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ width+24(FP), DX
	DECQ DX
	TESTQ CX, CX
	JLE  done

row:
	XORQ R8, R8

line:
	PREFETCHT1 (AX)(R8*1)
	ADDQ $64, R8
	CMPQ R8, DX
	JLE  line
	PREFETCHT1 (AX)(DX*1)
	ADDQ BX, AX
	DECQ CX
	JNZ  row

done:
	RET

// func copyRows(dst, src unsafe.Pointer, stride, n, width int)
TEXT ·copyRows(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ width+32(FP), DX
	TESTQ CX, CX
	JLE  done

row:
	XORQ R8, R8

chunk:
	VMOVUPS (SI)(R8*1), Y0
	VMOVUPS 32(SI)(R8*1), Y1
	VMOVUPS Y0, (DI)(R8*1)
	VMOVUPS Y1, 32(DI)(R8*1)
	ADDQ $64, R8
	CMPQ R8, DX
	JLT  chunk
	ADDQ BX, SI
	ADDQ DX, DI
	DECQ CX
	JNZ  row
	VZEROUPPER

done:
	RET
