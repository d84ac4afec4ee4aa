// A small C layer over libhdf5 and libhdf5_hl for package h5: the type
// constants that are macros in hdf5.h (cgo cannot use them), error-stack
// capture, and the H5DS calls that need a C callback.

#ifndef H5FUEL_SHIM_H
#define H5FUEL_SHIM_H

#include <stddef.h>
#include "hdf5.h"
#include "hdf5_hl.h"

// Native memory types, by code (see the h5fuelT* constants).
enum {
	H5FUEL_NATIVE_UINT8 = 0,
	H5FUEL_NATIVE_INT8,
	H5FUEL_NATIVE_INT32,
	H5FUEL_NATIVE_INT64,
	H5FUEL_NATIVE_FLOAT,
	H5FUEL_NATIVE_DOUBLE,
	H5FUEL_STD_REF_OBJ,
	H5FUEL_C_S1,
	H5FUEL_NATIVE_INT16,
	H5FUEL_NATIVE_HBOOL,
	H5FUEL_STD_U8LE,
	H5FUEL_STD_I16LE,
	H5FUEL_STD_I32LE,
	H5FUEL_STD_I64LE,
	H5FUEL_IEEE_F32LE,
	H5FUEL_IEEE_F64LE,
	H5FUEL_NATIVE_UINT16,
	H5FUEL_STD_U16LE,
	H5FUEL_STD_I8LE
};

// h5fuel_type returns the predefined type with the given code (not to be
// closed), or -1.
hid_t h5fuel_type(int code);

// h5fuel_begin turns off the automatic printing of the error stack of the
// calling thread, saving the previous setting; h5fuel_end restores it. Both
// are called with the package lock held, on one locked OS thread.
void h5fuel_begin(void);
void h5fuel_end(void);

// h5fuel_error_message writes a one-line description of the calling
// thread's error stack into buf (innermost cause last) and clears the
// stack. It returns the length written.
size_t h5fuel_error_message(char *buf, size_t len);

// h5fuel_find_scale looks among the dimension scales attached to dimension
// dim of dataset did for one named name. It returns 1 and writes the
// scale's path into path when found, 0 when not, and a negative value on
// error.
int h5fuel_find_scale(hid_t did, unsigned dim, const char *name, char *path, size_t path_len);

// h5fuel_deref opens the object an object reference points to, relative to
// the file (or any object in it) loc.
hid_t h5fuel_deref(hid_t loc, const hobj_ref_t *ref);

// h5fuel_ref_is_null reports whether an object reference is the null
// reference h5py writes for "no object".
int h5fuel_ref_is_null(const hobj_ref_t *ref);

// h5fuel_ref_create writes into ref an object reference to the object at
// path in the file loc.
herr_t h5fuel_ref_create(hobj_ref_t *ref, hid_t loc, const char *path);

// h5fuel_num_attrs returns the number of attributes of an object, or a
// negative value on error.
long long h5fuel_num_attrs(hid_t loc);

// File drivers (h5py's driver argument), for h5fuel_fapl.
enum {
	H5FUEL_DRIVER_DEFAULT = 0,
	H5FUEL_DRIVER_SEC2,
	H5FUEL_DRIVER_STDIO,
	H5FUEL_DRIVER_CORE
};

// h5fuel_fapl returns a new file-access property list using the given
// driver (to be closed with H5Pclose), or -1.
hid_t h5fuel_fapl(int driver);

// h5fuel_check_file looks at an open file for what would make libhdf5
// open other files or read outside the file's own data: a user block
// (unless allow_userblock), and, anywhere under the root group, an
// external or user-defined link. It returns 0 when there is none, 1 when
// there is (msg then says what), and a negative value on error.
int h5fuel_check_file(hid_t f, int allow_userblock, char *msg, size_t len);

// h5fuel_check_dataset is the same for an open dataset: external storage
// or a virtual layout.
int h5fuel_check_dataset(hid_t ds, char *msg, size_t len);

// h5fuel_raw_offset is the file offset of a contiguous dataset's raw data
// stored as memory type mt lays it out, or -1.
long long h5fuel_raw_offset(hid_t ds, hid_t mt);

// h5fuel_refuse_external_links replaces the library's external link
// class, for the whole process, by one whose traversal fails.
herr_t h5fuel_refuse_external_links(void);

#endif
