#include "textflag.h"

// func lstmGrad32AVX2(p *[lgStreams]*float32, cnt int)
// cnt a positive multiple of 8; LSTMGrad32's loop, each operation in the
// Go expression's order. p is the streams' table (lstm.go's lg*
// constants, 8 bytes each); AX is the byte offset into every stream.
TEXT ·lstmGrad32AVX2(SB), NOSPLIT, $0-16
	MOVQ         p+0(FP), BX
	MOVQ         cnt+8(FP), CX
	XORQ         AX, AX
	MOVQ         0(BX), DX   // i
	MOVQ         8(BX), SI   // f
	MOVQ         16(BX), DI  // c̃
	MOVQ         24(BX), R8  // o
	MOVQ         32(BX), R9  // dai
	MOVQ         40(BX), R10 // daf
	MOVQ         48(BX), R11 // dag
	MOVQ         56(BX), R12 // dao
	MOVL         $0x3f800000, R13
	MOVL         R13, X15
	VBROADCASTSS X15, Y15 // 1
	VXORPS       Y14, Y14, Y14 // +0

lgloop:
	MOVQ    64(BX), R13
	VMOVUPS (R13)(AX*1), Y0 // dh1
	MOVQ    72(BX), R13
	VADDPS  (R13)(AX*1), Y0, Y0 // dhn = dh1 + dh2
	MOVQ    80(BX), R13
	VMOVUPS (R13)(AX*1), Y1 // dc1
	MOVQ    88(BX), R13
	VADDPS  (R13)(AX*1), Y1, Y1 // dcn = dc1 + dcp
	MOVQ    96(BX), R13
	VMOVUPS (R13)(AX*1), Y2 // t
	VMOVUPS (R8)(AX*1), Y3  // o
	VMULPS  Y2, Y0, Y4      // do = dhn·t
	VMULPS  Y3, Y0, Y5      // dhn·o
	VMULPS  Y2, Y2, Y6      // t·t
	VSUBPS  Y6, Y15, Y6     // 1 − t·t
	VMULPS  Y6, Y5, Y5      // dhn·o·(1−t·t)
	VADDPS  Y5, Y1, Y1      // dct = dcn + …
	VMULPS  Y3, Y4, Y4      // do·o
	VSUBPS  Y3, Y15, Y5     // 1 − o
	VMULPS  Y5, Y4, Y4      // dao = do·o·(1−o)
	VMOVUPS Y4, (R12)(AX*1)
	MOVQ    136(BX), R13
	VMULPS  (R13)(AX*1), Y4, Y5 // dao·wco
	VADDPS  Y5, Y1, Y1          // dct += dao·wco
	VMOVUPS (DI)(AX*1), Y6      // c̃
	VMOVUPS (DX)(AX*1), Y7      // i
	VMOVUPS (SI)(AX*1), Y8      // f
	MOVQ    104(BX), R13
	VMOVUPS (R13)(AX*1), Y9 // cp
	VMULPS  Y6, Y1, Y10     // dct·c̃
	VMULPS  Y7, Y10, Y10    // ·i
	VSUBPS  Y7, Y15, Y11    // 1 − i
	VMULPS  Y11, Y10, Y10   // dai = dct·c̃·i·(1−i)
	VMOVUPS Y10, (R9)(AX*1)
	VMULPS  Y9, Y1, Y11     // dct·cp
	VMULPS  Y8, Y11, Y11    // ·f
	VSUBPS  Y8, Y15, Y12    // 1 − f
	VMULPS  Y12, Y11, Y11   // daf = dct·cp·f·(1−f)
	VMOVUPS Y11, (R10)(AX*1)
	VMULPS  Y7, Y1, Y12     // dct·i
	VMULPS  Y6, Y6, Y13     // c̃·c̃
	VSUBPS  Y13, Y15, Y13   // 1 − c̃·c̃
	VMULPS  Y13, Y12, Y12   // dag = dct·i·(1−c̃·c̃)
	VMOVUPS Y12, (R11)(AX*1)
	VMULPS  Y8, Y1, Y12     // dct·f
	MOVQ    120(BX), R13
	VMULPS  (R13)(AX*1), Y10, Y13 // dai·wci
	VADDPS  Y13, Y12, Y12         // dct·f + dai·wci
	MOVQ    128(BX), R13
	VMULPS  (R13)(AX*1), Y11, Y13 // daf·wcf
	VADDPS  Y13, Y12, Y12         // + daf·wcf
	VADDPS  Y14, Y12, Y12         // + 0
	MOVQ    88(BX), R13
	VMOVUPS Y12, (R13)(AX*1) // dcp
	VMULPS  Y9, Y10, Y13     // dai·cp
	MOVQ    144(BX), R13
	VMOVUPS (R13)(AX*1), Y0
	VADDPS  Y13, Y0, Y0      // sci + dai·cp
	VMOVUPS Y0, (R13)(AX*1)
	VMULPS  Y9, Y11, Y13     // daf·cp
	MOVQ    152(BX), R13
	VMOVUPS (R13)(AX*1), Y0
	VADDPS  Y13, Y0, Y0      // scf + daf·cp
	VMOVUPS Y0, (R13)(AX*1)
	MOVQ    112(BX), R13
	VMULPS  (R13)(AX*1), Y4, Y13 // dao·c
	MOVQ    160(BX), R13
	VMOVUPS (R13)(AX*1), Y0
	VADDPS  Y13, Y0, Y0          // sco + dao·c
	VMOVUPS Y0, (R13)(AX*1)
	ADDQ    $32, AX
	SUBQ    $8, CX
	JNZ     lgloop
	VZEROUPPER
	RET
