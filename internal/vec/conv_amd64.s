#include "textflag.h"

// func patches32AVX2(col *float32, ld int, x *float32, n, imageStride, kh, kw, oh, ow, tapRow, tapCol, rowStride int)
// n, kh, kw, oh, ow ≥ 1. For each tap (a, b) in order, then each image
// (imageStride floats apart in x), its oh rows of ow floats from
// x + a·tapRow + b·tapCol (rows rowStride apart) go one after the other to
// col + (a·kw + b)·ld: each tap's row of col is written in order. Rows of
// exactly 8 floats (LeNet's second layer) take a loop of their own.
TEXT ·patches32AVX2(SB), NOSPLIT, $24-96
	MOVQ col+0(FP), DI
	MOVQ x+16(FP), SI
	MOVQ imageStride+32(FP), AX
	SHLQ $2, AX
	MOVQ AX, istride-24(SP)
	MOVQ kh+40(FP), AX
	MOVQ AX, acount-8(SP)
	MOVQ tapCol+80(FP), R13
	SHLQ $2, R13
	MOVQ rowStride+88(FP), R12
	SHLQ $2, R12
	MOVQ ow+64(FP), R14
	MOVQ R14, R15
	SHRQ $3, R14 // blocks of 8 a row
	ANDQ $7, R15 // and the rest

pctap_row:
	MOVQ SI, BX
	MOVQ kw+48(FP), AX
	MOVQ AX, bcount-16(SP)

pctap:
	MOVQ DI, AX
	MOVQ BX, R11
	MOVQ n+24(FP), R10

pcimage:
	MOVQ R11, DX
	MOVQ oh+56(FP), R9
	CMPQ R14, $1
	JNE  pcrow
	TESTQ R15, R15
	JZ   pcrow8

pcrow:
	MOVQ  DX, R8
	MOVQ  R14, CX
	TESTQ CX, CX
	JZ    pcrest

pc8:
	VMOVUPS (R8), Y0
	VMOVUPS Y0, (AX)
	ADDQ    $32, R8
	ADDQ    $32, AX
	DECQ    CX
	JNZ     pc8

pcrest:
	MOVQ R15, CX
	TESTQ CX, CX
	JZ    pcnext_row

pc1:
	MOVSS (R8), X0
	MOVSS X0, (AX)
	ADDQ  $4, R8
	ADDQ  $4, AX
	DECQ  CX
	JNZ   pc1

pcnext_row:
	ADDQ R12, DX
	DECQ R9
	JNZ  pcrow
	JMP  pcnext_image

pcrow8:
	VMOVUPS (DX), Y0
	VMOVUPS Y0, (AX)
	ADDQ $32, AX
	ADDQ R12, DX
	DECQ R9
	JNZ  pcrow8

pcnext_image:
	ADDQ istride-24(SP), R11
	DECQ R10
	JNZ  pcimage
	MOVQ ld+8(FP), CX
	LEAQ (DI)(CX*4), DI
	ADDQ R13, BX
	DECQ bcount-16(SP)
	JNZ  pctap
	MOVQ tapRow+72(FP), CX
	LEAQ (SI)(CX*4), SI
	DECQ acount-8(SP)
	JNZ  pctap_row
	VZEROUPPER
	RET

// func addPatches32AVX2(x, col *float32, ld, n, imageStride, kh, kw, oh, ow, tapRow, tapCol, rowStride int)
// patches32AVX2's adjoint: each tap's rows of col, image after image, are
// added into x (x += col), taps in order.
TEXT ·addPatches32AVX2(SB), NOSPLIT, $24-96
	MOVQ x+0(FP), SI
	MOVQ col+8(FP), DI
	MOVQ imageStride+32(FP), AX
	SHLQ $2, AX
	MOVQ AX, istride-24(SP)
	MOVQ kh+40(FP), AX
	MOVQ AX, acount-8(SP)
	MOVQ tapCol+80(FP), R13
	SHLQ $2, R13
	MOVQ rowStride+88(FP), R12
	SHLQ $2, R12
	MOVQ ow+64(FP), R14
	MOVQ R14, R15
	SHRQ $3, R14 // blocks of 8 a row
	ANDQ $7, R15 // and the rest

aptap_row:
	MOVQ SI, BX
	MOVQ kw+48(FP), AX
	MOVQ AX, bcount-16(SP)

aptap:
	MOVQ DI, AX
	MOVQ BX, R11
	MOVQ n+24(FP), R10

apimage:
	MOVQ R11, DX
	MOVQ oh+56(FP), R9
	CMPQ R14, $1
	JNE  aprow
	TESTQ R15, R15
	JZ   aprow8

aprow:
	MOVQ  DX, R8
	MOVQ  R14, CX
	TESTQ CX, CX
	JZ    aprest

ap8:
	VMOVUPS (R8), Y0
	VADDPS  (AX), Y0, Y0
	VMOVUPS Y0, (R8)
	ADDQ    $32, R8
	ADDQ    $32, AX
	DECQ    CX
	JNZ     ap8

aprest:
	MOVQ R15, CX
	TESTQ CX, CX
	JZ    apnext_row

ap1:
	MOVSS (R8), X0
	ADDSS (AX), X0
	MOVSS X0, (R8)
	ADDQ  $4, R8
	ADDQ  $4, AX
	DECQ  CX
	JNZ   ap1

apnext_row:
	ADDQ R12, DX
	DECQ R9
	JNZ  aprow
	JMP  apnext_image

aprow8:
	VMOVUPS (DX), Y0
	VADDPS  (AX), Y0, Y0
	VMOVUPS Y0, (DX)
	ADDQ $32, AX
	ADDQ R12, DX
	DECQ R9
	JNZ  aprow8

apnext_image:
	ADDQ istride-24(SP), R11
	DECQ R10
	JNZ  apimage
	MOVQ ld+16(FP), CX
	LEAQ (DI)(CX*4), DI
	ADDQ R13, BX
	DECQ bcount-16(SP)
	JNZ  aptap
	MOVQ tapRow+72(FP), CX
	LEAQ (SI)(CX*4), SI
	DECQ acount-8(SP)
	JNZ  aptap_row
	VZEROUPPER
	RET

// func copyRowsBias32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int, bias *float32)
// rows, width ≥ 1: dst[i*dstStride+j] = src[i*srcStride+j] + bias[i].
TEXT ·copyRowsBias32AVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), R12
	MOVQ dstStride+8(FP), R13
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), R10
	MOVQ rows+32(FP), R8
	MOVQ width+40(FP), R9
	MOVQ bias+48(FP), BX
	SHLQ $2, R10
	SHLQ $2, R13

cbrow:
	VBROADCASTSS (BX), Y1
	MOVQ         SI, R11
	MOVQ         R12, DI
	MOVQ         R9, CX

cb8:
	CMPQ    CX, $8
	JLT     cb1
	VADDPS  (R11), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, R11
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     cb8

cb1:
	TESTQ CX, CX
	JZ    cbnext
	MOVSS (R11), X0
	ADDSS (BX), X0
	MOVSS X0, (DI)
	ADDQ  $4, R11
	ADDQ  $4, DI
	DECQ  CX
	JMP   cb1

cbnext:
	ADDQ $4, BX
	ADDQ R10, SI
	ADDQ R13, R12
	DECQ R8
	JNZ  cbrow
	VZEROUPPER
	RET
