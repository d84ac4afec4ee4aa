//go:build cgo

package h5

// The serial HDF5 build of Debian and Ubuntu (package libhdf5-dev) keeps its
// headers and libraries out of the default search paths; these directives
// point at them, so that a plain `go build` works there. Elsewhere (HDF5 in
// /usr or /usr/local, Homebrew) the extra directories are harmless; for an
// HDF5 installed anywhere else, set CGO_CFLAGS=-I<dir>/include and
// CGO_LDFLAGS=-L<dir>/lib.

// #cgo linux,amd64 CFLAGS: -I/usr/include/hdf5/serial
// #cgo linux,amd64 LDFLAGS: -L/usr/lib/x86_64-linux-gnu/hdf5/serial
// #cgo linux,arm64 CFLAGS: -I/usr/include/hdf5/serial
// #cgo linux,arm64 LDFLAGS: -L/usr/lib/aarch64-linux-gnu/hdf5/serial
// #cgo darwin CFLAGS: -I/opt/homebrew/include -I/usr/local/include
// #cgo darwin LDFLAGS: -L/opt/homebrew/lib -L/usr/local/lib
// #cgo LDFLAGS: -lhdf5_hl -lhdf5
// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// hdf5Mu serialises every call into the HDF5 library made by this package:
// the library keeps global state (open-object tables, error stacks) that is
// not safe to touch from two threads at once.
var hdf5Mu sync.Mutex

// lock takes the HDF5 lock and pins the goroutine to its OS thread (the
// error stack of a thread-safe HDF5 build is per thread), and silences the
// library's printing of errors to stderr: errors come back as Go errors.
// Every call into HDF5 happens between lock and unlock.
func lock() {
	hdf5Mu.Lock()
	runtime.LockOSThread()
	C.h5fuel_begin()
}

// unlock undoes lock.
func unlock() {
	C.h5fuel_end()
	runtime.UnlockOSThread()
	hdf5Mu.Unlock()
}

// errHDF5 is wrapped by the errors that come from a failed HDF5 call.
var errHDF5 = errors.New("HDF5 error")

// h5error returns an error for a failed HDF5 call described by what,
// carrying the library's error stack (which it clears). Lock held.
func h5error(what string) error {
	var buf [1024]C.char
	n := C.h5fuel_error_message(&buf[0], C.size_t(len(buf)))
	if n == 0 {
		return fmt.Errorf("%s: %w", what, errHDF5)
	}
	return fmt.Errorf("%s: %w: %s", what, errHDF5, C.GoStringN(&buf[0], C.int(n)))
}

// hid is an HDF5 identifier.
type hid = C.hid_t

// closeID closes an identifier of any kind; 0 and negative ids are
// ignored. Lock held.
func closeID(id hid) {
	if id <= 0 {
		return
	}
	switch C.H5Iget_type(id) {
	case C.H5I_FILE:
		C.H5Fclose(id)
	case C.H5I_GROUP:
		C.H5Gclose(id)
	case C.H5I_DATASET:
		C.H5Dclose(id)
	case C.H5I_DATASPACE:
		C.H5Sclose(id)
	case C.H5I_DATATYPE:
		C.H5Tclose(id)
	case C.H5I_ATTR:
		C.H5Aclose(id)
	case C.H5I_GENPROP_LST:
		C.H5Pclose(id)
	}
}

// cstring is C.CString with the caller freeing it with C.free.
func cstring(s string) *C.char { return C.CString(s) }

func cfree(p *C.char) { C.free(unsafe.Pointer(p)) }

// openObjects is the number of HDF5 objects (files, datasets, groups,
// datatypes, attributes) open in the process. Tests use it to find leaks.
func openObjects() int {
	lock()
	defer unlock()
	return int(C.H5Fget_obj_count(C.H5F_OBJ_ALL, C.H5F_OBJ_ALL))
}
