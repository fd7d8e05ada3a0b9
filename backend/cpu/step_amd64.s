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

// Adam's float32 update, one vector of elements at a time. k points at
// the update's constants (adamConsts, in this order): scale, wd, shrink,
// β₁, 1−β₁, β₂, 1−β₂, −lr/bc₁, √bc₂, eps. flags: 1 scales the gradient,
// 2 adds coupled weight decay to it, 4 shrinks the parameter (AdamW).
// Per element, each operation rounded once as torch's vectorized ops do:
//   g = g·scale;  g = p·wd + g (fused);  p = p·shrink
//   m = g·(1−β₁) + m·β₁ (fused);  v = (1−β₂)·g·g + v·β₂ (last one fused)
//   p = p + (−lr/bc₁·m) / (√v/√bc₂ + eps)
#define ADAM_BODY(G, P, M, V, T1, T2, SCALE, WD, SHRINK, B1, C1, B2, C2, NEGSTEP, BC2, EPS) \
	VMOVUPS     (SI)(AX*1), G        \
	VMOVUPS     (DI)(AX*1), P        \
	TESTQ       $1, R8               \
	JZ          2(PC)                \
	VMULPS      SCALE, G, G          \
	TESTQ       $2, R8               \
	JZ          2(PC)                \
	VFMADD231PS WD, P, G             \
	TESTQ       $4, R8               \
	JZ          2(PC)                \
	VMULPS      SHRINK, P, P         \
	VMULPS      (DX)(AX*1), B1, M    \
	VFMADD231PS C1, G, M             \
	VMOVUPS     M, (DX)(AX*1)        \
	VMULPS      (R9)(AX*1), B2, V    \
	VMULPS      C2, G, T1            \
	VFMADD231PS T1, G, V             \
	VMOVUPS     V, (R9)(AX*1)        \
	VSQRTPS     V, T1                \
	VDIVPS      BC2, T1, T1          \
	VADDPS      EPS, T1, T1          \
	VMULPS      NEGSTEP, M, T2       \
	VDIVPS      T1, T2, T2           \
	VADDPS      T2, P, P             \
	VMOVUPS     P, (DI)(AX*1)

// func adamF32AVX2(p, grad, m, v *float32, n int, k *adamConsts, flags int)
// n is a multiple of 8.
TEXT ·adamF32AVX2(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), BX
	MOVQ flags+48(FP), R8
	VBROADCASTSS 0(BX), Y6
	VBROADCASTSS 4(BX), Y7
	VBROADCASTSS 8(BX), Y8
	VBROADCASTSS 12(BX), Y9
	VBROADCASTSS 16(BX), Y10
	VBROADCASTSS 20(BX), Y11
	VBROADCASTSS 24(BX), Y12
	VBROADCASTSS 28(BX), Y13
	VBROADCASTSS 32(BX), Y14
	VBROADCASTSS 36(BX), Y15
	SHLQ $2, CX
	XORQ AX, AX

adam2loop:
	CMPQ AX, CX
	JGE  adam2done
	ADAM_BODY(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	ADDQ $32, AX
	JMP  adam2loop

adam2done:
	VZEROUPPER
	RET

// func adamF32AVX512(p, grad, m, v *float32, n int, k *adamConsts, flags int)
// n is a multiple of 16.
TEXT ·adamF32AVX512(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), BX
	MOVQ flags+48(FP), R8
	VBROADCASTSS 0(BX), Z16
	VBROADCASTSS 4(BX), Z17
	VBROADCASTSS 8(BX), Z18
	VBROADCASTSS 12(BX), Z19
	VBROADCASTSS 16(BX), Z20
	VBROADCASTSS 20(BX), Z21
	VBROADCASTSS 24(BX), Z22
	VBROADCASTSS 28(BX), Z23
	VBROADCASTSS 32(BX), Z24
	VBROADCASTSS 36(BX), Z25
	SHLQ $2, CX
	XORQ AX, AX

adam5loop:
	CMPQ AX, CX
	JGE  adam5done
	ADAM_BODY(Z0, Z1, Z2, Z3, Z4, Z5, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25)
	ADDQ $64, AX
	JMP  adam5loop

adam5done:
	VZEROUPPER
	RET

// RMSProp's and Adagrad's float32 updates. k points at rmsConsts: scale,
// wd, α, 1−α, momentum, −lr, eps. flags: 1 scales the gradient, 2 adds
// coupled weight decay, 4 centers (RMSProp), 8 keeps a momentum buffer
// (RMSProp). Each operation rounds once, as torch's vectorized ops do:
//   RMSProp: v = (1−α)·g·g + v·α (last fused); with centering
//     a = g·(1−α) + a·α (fused), d = √(v − a·a) (fused), else d = √v;
//     d += eps; with momentum b = b·mom + g/d, p = b·(−lr) + p (fused),
//     else p = p + (−lr·g)/d.
//   Adagrad: s = g·g + s (fused); p = p + (−lr·g)/(√s + eps).
#define OPT_GRAD(G, P, SCALE, WD) \
	VMOVUPS     (SI)(AX*1), G \
	VMOVUPS     (DI)(AX*1), P \
	TESTQ       $1, R8        \
	JZ          2(PC)         \
	VMULPS      SCALE, G, G   \
	TESTQ       $2, R8        \
	JZ          2(PC)         \
	VFMADD231PS WD, P, G

#define RMSPROP_BODY(G, P, V, T1, T2, A, B, SCALE, WD, ALPHA, C, MOM, NEGLR, EPS) \
	OPT_GRAD(G, P, SCALE, WD)            \
	VMULPS       (DX)(AX*1), ALPHA, V    \
	VMULPS       C, G, T1                \
	VFMADD231PS  T1, G, V                \
	VMOVUPS      V, (DX)(AX*1)           \
	VSQRTPS      V, T1                   \
	TESTQ        $4, R8                  \
	JZ           7(PC)                   \
	VMULPS       (R10)(AX*1), ALPHA, A   \
	VFMADD231PS  C, G, A                 \
	VMOVUPS      A, (R10)(AX*1)          \
	VMOVUPS      V, T1                   \
	VFNMADD231PS A, A, T1                \
	VSQRTPS      T1, T1                  \
	VADDPS       EPS, T1, T1             \
	TESTQ        $8, R8                  \
	JZ           7(PC)                   \
	VMULPS       (R9)(AX*1), MOM, B      \
	VDIVPS       T1, G, T2               \
	VADDPS       T2, B, B                \
	VMOVUPS      B, (R9)(AX*1)           \
	VFMADD231PS  NEGLR, B, P             \
	JMP          4(PC)                   \
	VMULPS       NEGLR, G, T2            \
	VDIVPS       T1, T2, T2              \
	VADDPS       T2, P, P                \
	VMOVUPS      P, (DI)(AX*1)

#define ADAGRAD_BODY(G, P, S, T1, T2, SCALE, WD, NEGLR, EPS) \
	OPT_GRAD(G, P, SCALE, WD)        \
	VMOVUPS     (DX)(AX*1), S        \
	VFMADD231PS G, G, S              \
	VMOVUPS     S, (DX)(AX*1)        \
	VSQRTPS     S, T1                \
	VADDPS      EPS, T1, T1          \
	VMULPS      NEGLR, G, T2         \
	VDIVPS      T1, T2, T2           \
	VADDPS      T2, P, P             \
	VMOVUPS     P, (DI)(AX*1)


// func rmspropF32AVX2(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)
// n is a multiple of 8; buf and avg are read only under their flags.
TEXT ·rmspropF32AVX2(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ buf+24(FP), R9
	MOVQ avg+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), BX
	MOVQ flags+56(FP), R8
	SHLQ $2, CX
	XORQ AX, AX
	VBROADCASTSS 0(BX), Y8
	VBROADCASTSS 4(BX), Y9
	VBROADCASTSS 8(BX), Y10
	VBROADCASTSS 12(BX), Y11
	VBROADCASTSS 16(BX), Y12
	VBROADCASTSS 20(BX), Y13
	VBROADCASTSS 24(BX), Y14

rms2loop:
	CMPQ AX, CX
	JGE  rms2done
	RMSPROP_BODY(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y8, Y9, Y10, Y11, Y12, Y13, Y14)
	ADDQ $32, AX
	JMP  rms2loop

rms2done:
	VZEROUPPER
	RET

// func rmspropF32AVX512(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)
// n is a multiple of 16.
TEXT ·rmspropF32AVX512(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ buf+24(FP), R9
	MOVQ avg+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), BX
	MOVQ flags+56(FP), R8
	SHLQ $2, CX
	XORQ AX, AX
	VBROADCASTSS 0(BX), Z16
	VBROADCASTSS 4(BX), Z17
	VBROADCASTSS 8(BX), Z18
	VBROADCASTSS 12(BX), Z19
	VBROADCASTSS 16(BX), Z20
	VBROADCASTSS 20(BX), Z21
	VBROADCASTSS 24(BX), Z22

rms5loop:
	CMPQ AX, CX
	JGE  rms5done
	RMSPROP_BODY(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z16, Z17, Z18, Z19, Z20, Z21, Z22)
	ADDQ $64, AX
	JMP  rms5loop

rms5done:
	VZEROUPPER
	RET

// func adagradF32AVX2(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)
// v is the sum of squares; buf and avg are unused. n is a multiple of 8.
TEXT ·adagradF32AVX2(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ buf+24(FP), R9
	MOVQ avg+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), BX
	MOVQ flags+56(FP), R8
	SHLQ $2, CX
	XORQ AX, AX
	VBROADCASTSS 0(BX), Y8
	VBROADCASTSS 4(BX), Y9
	VBROADCASTSS 20(BX), Y13
	VBROADCASTSS 24(BX), Y14

ada2loop:
	CMPQ AX, CX
	JGE  ada2done
	ADAGRAD_BODY(Y0, Y1, Y2, Y3, Y4, Y8, Y9, Y13, Y14)
	ADDQ $32, AX
	JMP  ada2loop

ada2done:
	VZEROUPPER
	RET

// func adagradF32AVX512(p, grad, v, buf, avg *float32, n int, k *rmsConsts, flags int)
// n is a multiple of 16.
TEXT ·adagradF32AVX512(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ buf+24(FP), R9
	MOVQ avg+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), BX
	MOVQ flags+56(FP), R8
	SHLQ $2, CX
	XORQ AX, AX
	VBROADCASTSS 0(BX), Z16
	VBROADCASTSS 4(BX), Z17
	VBROADCASTSS 20(BX), Z21
	VBROADCASTSS 24(BX), Z22

ada5loop:
	CMPQ AX, CX
	JGE  ada5done
	ADAGRAD_BODY(Z0, Z1, Z2, Z3, Z4, Z16, Z17, Z21, Z22)
	ADDQ $64, AX
	JMP  ada5loop

ada5done:
	VZEROUPPER
	RET
