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

// --- What libhdf5 would open besides the file: refused. ---

#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t h5fuel_linfo;
#define h5fuel_lvisit H5Lvisit2
#else
typedef H5L_info_t h5fuel_linfo;
#define h5fuel_lvisit H5Lvisit
#endif

typedef struct {
	char *msg;
	size_t len;
	int found;
} linkfind;

static herr_t linkfind_cb(hid_t g, const char *name, const h5fuel_linfo *info, void *data) {
	linkfind *f = data;
	if (info->type == H5L_TYPE_HARD || info->type == H5L_TYPE_SOFT) {
		return 0;
	}
	f->found = 1;
	if (info->type == H5L_TYPE_EXTERNAL) {
		char val[1024];
		const char *file = NULL, *obj = NULL;
		unsigned flags = 0;
		memset(val, 0, sizeof val);
		if (H5Lget_val(g, name, val, sizeof val - 1, H5P_DEFAULT) >= 0 &&
		    H5Lunpack_elink_val(val, sizeof val - 1, &flags, &file, &obj) >= 0 && file != NULL && obj != NULL) {
			snprintf(f->msg, f->len, "/%s is an external link to %s:%s", name, file, obj);
		} else {
			H5Eclear2(H5E_DEFAULT);
			snprintf(f->msg, f->len, "/%s is an external link", name);
		}
	} else {
		snprintf(f->msg, f->len, "/%s is a user-defined link (type %d)", name, (int)info->type);
	}
	return 1;
}

int h5fuel_check_file(hid_t f, int allow_userblock, char *msg, size_t len) {
	hsize_t ub = 0;
	hid_t fcpl;
	linkfind lf = {msg, len, 0};
	if (!allow_userblock) {
		fcpl = H5Fget_create_plist(f);
		if (fcpl < 0) {
			return -1;
		}
		if (H5Pget_userblock(fcpl, &ub) < 0) {
			H5Pclose(fcpl);
			return -1;
		}
		H5Pclose(fcpl);
		if (ub > 0) {
			snprintf(msg, len, "the HDF5 data starts %llu bytes into the file, after a user block", (unsigned long long)ub);
			return 1;
		}
	}
	if (h5fuel_lvisit(f, H5_INDEX_NAME, H5_ITER_NATIVE, linkfind_cb, &lf) < 0) {
		return -1;
	}
	return lf.found;
}

int h5fuel_check_dataset(hid_t ds, char *msg, size_t len) {
	hid_t dcpl = H5Dget_create_plist(ds);
	int n, r = 0;
	if (dcpl < 0) {
		return -1;
	}
	n = H5Pget_external_count(dcpl);
	if (n < 0) {
		r = -1;
	} else if (n > 0) {
		char name[1024];
		off_t off = 0;
		hsize_t size = 0;
		name[0] = 0;
		if (H5Pget_external(dcpl, 0, sizeof name, name, &off, &size) < 0) {
			H5Eclear2(H5E_DEFAULT);
			snprintf(name, sizeof name, "?");
		}
		name[sizeof name - 1] = 0;
		snprintf(msg, len, "its data lies outside the file, in %s (HDF5 external storage, %d file%s)", name, n, n == 1 ? "" : "s");
		r = 1;
	} else if (H5Pget_layout(dcpl) == H5D_VIRTUAL) {
		size_t count = 0;
		char file[1024], dset[1024];
		file[0] = dset[0] = 0;
		if (H5Pget_virtual_count(dcpl, &count) < 0 || count == 0 ||
		    H5Pget_virtual_filename(dcpl, 0, file, sizeof file) < 0 ||
		    H5Pget_virtual_dsetname(dcpl, 0, dset, sizeof dset) < 0) {
			H5Eclear2(H5E_DEFAULT);
			snprintf(msg, len, "it is a virtual dataset (its data is mapped from other datasets)");
		} else {
			file[sizeof file - 1] = dset[sizeof dset - 1] = 0;
			snprintf(msg, len, "it is a virtual dataset, its data mapped from %s:%s (%zu source%s)", file, dset, count, count == 1 ? "" : "s");
		}
		r = 1;
	}
	H5Pclose(dcpl);
	return r;
}

// The external link class, replaced: traversing an external link fails
// (anywhere: an external link inside a group reached by an object
// reference, which h5fuel_check_file's walk from the root does not see).
// Its query copies the link's value, as the library's own does, so that
// H5Lget_val still names the target.
static hid_t refuse_elink_trav(const char *link_name, hid_t cur_group, const void *lnkdata, size_t lnkdata_size, hid_t lapl_id, hid_t dxpl_id) {
	(void)link_name;
	(void)cur_group;
	(void)lnkdata;
	(void)lnkdata_size;
	(void)lapl_id;
	(void)dxpl_id;
	H5Epush2(H5E_DEFAULT, __FILE__, "refuse_elink_trav", __LINE__, H5E_ERR_CLS, H5E_LINK, H5E_CANTOPENOBJ,
	         "external links are not followed (the file names another file)");
	return -1;
}

static ssize_t copy_elink_query(const char *link_name, const void *lnkdata, size_t lnkdata_size, void *buf, size_t buf_size) {
	(void)link_name;
	if (buf != NULL) {
		memcpy(buf, lnkdata, lnkdata_size < buf_size ? lnkdata_size : buf_size);
	}
	return (ssize_t)lnkdata_size;
}

static int elinks_refused;

herr_t h5fuel_refuse_external_links(void) {
	H5L_class_t cls;
	if (elinks_refused) {
		return 0;
	}
	memset(&cls, 0, sizeof cls);
	cls.version = H5L_LINK_CLASS_T_VERS;
	cls.id = H5L_TYPE_EXTERNAL;
	cls.comment = "external link, not followed (package h5)";
	cls.trav_func = refuse_elink_trav;
	cls.query_func = copy_elink_query;
	if (H5Lregister(&cls) < 0) {
		return -1;
	}
	elinks_refused = 1;
	return 0;
}

// h5fuel_raw_offset is the file offset of a dataset's raw data when the
// rows can be read straight from the file: contiguous layout, data
// allocated, stored exactly as the memory type mt lays it out (the same
// size, byte order and class). -1 otherwise.
long long h5fuel_raw_offset(hid_t ds, hid_t mt) {
	hid_t dcpl = H5Dget_create_plist(ds), ft;
	haddr_t off;
	int ok;
	if (dcpl < 0) {
		H5Eclear2(H5E_DEFAULT);
		return -1;
	}
	ok = H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0 && H5Pget_nfilters(dcpl) == 0;
	H5Pclose(dcpl);
	if (!ok) {
		H5Eclear2(H5E_DEFAULT);
		return -1;
	}
	ft = H5Dget_type(ds);
	if (ft < 0) {
		H5Eclear2(H5E_DEFAULT);
		return -1;
	}
	ok = H5Tequal(ft, mt) > 0;
	H5Tclose(ft);
	if (!ok) {
		H5Eclear2(H5E_DEFAULT);
		return -1;
	}
	off = H5Dget_offset(ds);
	if (off == HADDR_UNDEF || off > (haddr_t)0x7fffffffffffffffLL) {
		H5Eclear2(H5E_DEFAULT);
		return -1;
	}
	return (long long)off;
}
