#include "textflag.h"

// Gemm32's blocks (gemm.go): each element of C a sequence of fused
// multiply-adds over k in order, from zero, 8 lanes at a time.

// func gemm4x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
// C[0:4][0:16] = A[0:4][0:k]·B[0:k][0:16]; k > 0; strides in elements.
TEXT ·gemm4x16AVX2(SB), NOSPLIT, $0-56
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   lda+16(FP), R8
	MOVQ   b+24(FP), DI
	MOVQ   ldb+32(FP), R9
	MOVQ   c+40(FP), DX
	MOVQ   ldc+48(FP), R10
	SHLQ   $2, R8
	SHLQ   $2, R9
	SHLQ   $2, R10
	LEAQ   (R8)(R8*2), R11 // 3·lda
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

g4loop:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (SI), Y10
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	VBROADCASTSS (SI)(R8*1), Y11
	VFMADD231PS  Y8, Y11, Y2
	VFMADD231PS  Y9, Y11, Y3
	VBROADCASTSS (SI)(R8*2), Y12
	VFMADD231PS  Y8, Y12, Y4
	VFMADD231PS  Y9, Y12, Y5
	VBROADCASTSS (SI)(R11*1), Y13
	VFMADD231PS  Y8, Y13, Y6
	VFMADD231PS  Y9, Y13, Y7
	ADDQ         $4, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          g4loop

	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R10, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R10, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R10, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func gemm1x16AVX2(k int, a *float32, b *float32, ldb int, c *float32)
// C[0][0:16] = A[0][0:k]·B[0:k][0:16]; k > 0.
TEXT ·gemm1x16AVX2(SB), NOSPLIT, $0-40
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	MOVQ   ldb+24(FP), R9
	MOVQ   c+32(FP), DX
	SHLQ   $2, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

g1loop:
	VBROADCASTSS (SI), Y10
	VFMADD231PS  (DI), Y10, Y0
	VFMADD231PS  32(DI), Y10, Y1
	ADDQ         $4, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          g1loop

	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
