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
