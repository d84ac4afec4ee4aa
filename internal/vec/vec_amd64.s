#include "textflag.h"

// func scaleShiftUint8ToFloat32AVX2(dst *float32, src *uint8, n int, scale, shift float64)
// n is a positive multiple of 16. Per 4 bytes: zero-extend to int32,
// convert to float64 (exact), multiply, add (each rounded in float64),
// round to float32.
TEXT ·scaleShiftUint8ToFloat32AVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD scale+24(FP), Y14
	VBROADCASTSD shift+32(FP), Y15

loop:
	VPMOVZXBD  (SI), X0
	VPMOVZXBD  4(SI), X1
	VPMOVZXBD  8(SI), X2
	VPMOVZXBD  12(SI), X3
	VCVTDQ2PD  X0, Y0
	VCVTDQ2PD  X1, Y1
	VCVTDQ2PD  X2, Y2
	VCVTDQ2PD  X3, Y3
	VMULPD     Y14, Y0, Y0
	VMULPD     Y14, Y1, Y1
	VMULPD     Y14, Y2, Y2
	VMULPD     Y14, Y3, Y3
	VADDPD     Y15, Y0, Y0
	VADDPD     Y15, Y1, Y1
	VADDPD     Y15, Y2, Y2
	VADDPD     Y15, Y3, Y3
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VMOVUPS    X0, (DI)
	VMOVUPS    X1, 16(DI)
	VMOVUPS    X2, 32(DI)
	VMOVUPS    X3, 48(DI)
	ADDQ       $16, SI
	ADDQ       $64, DI
	SUBQ       $16, CX
	JNZ        loop
	VZEROUPPER
	RET

// func biasRelu32AVX2(out, x, b *float32, n int)
// out = x + b where that is > 0 (ordered: NaN fails), else +0.
TEXT ·biasRelu32AVX2(SB), NOSPLIT, $0-32
	MOVQ   out+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VXORPS Y15, Y15, Y15

brloop:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VCMPPS  $0x1e, Y15, Y0, Y1 // GT_OQ: all ones where Y0 > 0
	VANDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     brloop
	VZEROUPPER
	RET

// func reluGrad32AVX2(out, y, grad *float32, n int)
// out = g where y > 0, else +0.
TEXT ·reluGrad32AVX2(SB), NOSPLIT, $0-32
	MOVQ   out+0(FP), DI
	MOVQ   y+8(FP), SI
	MOVQ   grad+16(FP), DX
	MOVQ   n+24(FP), CX
	VXORPS Y15, Y15, Y15

rgloop:
	VMOVUPS (SI), Y0
	VCMPPS  $0x1e, Y15, Y0, Y1 // GT_OQ: all ones where Y0 > 0
	VANDPS  (DX), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     rgloop
	VZEROUPPER
	RET

// func scaledSub32AVX2(out, a, grad *float32, n int, s float32)
// out = a - s*g, the product rounded first.
TEXT ·scaledSub32AVX2(SB), NOSPLIT, $0-36
	MOVQ         out+0(FP), DI
	MOVQ         a+8(FP), SI
	MOVQ         grad+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS s+32(FP), Y15

ssloop:
	VMULPS  (DX), Y15, Y1
	VMOVUPS (SI), Y0
	VSUBPS  Y1, Y0, Y0 // Y0 = a - s*g
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     ssloop
	VZEROUPPER
	RET

// func add32AVX2(acc, x *float32, n int)
TEXT ·add32AVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

addloop:
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     addloop
	VZEROUPPER
	RET
