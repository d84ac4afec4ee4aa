//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef int (*blk_create_t)(void **);
typedef int (*blk_setstream_t)(void *, void *);
typedef int (*blk_sgemm_t)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int, const float *, float *, int);

static void *blk_lib;
static void *blk_handle;
static blk_sgemm_t blk_sgemm_fn;
static blk_setstream_t blk_setstream_fn;

// blk_cublas_open loads cuBLAS from the library named and makes a handle
// bound to stream; 0 on success, else a code saying what failed.
static int blk_cublas_open(const char *name, void *stream) {
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib) return 1;
	blk_create_t create = (blk_create_t)dlsym(lib, "cublasCreate_v2");
	blk_sgemm_fn = (blk_sgemm_t)dlsym(lib, "cublasSgemm_v2");
	blk_setstream_fn = (blk_setstream_t)dlsym(lib, "cublasSetStream_v2");
	if (!create || !blk_sgemm_fn || !blk_setstream_fn) { dlclose(lib); return 2; }
	if (create(&blk_handle) != 0) { dlclose(lib); return 3; }
	if (blk_setstream_fn(blk_handle, stream) != 0) { dlclose(lib); return 4; }
	blk_lib = lib;
	return 0;
}

// blk_sgemm is row-major C (m x n) = op(A) op(B), computed as the
// column-major C^T = op(B)^T op(A)^T.
static int blk_sgemm(int ta, int tb, int m, int n, int k, uintptr_t a, int lda, uintptr_t b, int ldb, uintptr_t c) {
	const float one = 1, zero = 0;
	return blk_sgemm_fn(blk_handle, tb ? 1 : 0, ta ? 1 : 0, n, m, k, &one, (const float *)b, ldb, (const float *)a, lda, &zero, (float *)c, n);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// cublasNames are the sonames tried, newest first.
var cublasNames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

// openCuBLAS loads the first cuBLAS installed and binds it to stream; it
// returns the soname loaded, or "" and why none was.
func openCuBLAS(stream cu.Stream) (string, error) {
	var why []string
	for _, name := range cublasNames {
		cs := C.CString(name)
		rc := C.blk_cublas_open(cs, unsafe.Pointer(stream.C()))
		C.free(unsafe.Pointer(cs))
		if rc == 0 {
			return name, nil
		}
		why = append(why, fmt.Sprintf("%s: %s", name, [...]string{"", "not found", "lacks cublasSgemm_v2", "cublasCreate failed", "cublasSetStream failed"}[rc]))
	}
	return "", fmt.Errorf("no cuBLAS (%v)", why)
}

// sgemm runs one row-major product on cuBLAS.
func sgemm(tA, tB bool, m, n, k int, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int, c cu.DevicePtr) error {
	if rc := C.blk_sgemm(cbool(tA), cbool(tB), C.int(m), C.int(n), C.int(k), C.uintptr_t(a), C.int(lda), C.uintptr_t(b), C.int(ldb), C.uintptr_t(c)); rc != 0 {
		return fmt.Errorf("cublasSgemm: status %d", int(rc))
	}
	return nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
