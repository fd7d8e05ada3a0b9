#include "textflag.h"

// func sgdMomentumF32AVX2(p, grad, s *float32, n int, mom, negLR float32)
// For n (a multiple of 8) elements: s = s·mom + grad, then p = s·negLR + p
// with one rounding (torch's buf.mul_(m).add_(g); p.add_(buf, alpha=-lr)).
TEXT ·sgdMomentumF32AVX2(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ s+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS mom+32(FP), Y0
	VBROADCASTSS negLR+36(FP), Y1
	SHLQ $2, CX
	XORQ AX, AX

loop:
	CMPQ AX, CX
	JGE  done
	VMULPS      (DX)(AX*1), Y0, Y2
	VADDPS      (SI)(AX*1), Y2, Y2
	VMOVUPS     Y2, (DX)(AX*1)
	VMOVUPS     (DI)(AX*1), Y3
	VFMADD231PS Y1, Y2, Y3
	VMOVUPS     Y3, (DI)(AX*1)
	ADDQ        $32, AX
	JMP         loop

done:
	VZEROUPPER
	RET
