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

// Indices for VPERMPS: evens then odds; each of the first and of the last
// four lanes twice.
DATA evenOdd<>+0(SB)/4, $0
DATA evenOdd<>+4(SB)/4, $2
DATA evenOdd<>+8(SB)/4, $4
DATA evenOdd<>+12(SB)/4, $6
DATA evenOdd<>+16(SB)/4, $1
DATA evenOdd<>+20(SB)/4, $3
DATA evenOdd<>+24(SB)/4, $5
DATA evenOdd<>+28(SB)/4, $7
GLOBL evenOdd<>(SB), RODATA|NOPTR, $32

DATA dupLow<>+0(SB)/4, $0
DATA dupLow<>+4(SB)/4, $0
DATA dupLow<>+8(SB)/4, $1
DATA dupLow<>+12(SB)/4, $1
DATA dupLow<>+16(SB)/4, $2
DATA dupLow<>+20(SB)/4, $2
DATA dupLow<>+24(SB)/4, $3
DATA dupLow<>+28(SB)/4, $3
GLOBL dupLow<>(SB), RODATA|NOPTR, $32

DATA dupHigh<>+0(SB)/4, $4
DATA dupHigh<>+4(SB)/4, $4
DATA dupHigh<>+8(SB)/4, $5
DATA dupHigh<>+12(SB)/4, $5
DATA dupHigh<>+16(SB)/4, $6
DATA dupHigh<>+20(SB)/4, $6
DATA dupHigh<>+24(SB)/4, $7
DATA dupHigh<>+28(SB)/4, $7
GLOBL dupHigh<>(SB), RODATA|NOPTR, $32

DATA negInf<>+0(SB)/4, $0xff800000
GLOBL negInf<>(SB), RODATA|NOPTR, $4

// func maxPool2x2Rows32AVX2(y, x0, x1 *float32, n int)
// n (a positive multiple of 4) outputs: y[j] is the running maximum, from
// -Inf, of x0[2j], x0[2j+1], x1[2j], x1[2j+1] in that order, each step
// m = e > m ? e : m (VMAXPS e, m).
TEXT ·maxPool2x2Rows32AVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x0+8(FP), SI
	MOVQ         x1+16(FP), DX
	MOVQ         n+24(FP), CX
	VMOVDQU      evenOdd<>(SB), Y14
	VBROADCASTSS negInf<>(SB), Y13

mp8:
	CMPQ       CX, $8
	JLT        mp4
	VMOVUPS    (SI), Y0
	VMOVUPS    32(SI), Y1
	VPERMPS    Y0, Y14, Y0
	VPERMPS    Y1, Y14, Y1
	VPERM2F128 $0x20, Y1, Y0, Y2 // x0 evens
	VPERM2F128 $0x31, Y1, Y0, Y3 // x0 odds
	VMAXPS     Y13, Y2, Y4
	VMAXPS     Y4, Y3, Y4
	VMOVUPS    (DX), Y0
	VMOVUPS    32(DX), Y1
	VPERMPS    Y0, Y14, Y0
	VPERMPS    Y1, Y14, Y1
	VPERM2F128 $0x20, Y1, Y0, Y2
	VPERM2F128 $0x31, Y1, Y0, Y3
	VMAXPS     Y4, Y2, Y4
	VMAXPS     Y4, Y3, Y4
	VMOVUPS    Y4, (DI)
	ADDQ       $64, SI
	ADDQ       $64, DX
	ADDQ       $32, DI
	SUBQ       $8, CX
	JMP        mp8

mp4:
	CMPQ         CX, $4
	JLT          mpdone
	VMOVUPS      (SI), Y0
	VPERMPS      Y0, Y14, Y0
	VEXTRACTF128 $1, Y0, X3 // odds
	VMAXPS       X13, X0, X4
	VMAXPS       X4, X3, X4
	VMOVUPS      (DX), Y0
	VPERMPS      Y0, Y14, Y0
	VEXTRACTF128 $1, Y0, X3
	VMAXPS       X4, X0, X4
	VMAXPS       X4, X3, X4
	VMOVUPS      X4, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DX
	ADDQ         $16, DI
	SUBQ         $4, CX
	JMP          mp4

mpdone:
	VZEROUPPER
	RET

// func maxPool2x2GradRows32AVX2(g0, g1, x0, x1, y, gz *float32, n int)
// For n outputs (a positive multiple of 4): each of the four inputs of
// output j gets 0 + gz[j] where it equals y[j], else +0.
TEXT ·maxPool2x2GradRows32AVX2(SB), NOSPLIT, $0-56
	MOVQ    g0+0(FP), DI
	MOVQ    g1+8(FP), R8
	MOVQ    x0+16(FP), SI
	MOVQ    x1+24(FP), DX
	MOVQ    y+32(FP), R9
	MOVQ    gz+40(FP), R10
	MOVQ    n+48(FP), CX
	VMOVDQU dupLow<>(SB), Y14
	VMOVDQU dupHigh<>(SB), Y13
	VXORPS  Y12, Y12, Y12

pg8:
	CMPQ    CX, $8
	JLT     pg4
	VMOVUPS (R9), Y0
	VMOVUPS (R10), Y1
	VADDPS  Y12, Y1, Y1   // 0 + gz
	VPERMPS Y0, Y14, Y2   // y for columns 0-7
	VPERMPS Y0, Y13, Y3   // y for columns 8-15
	VPERMPS Y1, Y14, Y4
	VPERMPS Y1, Y13, Y5
	VMOVUPS (SI), Y6
	VCMPPS  $0, Y2, Y6, Y7 // EQ_OQ
	VANDPS  Y4, Y7, Y7
	VMOVUPS Y7, (DI)
	VMOVUPS 32(SI), Y6
	VCMPPS  $0, Y3, Y6, Y7
	VANDPS  Y5, Y7, Y7
	VMOVUPS Y7, 32(DI)
	VMOVUPS (DX), Y6
	VCMPPS  $0, Y2, Y6, Y7
	VANDPS  Y4, Y7, Y7
	VMOVUPS Y7, (R8)
	VMOVUPS 32(DX), Y6
	VCMPPS  $0, Y3, Y6, Y7
	VANDPS  Y5, Y7, Y7
	VMOVUPS Y7, 32(R8)
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	ADDQ    $64, R8
	SUBQ    $8, CX
	JMP     pg8

pg4:
	CMPQ    CX, $4
	JLT     pgdone
	VMOVUPS (R9), X0
	VMOVUPS (R10), X1
	VADDPS  X12, X1, X1
	VPERMPS Y0, Y14, Y2
	VPERMPS Y1, Y14, Y4
	VMOVUPS (SI), Y6
	VCMPPS  $0, Y2, Y6, Y7
	VANDPS  Y4, Y7, Y7
	VMOVUPS Y7, (DI)
	VMOVUPS (DX), Y6
	VCMPPS  $0, Y2, Y6, Y7
	VANDPS  Y4, Y7, Y7
	VMOVUPS Y7, (R8)
	ADDQ    $16, R9
	ADDQ    $16, R10
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	ADDQ    $32, R8
	SUBQ    $4, CX
	JMP     pg4

pgdone:
	VZEROUPPER
	RET

// func relu32AVX2(out, x *float32, n int)
// out = x where x > 0, else +0.
TEXT ·relu32AVX2(SB), NOSPLIT, $0-24
	MOVQ   out+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Y15, Y15, Y15

reluloop:
	VMOVUPS (SI), Y0
	VCMPPS  $0x1e, Y15, Y0, Y1 // GT_OQ: all ones where Y0 > 0
	VANDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     reluloop
	VZEROUPPER
	RET

// func sum32AVX2(x *float32, n int) float32
// n is a positive multiple of 32: four 8-lane sums (elements i mod 32),
// then (s0+s1)+(s2+s3), then lanes k+4, k+2, k+1 folded in.
TEXT ·sum32AVX2(SB), NOSPLIT, $0-20
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

sumloop:
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JNZ    sumloop
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// func copyRows32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int)
// Copies rows segments of width floats from src to dst, the segments
// srcStride floats apart in src and dstStride floats apart in dst.
TEXT ·copyRows32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), R12
	MOVQ dstStride+8(FP), R13
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), R10
	MOVQ rows+32(FP), R8
	MOVQ width+40(FP), R9
	SHLQ $2, R10
	SHLQ $2, R13

crrow:
	TESTQ R8, R8
	JZ    crdone
	MOVQ  SI, R11
	MOVQ  R12, DI
	MOVQ  R9, CX

cr8:
	CMPQ    CX, $8
	JLT     crtail
	VMOVUPS (R11), Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, R11
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     cr8

crtail:
	TESTQ CX, CX
	JZ    crnext
	MOVSS (R11), X0
	MOVSS X0, (DI)
	ADDQ  $4, R11
	ADDQ  $4, DI
	DECQ  CX
	JMP   crtail

crnext:
	ADDQ R10, SI
	ADDQ R13, R12
	DECQ R8
	JMP  crrow

crdone:
	VZEROUPPER
	RET

// func addRows32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int)
// Adds rows segments of width floats of src into dst (dst += src), the
// segments srcStride floats apart in src and dstStride apart in dst.
TEXT ·addRows32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), R12
	MOVQ dstStride+8(FP), R13
	MOVQ src+16(FP), BX
	MOVQ srcStride+24(FP), R10
	MOVQ rows+32(FP), R8
	MOVQ width+40(FP), R9
	SHLQ $2, R10
	SHLQ $2, R13

arrow:
	TESTQ R8, R8
	JZ    ardone
	MOVQ  R12, R11
	MOVQ  BX, SI
	MOVQ  R9, CX

ar8:
	CMPQ    CX, $8
	JLT     artail
	VMOVUPS (R11), Y0
	VADDPS  (SI), Y0, Y0
	VMOVUPS Y0, (R11)
	ADDQ    $32, R11
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     ar8

artail:
	TESTQ CX, CX
	JZ    arnext
	MOVSS (R11), X0
	ADDSS (SI), X0
	MOVSS X0, (R11)
	ADDQ  $4, R11
	ADDQ  $4, SI
	DECQ  CX
	JMP   artail

arnext:
	ADDQ R13, R12
	ADDQ R10, BX
	DECQ R8
	JMP  arrow

ardone:
	VZEROUPPER
	RET

// func addTo32AVX2(out, a, b *float32, n int)
// n a positive multiple of 8: out[i] = a[i] + b[i].
TEXT ·addTo32AVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

addtoloop:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     addtoloop
	VZEROUPPER
	RET

// func scaleUint8ToFloat32FMA(dst *float32, src *uint8, n int, r, d, h float32)
// n is a positive multiple of 16. Per 8 bytes: zero-extend to int32,
// convert to float32 (exact), q = x·r, e = x − q·d (fused), q = q + e·r
// (fused), q + h.
TEXT ·scaleUint8ToFloat32FMA(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS r+24(FP), Y13
	VBROADCASTSS d+28(FP), Y14
	VBROADCASTSS h+32(FP), Y15

fmaloop:
	VPMOVZXBD    (SI), Y0
	VPMOVZXBD    8(SI), Y1
	VCVTDQ2PS    Y0, Y0
	VCVTDQ2PS    Y1, Y1
	VMULPS       Y13, Y0, Y2
	VMULPS       Y13, Y1, Y3
	VFNMADD231PS Y14, Y2, Y0
	VFNMADD231PS Y14, Y3, Y1
	VFMADD231PS  Y13, Y0, Y2
	VFMADD231PS  Y13, Y1, Y3
	VADDPS       Y15, Y2, Y2
	VADDPS       Y15, Y3, Y3
	VMOVUPS      Y2, (DI)
	VMOVUPS      Y3, 32(DI)
	ADDQ         $16, SI
	ADDQ         $64, DI
	SUBQ         $16, CX
	JNZ          fmaloop
	VZEROUPPER
	RET
