#include "textflag.h"

// func gruGradN32AVX2(dan, dg, dhp, dh, u, n, hp *float32, cnt int)
// cnt a positive multiple of 8; GRUGradN32's loop, each operation in the
// Go expression's order.
TEXT ·gruGradN32AVX2(SB), NOSPLIT, $0-64
	MOVQ         dan+0(FP), DI
	MOVQ         dg+8(FP), R8
	MOVQ         dhp+16(FP), R9
	MOVQ         dh+24(FP), SI
	MOVQ         u+32(FP), DX
	MOVQ         n+40(FP), R10
	MOVQ         hp+48(FP), R11
	MOVQ         cnt+56(FP), CX
	MOVL         $0x3f800000, AX
	MOVL         AX, X15
	VBROADCASTSS X15, Y15 // 1
	VXORPS       Y14, Y14, Y14 // +0

gnloop:
	VMOVUPS (SI), Y0  // dn
	VMOVUPS (DX), Y1  // u
	VMOVUPS (R10), Y2 // n
	VMULPS  Y1, Y0, Y3 // dn·u
	VMULPS  Y2, Y2, Y4 // n·n
	VSUBPS  Y4, Y15, Y4 // 1 − n·n
	VMULPS  Y4, Y3, Y3 // dn·u·(1−n·n)
	VMOVUPS Y3, (DI)
	VMULPS  Y2, Y0, Y5 // dn·n
	VMULPS  (R11), Y0, Y6 // dn·hp
	VSUBPS  Y6, Y5, Y5 // dn·n − dn·hp
	VMULPS  Y1, Y5, Y5 // ·u
	VSUBPS  Y1, Y15, Y7 // 1 − u
	VMULPS  Y7, Y5, Y5 // ·(1−u)
	VMOVUPS Y5, (R8)
	VMULPS  Y7, Y0, Y6 // dn·(1−u)
	VADDPS  Y14, Y6, Y6 // + 0
	VMOVUPS Y6, (R9)
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JNZ     gnloop
	VZEROUPPER
	RET

// func gruGradR32AVX2(dg, dhp, dr, hp, r *float32, cnt int)
// cnt a positive multiple of 8; GRUGradR32's loop.
TEXT ·gruGradR32AVX2(SB), NOSPLIT, $0-48
	MOVQ         dg+0(FP), DI
	MOVQ         dhp+8(FP), R8
	MOVQ         dr+16(FP), SI
	MOVQ         hp+24(FP), DX
	MOVQ         r+32(FP), R10
	MOVQ         cnt+40(FP), CX
	MOVL         $0x3f800000, AX
	MOVL         AX, X15
	VBROADCASTSS X15, Y15 // 1

grloop:
	VMOVUPS (SI), Y0  // dr
	VMOVUPS (R10), Y1 // r
	VMULPS  Y1, Y0, Y2 // dr·r
	VMOVUPS (R8), Y3
	VADDPS  Y2, Y3, Y3 // dhp + dr·r
	VMOVUPS Y3, (R8)
	VMULPS  (DX), Y0, Y4 // dr·hp
	VMULPS  Y1, Y4, Y4 // ·r
	VSUBPS  Y1, Y15, Y5 // 1 − r
	VMULPS  Y5, Y4, Y4 // ·(1−r)
	VMOVUPS Y4, (DI)
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R10
	SUBQ    $8, CX
	JNZ     grloop
	VZEROUPPER
	RET

// func gruStep32AVX2(h, n, u, hp *float32, cnt int)
// cnt a positive multiple of 8; GRUStep32's loop.
TEXT ·gruStep32AVX2(SB), NOSPLIT, $0-40
	MOVQ         h+0(FP), DI
	MOVQ         n+8(FP), SI
	MOVQ         u+16(FP), DX
	MOVQ         hp+24(FP), R8
	MOVQ         cnt+32(FP), CX
	MOVL         $0x3f800000, AX
	MOVL         AX, X15
	VBROADCASTSS X15, Y15 // 1

gsloop:
	VMOVUPS (DX), Y1     // u
	VMULPS  (SI), Y1, Y0 // n·u
	VSUBPS  Y1, Y15, Y2  // 1 − u
	VMULPS  (R8), Y2, Y2 // hp·(1−u)
	VADDPS  Y2, Y0, Y0   // n·u + hp·(1−u)
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	SUBQ    $8, CX
	JNZ     gsloop
	VZEROUPPER
	RET
