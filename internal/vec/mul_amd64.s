#include "textflag.h"

// func mul32AVX2(out, a, b *float32, n int)
// n a positive multiple of 8: out[i] = a[i]·b[i].
TEXT ·mul32AVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

mulloop:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     mulloop
	VZEROUPPER
	RET

// func mulAdd32AVX2(acc, a, b *float32, n int)
// n a positive multiple of 8: acc[i] += a[i]·b[i], the product rounded
// first (VMULPS then VADDPS, no FMA).
TEXT ·mulAdd32AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

maddloop:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS (DI), Y1
	VADDPS  Y0, Y1, Y1 // acc + p, acc first (as the scalar code: NaN payloads)
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     maddloop
	VZEROUPPER
	RET
