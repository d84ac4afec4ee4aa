//go:build cgo

package kernels

// #include "gemm_split.h"
import "C"

import "unsafe"

// Split products in two parts run them in one cgo call:
// part 0 on the calling thread, part 1 on a C thread that polls briefly,
// then sleeps, between products (gemm_split.c). Handing part 1 to a Go
// worker instead left the two parts serialized on about one product in
// three (the worker goroutine's wake-up raced the caller's cgo call for
// the Ps): the 784-500-10 MLP's first product took 690 µs where its two
// halves take 513 µs side by side in C; here it takes what C takes.
func gemm2[T float32 | float64](j *gemmJob[T]) {
	m0, n0, a0, b0, c0 := j.part(0, 2)
	m1, n1, a1, b1, c1 := j.part(1, 2)
	var zero T
	_, dbl := any(zero).(float64)
	C.blocks_gemm2(cBool(dbl), cBool(j.tA), cBool(j.tB), C.int(j.k), C.int(j.lda), C.int(j.ldb), C.int(j.n),
		C.int(m0), C.int(n0), first(a0), first(b0), first(c0),
		C.int(m1), C.int(n1), first(a1), first(b1), first(c1))
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// first is the address of s's first element, or nil for an empty part.
func first[T float32 | float64](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// setSpin sets how long the C worker polls before it sleeps
// (CPUSettings.SpinMicros).
func setSpin(us int) { C.blocks_gemm_set_spin(C.int(us)) }
