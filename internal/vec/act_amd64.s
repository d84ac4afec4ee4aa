#include "textflag.h"

// Vectorized Sigmoid32 and Tanh32 (act.go): the same float32 operations,
// in the same order, as the scalar functions, 8 lanes at a time; each
// constant is the float32 the Go compiler rounds the scalar code's constant to.

DATA ·klog2e<>+0(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+4(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+8(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+12(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+16(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+20(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+24(SB)/4, $0x3fb8aa3b
DATA ·klog2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL ·klog2e<>(SB), RODATA|NOPTR, $32

DATA ·kln2hi<>+0(SB)/4, $0x3f318000
DATA ·kln2hi<>+4(SB)/4, $0x3f318000
DATA ·kln2hi<>+8(SB)/4, $0x3f318000
DATA ·kln2hi<>+12(SB)/4, $0x3f318000
DATA ·kln2hi<>+16(SB)/4, $0x3f318000
DATA ·kln2hi<>+20(SB)/4, $0x3f318000
DATA ·kln2hi<>+24(SB)/4, $0x3f318000
DATA ·kln2hi<>+28(SB)/4, $0x3f318000
GLOBL ·kln2hi<>(SB), RODATA|NOPTR, $32

DATA ·kln2lo<>+0(SB)/4, $0xb95e8083
DATA ·kln2lo<>+4(SB)/4, $0xb95e8083
DATA ·kln2lo<>+8(SB)/4, $0xb95e8083
DATA ·kln2lo<>+12(SB)/4, $0xb95e8083
DATA ·kln2lo<>+16(SB)/4, $0xb95e8083
DATA ·kln2lo<>+20(SB)/4, $0xb95e8083
DATA ·kln2lo<>+24(SB)/4, $0xb95e8083
DATA ·kln2lo<>+28(SB)/4, $0xb95e8083
GLOBL ·kln2lo<>(SB), RODATA|NOPTR, $32

DATA ·kep0<>+0(SB)/4, $0x39506967
DATA ·kep0<>+4(SB)/4, $0x39506967
DATA ·kep0<>+8(SB)/4, $0x39506967
DATA ·kep0<>+12(SB)/4, $0x39506967
DATA ·kep0<>+16(SB)/4, $0x39506967
DATA ·kep0<>+20(SB)/4, $0x39506967
DATA ·kep0<>+24(SB)/4, $0x39506967
DATA ·kep0<>+28(SB)/4, $0x39506967
GLOBL ·kep0<>(SB), RODATA|NOPTR, $32

DATA ·kep1<>+0(SB)/4, $0x3ab743ce
DATA ·kep1<>+4(SB)/4, $0x3ab743ce
DATA ·kep1<>+8(SB)/4, $0x3ab743ce
DATA ·kep1<>+12(SB)/4, $0x3ab743ce
DATA ·kep1<>+16(SB)/4, $0x3ab743ce
DATA ·kep1<>+20(SB)/4, $0x3ab743ce
DATA ·kep1<>+24(SB)/4, $0x3ab743ce
DATA ·kep1<>+28(SB)/4, $0x3ab743ce
GLOBL ·kep1<>(SB), RODATA|NOPTR, $32

DATA ·kep2<>+0(SB)/4, $0x3c088908
DATA ·kep2<>+4(SB)/4, $0x3c088908
DATA ·kep2<>+8(SB)/4, $0x3c088908
DATA ·kep2<>+12(SB)/4, $0x3c088908
DATA ·kep2<>+16(SB)/4, $0x3c088908
DATA ·kep2<>+20(SB)/4, $0x3c088908
DATA ·kep2<>+24(SB)/4, $0x3c088908
DATA ·kep2<>+28(SB)/4, $0x3c088908
GLOBL ·kep2<>(SB), RODATA|NOPTR, $32

DATA ·kep3<>+0(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+4(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+8(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+12(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+16(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+20(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+24(SB)/4, $0x3d2aa9c1
DATA ·kep3<>+28(SB)/4, $0x3d2aa9c1
GLOBL ·kep3<>(SB), RODATA|NOPTR, $32

DATA ·kep4<>+0(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+4(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+8(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+12(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+16(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+20(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+24(SB)/4, $0x3e2aaaaa
DATA ·kep4<>+28(SB)/4, $0x3e2aaaaa
GLOBL ·kep4<>(SB), RODATA|NOPTR, $32

DATA ·kep5<>+0(SB)/4, $0x3f000000
DATA ·kep5<>+4(SB)/4, $0x3f000000
DATA ·kep5<>+8(SB)/4, $0x3f000000
DATA ·kep5<>+12(SB)/4, $0x3f000000
DATA ·kep5<>+16(SB)/4, $0x3f000000
DATA ·kep5<>+20(SB)/4, $0x3f000000
DATA ·kep5<>+24(SB)/4, $0x3f000000
DATA ·kep5<>+28(SB)/4, $0x3f000000
GLOBL ·kep5<>(SB), RODATA|NOPTR, $32

DATA ·kone<>+0(SB)/4, $0x3f800000
DATA ·kone<>+4(SB)/4, $0x3f800000
DATA ·kone<>+8(SB)/4, $0x3f800000
DATA ·kone<>+12(SB)/4, $0x3f800000
DATA ·kone<>+16(SB)/4, $0x3f800000
DATA ·kone<>+20(SB)/4, $0x3f800000
DATA ·kone<>+24(SB)/4, $0x3f800000
DATA ·kone<>+28(SB)/4, $0x3f800000
GLOBL ·kone<>(SB), RODATA|NOPTR, $32

DATA ·ktwo<>+0(SB)/4, $0x40000000
DATA ·ktwo<>+4(SB)/4, $0x40000000
DATA ·ktwo<>+8(SB)/4, $0x40000000
DATA ·ktwo<>+12(SB)/4, $0x40000000
DATA ·ktwo<>+16(SB)/4, $0x40000000
DATA ·ktwo<>+20(SB)/4, $0x40000000
DATA ·ktwo<>+24(SB)/4, $0x40000000
DATA ·ktwo<>+28(SB)/4, $0x40000000
GLOBL ·ktwo<>(SB), RODATA|NOPTR, $32

DATA ·kf127<>+0(SB)/4, $0x42fe0000
DATA ·kf127<>+4(SB)/4, $0x42fe0000
DATA ·kf127<>+8(SB)/4, $0x42fe0000
DATA ·kf127<>+12(SB)/4, $0x42fe0000
DATA ·kf127<>+16(SB)/4, $0x42fe0000
DATA ·kf127<>+20(SB)/4, $0x42fe0000
DATA ·kf127<>+24(SB)/4, $0x42fe0000
DATA ·kf127<>+28(SB)/4, $0x42fe0000
GLOBL ·kf127<>(SB), RODATA|NOPTR, $32

DATA ·khi<>+0(SB)/4, $0x42b17218
DATA ·khi<>+4(SB)/4, $0x42b17218
DATA ·khi<>+8(SB)/4, $0x42b17218
DATA ·khi<>+12(SB)/4, $0x42b17218
DATA ·khi<>+16(SB)/4, $0x42b17218
DATA ·khi<>+20(SB)/4, $0x42b17218
DATA ·khi<>+24(SB)/4, $0x42b17218
DATA ·khi<>+28(SB)/4, $0x42b17218
GLOBL ·khi<>(SB), RODATA|NOPTR, $32

DATA ·klo<>+0(SB)/4, $0xc2aeac4f
DATA ·klo<>+4(SB)/4, $0xc2aeac4f
DATA ·klo<>+8(SB)/4, $0xc2aeac4f
DATA ·klo<>+12(SB)/4, $0xc2aeac4f
DATA ·klo<>+16(SB)/4, $0xc2aeac4f
DATA ·klo<>+20(SB)/4, $0xc2aeac4f
DATA ·klo<>+24(SB)/4, $0xc2aeac4f
DATA ·klo<>+28(SB)/4, $0xc2aeac4f
GLOBL ·klo<>(SB), RODATA|NOPTR, $32

DATA ·ktp0<>+0(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+4(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+8(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+12(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+16(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+20(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+24(SB)/4, $0xbbbaf0ea
DATA ·ktp0<>+28(SB)/4, $0xbbbaf0ea
GLOBL ·ktp0<>(SB), RODATA|NOPTR, $32

DATA ·ktp1<>+0(SB)/4, $0x3ca9134e
DATA ·ktp1<>+4(SB)/4, $0x3ca9134e
DATA ·ktp1<>+8(SB)/4, $0x3ca9134e
DATA ·ktp1<>+12(SB)/4, $0x3ca9134e
DATA ·ktp1<>+16(SB)/4, $0x3ca9134e
DATA ·ktp1<>+20(SB)/4, $0x3ca9134e
DATA ·ktp1<>+24(SB)/4, $0x3ca9134e
DATA ·ktp1<>+28(SB)/4, $0x3ca9134e
GLOBL ·ktp1<>(SB), RODATA|NOPTR, $32

DATA ·ktp2<>+0(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+4(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+8(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+12(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+16(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+20(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+24(SB)/4, $0x3d5c1e2d
DATA ·ktp2<>+28(SB)/4, $0x3d5c1e2d
GLOBL ·ktp2<>(SB), RODATA|NOPTR, $32

DATA ·ktp3<>+0(SB)/4, $0x3e088393
DATA ·ktp3<>+4(SB)/4, $0x3e088393
DATA ·ktp3<>+8(SB)/4, $0x3e088393
DATA ·ktp3<>+12(SB)/4, $0x3e088393
DATA ·ktp3<>+16(SB)/4, $0x3e088393
DATA ·ktp3<>+20(SB)/4, $0x3e088393
DATA ·ktp3<>+24(SB)/4, $0x3e088393
DATA ·ktp3<>+28(SB)/4, $0x3e088393
GLOBL ·ktp3<>(SB), RODATA|NOPTR, $32

DATA ·ktp4<>+0(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+4(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+8(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+12(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+16(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+20(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+24(SB)/4, $0x3eaaaa99
DATA ·ktp4<>+28(SB)/4, $0x3eaaaa99
GLOBL ·ktp4<>(SB), RODATA|NOPTR, $32

DATA ·kc0625<>+0(SB)/4, $0x3f200000
DATA ·kc0625<>+4(SB)/4, $0x3f200000
DATA ·kc0625<>+8(SB)/4, $0x3f200000
DATA ·kc0625<>+12(SB)/4, $0x3f200000
DATA ·kc0625<>+16(SB)/4, $0x3f200000
DATA ·kc0625<>+20(SB)/4, $0x3f200000
DATA ·kc0625<>+24(SB)/4, $0x3f200000
DATA ·kc0625<>+28(SB)/4, $0x3f200000
GLOBL ·kc0625<>(SB), RODATA|NOPTR, $32

DATA ·kc44<>+0(SB)/4, $0x42300000
DATA ·kc44<>+4(SB)/4, $0x42300000
DATA ·kc44<>+8(SB)/4, $0x42300000
DATA ·kc44<>+12(SB)/4, $0x42300000
DATA ·kc44<>+16(SB)/4, $0x42300000
DATA ·kc44<>+20(SB)/4, $0x42300000
DATA ·kc44<>+24(SB)/4, $0x42300000
DATA ·kc44<>+28(SB)/4, $0x42300000
GLOBL ·kc44<>(SB), RODATA|NOPTR, $32

DATA ·ki127<>+0(SB)/4, $0x7f
DATA ·ki127<>+4(SB)/4, $0x7f
DATA ·ki127<>+8(SB)/4, $0x7f
DATA ·ki127<>+12(SB)/4, $0x7f
DATA ·ki127<>+16(SB)/4, $0x7f
DATA ·ki127<>+20(SB)/4, $0x7f
DATA ·ki127<>+24(SB)/4, $0x7f
DATA ·ki127<>+28(SB)/4, $0x7f
GLOBL ·ki127<>(SB), RODATA|NOPTR, $32

DATA ·kabsmask<>+0(SB)/4, $0x7fffffff
DATA ·kabsmask<>+4(SB)/4, $0x7fffffff
DATA ·kabsmask<>+8(SB)/4, $0x7fffffff
DATA ·kabsmask<>+12(SB)/4, $0x7fffffff
DATA ·kabsmask<>+16(SB)/4, $0x7fffffff
DATA ·kabsmask<>+20(SB)/4, $0x7fffffff
DATA ·kabsmask<>+24(SB)/4, $0x7fffffff
DATA ·kabsmask<>+28(SB)/4, $0x7fffffff
GLOBL ·kabsmask<>(SB), RODATA|NOPTR, $32

DATA ·ksignmask<>+0(SB)/4, $0x80000000
DATA ·ksignmask<>+4(SB)/4, $0x80000000
DATA ·ksignmask<>+8(SB)/4, $0x80000000
DATA ·ksignmask<>+12(SB)/4, $0x80000000
DATA ·ksignmask<>+16(SB)/4, $0x80000000
DATA ·ksignmask<>+20(SB)/4, $0x80000000
DATA ·ksignmask<>+24(SB)/4, $0x80000000
DATA ·ksignmask<>+28(SB)/4, $0x80000000
GLOBL ·ksignmask<>(SB), RODATA|NOPTR, $32

DATA ·kinf<>+0(SB)/4, $0x7f800000
DATA ·kinf<>+4(SB)/4, $0x7f800000
DATA ·kinf<>+8(SB)/4, $0x7f800000
DATA ·kinf<>+12(SB)/4, $0x7f800000
DATA ·kinf<>+16(SB)/4, $0x7f800000
DATA ·kinf<>+20(SB)/4, $0x7f800000
DATA ·kinf<>+24(SB)/4, $0x7f800000
DATA ·kinf<>+28(SB)/4, $0x7f800000
GLOBL ·kinf<>(SB), RODATA|NOPTR, $32

// EXP32(IN) leaves Exp32 of each lane of IN in Y1 (temporaries Y2-Y5).
#define EXP32(IN) \
	VMULPS    ·klog2e<>(SB), IN, Y2 \
	VROUNDPS  $8, Y2, Y2 \
	VMULPS    ·kln2hi<>(SB), Y2, Y3 \
	VSUBPS    Y3, IN, Y3 \
	VMULPS    ·kln2lo<>(SB), Y2, Y4 \
	VSUBPS    Y4, Y3, Y3 \
	VMULPS    ·kep0<>(SB), Y3, Y4 \
	VADDPS    ·kep1<>(SB), Y4, Y4 \
	VMULPS    Y3, Y4, Y4 \
	VADDPS    ·kep2<>(SB), Y4, Y4 \
	VMULPS    Y3, Y4, Y4 \
	VADDPS    ·kep3<>(SB), Y4, Y4 \
	VMULPS    Y3, Y4, Y4 \
	VADDPS    ·kep4<>(SB), Y4, Y4 \
	VMULPS    Y3, Y4, Y4 \
	VADDPS    ·kep5<>(SB), Y4, Y4 \
	VMULPS    Y3, Y3, Y5 \
	VMULPS    Y5, Y4, Y4 \
	VADDPS    Y3, Y4, Y4 \
	VADDPS    ·kone<>(SB), Y4, Y4 \
	VCMPPS    $0x1e, ·kf127<>(SB), Y2, Y5 \
	VANDPS    ·kone<>(SB), Y5, Y5 \
	VSUBPS    Y5, Y2, Y2 \
	VADDPS    ·kone<>(SB), Y5, Y5 \
	VMULPS    Y5, Y4, Y4 \
	VCVTPS2DQ Y2, Y2 \
	VPADDD    ·ki127<>(SB), Y2, Y2 \
	VPSLLD    $23, Y2, Y2 \
	VMULPS    Y2, Y4, Y1 \
	VCMPPS    $0x1e, ·khi<>(SB), IN, Y5 \
	VMOVUPS   ·kinf<>(SB), Y2 \
	VBLENDVPS Y5, Y2, Y1, Y1 \
	VCMPPS    $0x11, ·klo<>(SB), IN, Y5 \
	VANDNPS   Y1, Y5, Y1 \
	VCMPPS    $0x03, IN, IN, Y5 \
	VBLENDVPS Y5, IN, Y1, Y1

// func sigmoid32AVX2(dst, src *float32, n int)
// n is a positive multiple of 8. dst = 1/(1+e^-x) for x ≥ 0, e^x/(1+e^x)
// otherwise, e = Exp32(-|x|).
TEXT ·sigmoid32AVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS ·kabsmask<>(SB), Y15
	VMOVUPS ·ksignmask<>(SB), Y14
	VMOVUPS ·kone<>(SB), Y13
	VXORPS  Y12, Y12, Y12

sgloop:
	VMOVUPS   (SI), Y0
	VANDPS    Y15, Y0, Y6       // |x|
	VXORPS    Y14, Y6, Y6       // -|x|
	EXP32(Y6)
	VADDPS    Y13, Y1, Y7       // 1 + e
	VCMPPS    $0x1d, Y12, Y0, Y5 // x >= 0 (GE_OQ: NaN fails)
	VBLENDVPS Y5, Y13, Y1, Y8   // x >= 0 ? 1 : e
	VDIVPS    Y7, Y8, Y8
	VMOVUPS   Y8, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNZ       sgloop
	VZEROUPPER
	RET

// func tanh32AVX2(dst, src *float32, n int)
// n is a positive multiple of 8. Both of Tanh32's branches for every
// lane, then the one its |x| picks.
TEXT ·tanh32AVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS ·kabsmask<>(SB), Y15
	VMOVUPS ·ksignmask<>(SB), Y14
	VMOVUPS ·kone<>(SB), Y13

thloop:
	VMOVUPS (SI), Y0
	VANDPS  Y15, Y0, Y6 // a = |x|
	VADDPS  Y6, Y6, Y7  // a + a
	EXP32(Y7)

	// |x| >= 0.625: 1 - 2/(e^2a + 1), with x's sign
	VADDPS  Y13, Y1, Y2
	VMOVUPS ·ktwo<>(SB), Y8
	VDIVPS  Y2, Y8, Y8
	VSUBPS  Y8, Y13, Y8
	VANDPS  Y14, Y0, Y9 // sign of x
	VXORPS  Y9, Y8, Y8

	// |x| < 0.625: the odd polynomial
	VMULPS Y0, Y0, Y2 // z = x·x
	VMULPS ·ktp0<>(SB), Y2, Y3
	VADDPS ·ktp1<>(SB), Y3, Y3
	VMULPS Y2, Y3, Y3
	VSUBPS ·ktp2<>(SB), Y3, Y3
	VMULPS Y2, Y3, Y3
	VADDPS ·ktp3<>(SB), Y3, Y3
	VMULPS Y2, Y3, Y3
	VSUBPS ·ktp4<>(SB), Y3, Y3
	VMULPS Y2, Y3, Y3
	VMULPS Y0, Y3, Y3
	VADDPS Y0, Y3, Y3

	VCMPPS    $0x1d, ·kc0625<>(SB), Y6, Y5 // a >= 0.625
	VBLENDVPS Y5, Y8, Y3, Y3
	VCMPPS    $0x1e, ·kc44<>(SB), Y6, Y5   // a > 44: ±1
	VORPS     Y13, Y9, Y9
	VBLENDVPS Y5, Y9, Y3, Y3
	VMOVUPS   Y3, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNZ       thloop
	VZEROUPPER
	RET

// func exp32AVX2(dst, src *float32, n int)
// n is a positive multiple of 8. dst = Exp32(src), lane by lane.
TEXT ·exp32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

exloop:
	VMOVUPS (SI), Y0
	EXP32(Y0)
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     exloop
	VZEROUPPER
	RET
