#include <string.h>
#include "shim.h"

hid_t h5fuel_type(int code) {
	switch (code) {
	case H5FUEL_NATIVE_UINT8:
		return H5T_NATIVE_UINT8;
	case H5FUEL_NATIVE_INT8:
		return H5T_NATIVE_INT8;
	case H5FUEL_NATIVE_INT32:
		return H5T_NATIVE_INT32;
	case H5FUEL_NATIVE_INT64:
		return H5T_NATIVE_INT64;
	case H5FUEL_NATIVE_FLOAT:
		return H5T_NATIVE_FLOAT;
	case H5FUEL_NATIVE_DOUBLE:
		return H5T_NATIVE_DOUBLE;
	case H5FUEL_STD_REF_OBJ:
		return H5T_STD_REF_OBJ;
	case H5FUEL_C_S1:
		return H5T_C_S1;
	case H5FUEL_NATIVE_INT16:
		return H5T_NATIVE_INT16;
	case H5FUEL_NATIVE_HBOOL:
		return H5T_NATIVE_HBOOL;
	case H5FUEL_STD_U8LE:
		return H5T_STD_U8LE;
	case H5FUEL_STD_I16LE:
		return H5T_STD_I16LE;
	case H5FUEL_STD_I32LE:
		return H5T_STD_I32LE;
	case H5FUEL_STD_I64LE:
		return H5T_STD_I64LE;
	case H5FUEL_IEEE_F32LE:
		return H5T_IEEE_F32LE;
	case H5FUEL_IEEE_F64LE:
		return H5T_IEEE_F64LE;
	case H5FUEL_NATIVE_UINT16:
		return H5T_NATIVE_UINT16;
	case H5FUEL_STD_U16LE:
		return H5T_STD_U16LE;
	case H5FUEL_STD_I8LE:
		return H5T_STD_I8LE;
	}
	return -1;
}

static H5E_auto2_t saved_func;
static void *saved_data;

void h5fuel_begin(void) {
	saved_func = NULL;
	saved_data = NULL;
	H5Eget_auto2(H5E_DEFAULT, &saved_func, &saved_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void h5fuel_end(void) {
	H5Eset_auto2(H5E_DEFAULT, saved_func, saved_data);
}

typedef struct {
	char *buf;
	size_t len, used;
	const char *last;
} errwalk;

static void errwalk_put(errwalk *w, const char *s) {
	size_t n;
	if (w->len == 0) {
		return;
	}
	n = strlen(s);
	if (w->used + n >= w->len) {
		n = w->len - 1 - w->used;
	}
	memcpy(w->buf + w->used, s, n);
	w->used += n;
	w->buf[w->used] = 0;
}

static herr_t errwalk_cb(unsigned n, const H5E_error2_t *e, void *data) {
	errwalk *w = data;
	const char *desc = e->desc;
	if (desc == NULL || desc[0] == 0) {
		desc = e->func_name;
	}
	if (desc == NULL) {
		return 0;
	}
	// Skip a description repeated from one level to the next.
	if (w->last != NULL && strcmp(w->last, desc) == 0) {
		return 0;
	}
	if (n > 0 && w->used > 0) {
		errwalk_put(w, ": ");
	}
	errwalk_put(w, desc);
	w->last = desc;
	return 0;
}

size_t h5fuel_error_message(char *buf, size_t len) {
	errwalk w = {buf, len, 0, NULL};
	if (len > 0) {
		buf[0] = 0;
	}
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, errwalk_cb, &w);
	H5Eclear2(H5E_DEFAULT);
	return w.used;
}

typedef struct {
	const char *name;
	char *path;
	size_t path_len;
	int found;
} scalefind;

static herr_t scalefind_cb(hid_t did, unsigned dim, hid_t scale, void *data) {
	scalefind *f = data;
	char name[256];
	ssize_t n;
	(void)did;
	(void)dim;
	n = H5DSget_scale_name(scale, name, sizeof name);
	if (n < 0) {
		// A scale without a NAME attribute is not the one looked for.
		H5Eclear2(H5E_DEFAULT);
		return 0;
	}
	if (n == 0 || (size_t)n >= sizeof name || strcmp(name, f->name) != 0) {
		return 0;
	}
	if (H5Iget_name(scale, f->path, f->path_len) < 0) {
		return -1;
	}
	f->found = 1;
	return 1;
}

int h5fuel_find_scale(hid_t did, unsigned dim, const char *name, char *path, size_t path_len) {
	scalefind f = {name, path, path_len, 0};
	int n, idx = 0;
	n = H5DSget_num_scales(did, dim);
	if (n < 0) {
		return -1;
	}
	if (n == 0) {
		return 0;
	}
	if (H5DSiterate_scales(did, dim, &idx, scalefind_cb, &f) < 0) {
		return -1;
	}
	return f.found;
}

hid_t h5fuel_deref(hid_t loc, const hobj_ref_t *ref) {
	return H5Rdereference2(loc, H5P_DEFAULT, H5R_OBJECT, ref);
}

int h5fuel_ref_is_null(const hobj_ref_t *ref) {
	return *ref == 0;
}

herr_t h5fuel_ref_create(hobj_ref_t *ref, hid_t loc, const char *path) {
	return H5Rcreate(ref, loc, path, H5R_OBJECT, -1);
}

long long h5fuel_num_attrs(hid_t loc) {
#if H5_VERSION_GE(1, 12, 0)
	H5O_info2_t info;
	if (H5Oget_info3(loc, &info, H5O_INFO_NUM_ATTRS) < 0) {
		return -1;
	}
#else
	H5O_info_t info;
	if (H5Oget_info2(loc, &info, H5O_INFO_NUM_ATTRS) < 0) {
		return -1;
	}
#endif
	return (long long)info.num_attrs;
}

hid_t h5fuel_fapl(int driver) {
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0) {
		return -1;
	}
	herr_t r = 0;
	switch (driver) {
	case H5FUEL_DRIVER_SEC2:
		r = H5Pset_fapl_sec2(fapl);
		break;
	case H5FUEL_DRIVER_STDIO:
		r = H5Pset_fapl_stdio(fapl);
		break;
	case H5FUEL_DRIVER_CORE:
		// The whole file read into memory at open; nothing written back.
		r = H5Pset_fapl_core(fapl, 1 << 20, 0);
		break;
	}
	if (r < 0) {
		H5Pclose(fapl);
		return -1;
	}
	return fapl;
}
